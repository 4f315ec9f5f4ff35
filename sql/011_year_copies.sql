-- The finished years of a weather table copied place-major (era5etl.load.years): <table>_years holds
-- each year's rows segmented by location_id and ordered by time, a calendar year a chunk, so one
-- place's year is a few batches of its own rows (docs/table.md#a-places-decades-the-copy-of-years).
-- A row here says the copy of that year is whole and current: the loader deletes it, in the
-- transaction that rewrites any of the year's rows, and reads take the year from the table again.
CREATE TABLE IF NOT EXISTS era5_year_copies (
    table_name text             NOT NULL,
    year       integer          NOT NULL,
    rows       bigint           NOT NULL,
    seconds    double precision NOT NULL,
    copied_at  timestamptz      NOT NULL DEFAULT now(),
    PRIMARY KEY (table_name, year)
);
