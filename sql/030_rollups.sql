-- A weather table's daily and monthly rollups as TimescaleDB continuous aggregates (Community
-- licence); applied by db.ensure_schema when the rollups do not exist yet. The daily one aggregates
-- the hypertable (sql/rollup_select.sql); the monthly one aggregates the daily one (hierarchical,
-- sql/rollup_monthly.sql): 31 rows a point instead of 744, which at global scale is the difference
-- between seconds and a quarter of an hour a month. The hierarchy stops a plain
-- `DROP TABLE <table> CASCADE` (the daily view cannot go while the monthly one's internal views
-- depend on it): db.drop_table drops the monthly, the daily, then the table.
-- WITH NO DATA and no refresh policy: the pipeline's rollup step refreshes exactly the month it has
-- validated (read.rollups.refresh), so the rollups never run ahead of what was proven.
-- materialized_only: a read sees what was refreshed, as on the Apache licence's plain tables.
-- Chunks a year (daily) and ten years (monthly): a point's series over decades plans a chunk per
-- year, not one per ten days (TimescaleDB's default, ten times the hypertable's 1-day interval).
CREATE MATERIALIZED VIEW {daily}
    WITH (timescaledb.continuous, timescaledb.materialized_only = true, timescaledb.chunk_interval = '365 days')
    AS {daily_select}
    WITH NO DATA;
CREATE MATERIALIZED VIEW {monthly}
    WITH (timescaledb.continuous, timescaledb.materialized_only = true, timescaledb.chunk_interval = '3650 days')
    AS {monthly_select}
    WITH NO DATA;
-- TimescaleDB indexes (location_id, bucket) and (bucket) itself. The loaded area's west and east
-- edges are read from the monthly rollup (read.points): an index makes them two index lookups.
CREATE INDEX ON {monthly} (longitude);
