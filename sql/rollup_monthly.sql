-- The monthly rollup of a weather table, from its daily rollup (sql/rollup_select.sql at '1 day'):
-- one row per grid point and UTC month. The query of the monthly continuous aggregate on the daily
-- one (hierarchical, sql/030_rollups.sql) and what the Apache licence's plain monthly table is
-- refilled from (sql/031_rollup_tables.sql), so both licences compute the same numbers.
-- Why not from the hourly rows: a global month is ~772 million of them, and PostgreSQL's hash
-- aggregation over one global day (24.9M rows) already takes ~30 s here; the daily rollup holds
-- ~32 million rows for that month. Minima, maxima and sums carry over; a mean is the daily means
-- weighted by their hours, in float8, over the days that have one: the hourly mean exactly where a
-- day's hours are all present or all missing, which is how ERA5 downloads are (a variable the
-- download lacks is NULL for every hour).
SELECT time_bucket('1 month'::interval, bucket) AS bucket,
       location_id,
       min(latitude) AS latitude,
       min(longitude) AS longitude,
       sum(hours)::bigint AS hours,
       min(temperature_2m_min) AS temperature_2m_min,
       max(temperature_2m_max) AS temperature_2m_max,
       (sum(temperature_2m_mean::float8 * hours)
        / sum(hours) FILTER (WHERE temperature_2m_mean IS NOT NULL))::float4 AS temperature_2m_mean,
       min(wind_speed_10m_min) AS wind_speed_10m_min,
       max(wind_speed_10m_max) AS wind_speed_10m_max,
       (sum(wind_speed_10m_mean::float8 * hours)
        / sum(hours) FILTER (WHERE wind_speed_10m_mean IS NOT NULL))::float4 AS wind_speed_10m_mean,
       sum(total_precipitation_sum::float8)::float4 AS total_precipitation_sum,
       sum(snowfall_sum::float8)::float4 AS snowfall_sum,
       (sum(total_cloud_cover_mean::float8 * hours)
        / sum(hours) FILTER (WHERE total_cloud_cover_mean IS NOT NULL))::float4 AS total_cloud_cover_mean
FROM {daily}{window}
GROUP BY time_bucket('1 month'::interval, bucket), location_id
