-- A weather table's daily and monthly rollups: hypertables the loader writes (era5etl.load.rollup)
-- in the same transaction as the hourly rows they aggregate, so a reload replaces both and nothing
-- is ever refreshed. Applied by era5etl.db.rollups.ensure_rollups when they do not exist; their
-- value columns (<column>_<aggregate>, era5etl.core.rollups) are added by code, one per aggregate of
-- each data column the table has, like the table's own columns.
-- Both are hypertables on bucket; in the columnstore (Community licence) with the hourly table's
-- layout: no segmentby, ordered by (bucket, location_id), the order the loader sends. The daily
-- rollup's chunks mirror the hourly table's (made with them, merged with them); the monthly one has
-- chunks of ten years (a point's series over decades plans a few chunks).
CREATE TABLE {daily} (
    bucket      timestamptz NOT NULL,
    location_id int         NOT NULL,
    latitude    real,        -- no longitude: location_id fixes it (era5etl.core.rollups.KEY_COLUMNS)
    hours       int         NOT NULL
);
CREATE TABLE {monthly} (LIKE {daily});
