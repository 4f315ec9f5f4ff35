-- Every job submitted to a CDS, one row per (service, exact part request): a retried or restarted
-- fetch finds its job here and re-attaches instead of submitting again. Never holds the API key.
CREATE TABLE IF NOT EXISTS era5_cds_jobs (
    api_url          text        NOT NULL,  -- which service (the URL only)
    request_hash     text        NOT NULL,  -- the part's own request
    month_hash       text        NOT NULL,  -- the month's request: its staging folder
    month            date        NOT NULL,
    part             integer     NOT NULL,
    parts            integer     NOT NULL,
    dataset          text        NOT NULL,
    request          jsonb       NOT NULL,
    cost             double precision,
    job_id           text,                   -- the CDS request id; NULL until the CDS gave one
    state            text        NOT NULL CHECK (state IN
                         ('submitting', 'accepted', 'running', 'successful', 'downloaded',
                          'failed', 'rejected', 'lost', 'expired')),
    submissions      integer     NOT NULL DEFAULT 0,
    previous_job_ids text[]      NOT NULL DEFAULT '{}',
    error            text,
    submitted_at     timestamptz,
    started_at       timestamptz,            -- as the CDS reports it: the job left the queue
    finished_at      timestamptz,
    downloaded_at    timestamptz,
    queue_seconds    double precision,       -- started - created, the CDS's own clock
    run_seconds      double precision,       -- finished - started
    download_seconds double precision,       -- our transfer of the asset, retries included
    bytes            bigint,
    checksum         text,
    file             text,
    updated_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (api_url, request_hash)
);
CREATE INDEX IF NOT EXISTS era5_cds_jobs_state_idx ON era5_cds_jobs (api_url, state, updated_at);
CREATE INDEX IF NOT EXISTS era5_cds_jobs_month_idx ON era5_cds_jobs (month_hash);
