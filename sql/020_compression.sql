-- Compression (columnstore) settings for a weather hypertable; applied by compress.enable only when
-- the server's TimescaleDB licence allows compression (the Apache-licensed build refuses them).
-- Segmenting by location_id keeps one place's history together in each compressed batch, so a
-- point-over-years read decompresses only that place; ordering by time inside a segment keeps
-- time-range filters cheap.
ALTER TABLE {table} SET (
    timescaledb.compress,
    timescaledb.compress_segmentby = 'location_id',
    timescaledb.compress_orderby = 'time DESC'
);
