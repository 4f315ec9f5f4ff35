-- The weather table of the "trillion rows of weather data into TimescaleDB" benchmark, so figures compare.
-- Units: temperature in degC, precipitation and snowfall in mm, longitude in (-180, 180].
CREATE TABLE IF NOT EXISTS {table} (
    time                timestamptz NOT NULL,
    location_id         int,
    latitude            float4,
    longitude           float4,
    temperature_2m      float4,
    zonal_wind_10m      float4,
    meridional_wind_10m float4,
    total_cloud_cover   float4,
    total_precipitation float4,
    snowfall            float4
);
-- The hypertable is made by db.ensure_schema (create_hypertable with create_default_indexes off),
-- so the indexes below are the only ones, each kept for a read people make:
-- a time slice (a whole area at one hour) ...
CREATE INDEX IF NOT EXISTS {time_index} ON {table} (time DESC);
-- ... and one place's history (a grid point over years).
CREATE INDEX IF NOT EXISTS {location_index} ON {table} (location_id, time DESC);
