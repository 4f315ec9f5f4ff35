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
-- The hypertable is made by db.ensure_schema (create_hypertable with create_default_indexes off) and
-- has no indexes of its own: the loader builds each chunk's indexes after the chunk's COPY
-- (load.CHUNK_INDEXES: BRIN on time for time slices, B-tree (location_id, time) for one place's
-- history), which costs a fraction of maintaining them row by row.
