-- Validation: where each month's latest Great Expectations result is kept, and the per-day profile
-- the suite is evaluated on.

-- The ledger learns when a month was first seen, when it was last validated, which checks failed,
-- and the folder holding the GX result (result.json) and its Data Docs (docs/index.html).
ALTER TABLE era5_months
    ADD COLUMN IF NOT EXISTS created_at        timestamptz NOT NULL DEFAULT now(),
    ADD COLUMN IF NOT EXISTS validated_at      timestamptz,
    ADD COLUMN IF NOT EXISTS validation_failed text[],
    ADD COLUMN IF NOT EXISTS validation_path   text;

-- One row per day of a validated month: aggregates the database computed over that day's chunk.
-- The GX suite reads these rows, never the weather rows, so its cost does not grow with the month;
-- keeping them (per validation run) leaves the evidence behind each verdict in the database.
CREATE TABLE IF NOT EXISTS era5_validation_days (
    validation_id   uuid        NOT NULL,
    table_name      text        NOT NULL,
    month           date        NOT NULL,
    area            text        NOT NULL,
    grid            text        NOT NULL,
    day             date        NOT NULL,
    rows            bigint      NOT NULL,
    -- rows of the day sharing a (time, location_id) with an earlier row
    duplicates      bigint      NOT NULL,
    -- rows with a NULL time anywhere in the table (a table-wide fact, repeated on every day)
    null_time       bigint      NOT NULL,
    null_location_id bigint     NOT NULL,
    -- rows whose location_id is not a grid point of the area, or not the id of the row's own coordinates
    outside_area    bigint      NOT NULL,
    -- per variable: min and max over finite values, and the count of NaN / +-Infinity values
    temperature_2m_min       float4, temperature_2m_max       float4, temperature_2m_nonfinite      bigint NOT NULL,
    zonal_wind_10m_min       float4, zonal_wind_10m_max       float4, zonal_wind_10m_nonfinite      bigint NOT NULL,
    meridional_wind_10m_min  float4, meridional_wind_10m_max  float4, meridional_wind_10m_nonfinite bigint NOT NULL,
    total_cloud_cover_min    float4, total_cloud_cover_max    float4, total_cloud_cover_nonfinite   bigint NOT NULL,
    total_precipitation_min  float4, total_precipitation_max  float4, total_precipitation_nonfinite bigint NOT NULL,
    snowfall_min             float4, snowfall_max             float4, snowfall_nonfinite            bigint NOT NULL,
    seconds         double precision NOT NULL,
    profiled_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (validation_id, day)
);
CREATE INDEX IF NOT EXISTS era5_validation_days_month_idx
    ON era5_validation_days (table_name, month, area, profiled_at);
-- A table without the six (ERA5 on pressure levels: its own columns, each added as above) profiles
-- none of them: their counts are NULL in its rows. Earlier rows keep the counts they have.
ALTER TABLE era5_validation_days
    ALTER COLUMN temperature_2m_nonfinite DROP NOT NULL,
    ALTER COLUMN zonal_wind_10m_nonfinite DROP NOT NULL,
    ALTER COLUMN meridional_wind_10m_nonfinite DROP NOT NULL,
    ALTER COLUMN total_cloud_cover_nonfinite DROP NOT NULL,
    ALTER COLUMN total_precipitation_nonfinite DROP NOT NULL,
    ALTER COLUMN snowfall_nonfinite DROP NOT NULL;
