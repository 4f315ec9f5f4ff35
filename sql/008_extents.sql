-- The box of the grid points each weather table holds: the union of every load's, as lattice ids
-- (north and south from the lowest and highest id) and longitude columns (west and east), written by
-- the loader before it writes a row. A place's read finds the loaded box in this one row: the
-- monthly rollup it was computed from holds a million rows a month at global breadth.
CREATE TABLE IF NOT EXISTS era5_extents (
    table_name   text        PRIMARY KEY,
    first_id     integer     NOT NULL,
    last_id      integer     NOT NULL,
    first_column integer     NOT NULL,
    last_column  integer     NOT NULL,
    updated_at   timestamptz NOT NULL DEFAULT now()
);
