-- The tile of a grid point (era5etl.core.tiles): 32 points with consecutive ids, a strip along a
-- latitude row. A table laid out in tiles is segmented by its tile column, so a place's rows are
-- found through the compressed chunks' index on it: name the tile beside the point,
--   WHERE tile = era5_tile(123456) AND location_id = 123456 AND time >= ... AND time < ...
-- IMMUTABLE, so the planner folds era5_tile(<a constant>) into a constant before it plans the scan.
CREATE OR REPLACE FUNCTION era5_tile(location_id integer) RETURNS integer
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN (location_id - 1) / 32;
