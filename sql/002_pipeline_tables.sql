-- The pipeline's own bookkeeping, shared by every weather table it loads.

-- One row per month, table and area: the truth about what that month holds.
CREATE TABLE IF NOT EXISTS era5_months (
    table_name   text        NOT NULL,
    month        date        NOT NULL,
    area         text        NOT NULL,
    grid         text        NOT NULL,
    state        text        NOT NULL CONSTRAINT era5_months_state_check CHECK (state IN
                     ('pending', 'fetching', 'staged', 'loading', 'loaded', 'validating', 'validated', 'failed')),
    rows         bigint,
    expected_rows bigint,
    expver       text[],
    request_hash text,
    run_id       text,
    error        text,
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_name, month, area)
);

-- One row per task of every run: the figures the throughput questions are asked of.
CREATE TABLE IF NOT EXISTS era5_metrics (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    recorded_at  timestamptz NOT NULL DEFAULT now(),
    run_id       text        NOT NULL,
    task         text        NOT NULL,
    month        date        NOT NULL,
    table_name   text        NOT NULL,
    area         text        NOT NULL,
    rows         bigint      NOT NULL,
    bytes        bigint      NOT NULL,
    seconds      double precision NOT NULL,
    rows_per_s   double precision,
    peak_rss_mb  double precision,
    detail       jsonb       NOT NULL DEFAULT jsonb_build_object()
);
CREATE INDEX IF NOT EXISTS era5_metrics_month_idx ON era5_metrics (table_name, month, recorded_at);

-- Which ERA5 collection a month was loaded from, and on which pressure levels (NULL: a dataset
-- without levels): the table's name alone does not say it. Months loaded before datasets existed
-- are single levels.
ALTER TABLE era5_months
    ADD COLUMN IF NOT EXISTS dataset text NOT NULL DEFAULT 'single-levels',
    ADD COLUMN IF NOT EXISTS levels  smallint[];

-- 'validating': the month's validation under way, held by its run (track.liveness), so a run killed
-- mid-validation is seen as gone instead of leaving the month 'loaded'. Ledgers made before it get
-- the state added to their check.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = 'era5_months_state_check'
                   AND conrelid = 'era5_months'::regclass AND pg_get_constraintdef(oid) LIKE '%validating%') THEN
        ALTER TABLE era5_months DROP CONSTRAINT IF EXISTS era5_months_state_check;
        ALTER TABLE era5_months ADD CONSTRAINT era5_months_state_check CHECK (state IN
            ('pending', 'fetching', 'staged', 'loading', 'loaded', 'validating', 'validated', 'failed'));
    END IF;
END
$$;
