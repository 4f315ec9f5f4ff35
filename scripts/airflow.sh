#!/usr/bin/env bash
# Airflow for this checkout, from nothing: set up (as scripts/setup.sh), then start the local CDS and
# Airflow (api-server, scheduler, dag-processor, triggerer) pointed at each other, print the URL and
# the login, and stay in the foreground; Ctrl-C stops everything (or, from another shell,
# `.venv/bin/python -m era5etl airflow down`). Options go to `python -m era5etl airflow up`
# (--port, --cds-port, --home, --real-cds; see --help).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
exec .venv/bin/python -m era5etl airflow up "$@"
