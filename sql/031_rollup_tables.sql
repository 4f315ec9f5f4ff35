-- A weather table's daily and monthly rollups as plain tables, where TimescaleDB's licence is the
-- Apache one (no continuous aggregates); applied by db.ensure_schema when the rollups do not exist
-- yet. The same columns as the continuous aggregates of sql/030_rollups.sql; the pipeline's rollup
-- step refills a month's window from sql/rollup_select.sql (DELETE + INSERT in one transaction).
CREATE TABLE {daily} (
    bucket                  timestamptz NOT NULL,
    location_id             int         NOT NULL,
    latitude                float4,
    longitude               float4,
    hours                   bigint      NOT NULL,
    temperature_2m_min      float4,
    temperature_2m_max      float4,
    temperature_2m_mean     float4,
    wind_speed_10m_min      float4,
    wind_speed_10m_max      float4,
    wind_speed_10m_mean     float4,
    total_precipitation_sum float4,
    snowfall_sum            float4,
    total_cloud_cover_mean  float4,
    PRIMARY KEY (location_id, bucket)
);
CREATE INDEX ON {daily} (bucket);
CREATE TABLE {monthly} (LIKE {daily} INCLUDING ALL);
CREATE INDEX ON {monthly} (longitude);
