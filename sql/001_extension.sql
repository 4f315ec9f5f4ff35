-- TimescaleDB provides the hypertable; the Apache-licensed build is enough (no compression needed).
CREATE EXTENSION IF NOT EXISTS timescaledb;
