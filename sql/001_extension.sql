-- TimescaleDB: hypertables on every licence; the columnstore (sql/020_columnstore.sql) with the
-- Community licence ('timescale'), which the local server runs.
CREATE EXTENSION IF NOT EXISTS timescaledb;
