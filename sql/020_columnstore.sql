-- The columnstore layout of a weather hypertable; applied by db.ensure_schema when the server's
-- TimescaleDB licence is the Community one (the Apache-licensed build has no columnstore and keeps
-- the row store with per-chunk indexes).
-- Measured (README, "The columnstore layout"): no segmentby and rows ordered by (time, location_id),
-- the order a CDS file is read in, keeps a global day at ~13 bytes a row; segmenting by location_id
-- made batches of 24 rows in daily chunks and cost 8x more. The orderby columns carry min/max
-- metadata per batch, so an hour's slice and one place's history each decompress only the batches
-- that can hold them.
ALTER TABLE {table} SET (
    timescaledb.compress,
    timescaledb.compress_segmentby = '',
    timescaledb.compress_orderby = 'time, location_id'
);
