-- The columnstore layout of a weather hypertable (and of its rollups, with bucket for time);
-- applied by db.ensure_schema when the server's TimescaleDB licence is the Community one (the
-- Apache-licensed build has no columnstore and keeps the row store with per-chunk indexes).
-- TimescaleDB's hypercore API (2.18 and later): enable_columnstore, segmentby, orderby.
-- No segmentby, rows ordered by (time, location_id), the order a CDS file is read in: a global day
-- takes 10.75 bytes a row (docs/benchmarks.md); segmenting by location_id would make batches
-- of 24 rows in a daily chunk. The orderby columns carry min/max metadata per batch, so an hour's
-- slice and one place's history each decompress only the batches that can hold them.
ALTER TABLE {table} SET (
    timescaledb.enable_columnstore = true,
    timescaledb.segmentby = '',
    timescaledb.orderby = {orderby}
);
