-- The columnstore layout of a weather hypertable (and of its rollups, with bucket for time);
-- applied by db.ensure_schema when the server's TimescaleDB licence is the Community one (the
-- Apache-licensed build has no columnstore and keeps the row store with per-chunk indexes).
-- TimescaleDB's hypercore API (2.18 and later): enable_columnstore, segmentby, orderby.
-- The layout is one of db.layout's (docs/table.md, "Where the rows live"):
--   tiles: segmentby tile (32 neighbouring grid points, era5etl.core.tiles), orderby location_id, time:
--          a place decodes its own tile's batches; an hour's map decodes a day of each tile;
--   time:  no segmentby, orderby time, location_id: a batch holds one hour's neighbours (tables made
--          before the tiles; ERA5_LAYOUT=time).
-- The orderby columns carry min/max metadata per batch, so reads decompress only the batches that can
-- hold what they ask for.
ALTER TABLE {table} SET (
    timescaledb.enable_columnstore = true,
    timescaledb.segmentby = {segmentby},
    timescaledb.orderby = {orderby}
);
