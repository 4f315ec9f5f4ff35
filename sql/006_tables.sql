-- The weather tables the pipeline made (or recognised as its own): the only tables it writes to.
-- A load into a table that exists and is not here is refused unless the table is recognisably the
-- pipeline's from before this registry (a ledger row, or a weather hypertable with its rollups):
-- those are registered on first sight (era5etl.db.registry).
CREATE TABLE IF NOT EXISTS era5_tables (
    table_name text        PRIMARY KEY,
    dataset    text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    created_by text        NOT NULL
);
