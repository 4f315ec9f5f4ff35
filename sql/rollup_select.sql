-- The rollup of a weather table: one row per grid point and UTC bucket (a day or a month),
-- the columns the reads (era5etl.read.series) and the HTTP API serve. Not applied on its own: it is
-- the query of both continuous aggregates (sql/030_rollups.sql, Community licence) and what the
-- Apache licence's plain tables (sql/031_rollup_tables.sql) are refilled from for a month's window,
-- so the two licences compute the same numbers from one definition.
-- Every value is computed in float8 and stored as float4, as the table holds them: wind speed is
-- sqrt(u^2 + v^2) of each hour, then aggregated; sums and means skip NULL hours, and `hours` counts
-- the hourly rows aggregated. Rows without a location_id (a grid off the 0.25 degree lattice) have no
-- grid point to roll up to and are left out.
SELECT time_bucket({width}::interval, time) AS bucket,
       location_id,
       min(latitude) AS latitude,
       min(longitude) AS longitude,
       count(*) AS hours,
       min(temperature_2m) AS temperature_2m_min,
       max(temperature_2m) AS temperature_2m_max,
       avg(temperature_2m::float8)::float4 AS temperature_2m_mean,
       min(sqrt(zonal_wind_10m::float8 ^ 2 + meridional_wind_10m::float8 ^ 2))::float4 AS wind_speed_10m_min,
       max(sqrt(zonal_wind_10m::float8 ^ 2 + meridional_wind_10m::float8 ^ 2))::float4 AS wind_speed_10m_max,
       avg(sqrt(zonal_wind_10m::float8 ^ 2 + meridional_wind_10m::float8 ^ 2))::float4 AS wind_speed_10m_mean,
       sum(total_precipitation::float8)::float4 AS total_precipitation_sum,
       sum(snowfall::float8)::float4 AS snowfall_sum,
       avg(total_cloud_cover::float8)::float4 AS total_cloud_cover_mean
FROM {table}
WHERE location_id IS NOT NULL{window}
GROUP BY time_bucket({width}::interval, time), location_id
