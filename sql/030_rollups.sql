-- A weather table's daily and monthly rollups as TimescaleDB continuous aggregates (Community
-- licence); applied by db.ensure_schema when the rollups do not exist yet. The query is
-- sql/rollup_select.sql. Both aggregate the hypertable itself: a monthly aggregate on the daily one
-- (hierarchical) would refresh faster, but it stops `DROP TABLE <table> CASCADE` (the daily view
-- cannot be dropped while the monthly one's internal views depend on it), and its means would weigh
-- days rather than hours.
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
