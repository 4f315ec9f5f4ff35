#!/usr/bin/env bash
# The main job, from nothing: set up, then load one month of ERA5 (small default area) from the local
# CDS server into the local TimescaleDB, validate it, and show the figures. Run it twice: the second
# run replaces the month and the row count stays the same.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
month=${1:-2024-01}
.venv/bin/python -m era5etl run-month "$month" --local-cds
.venv/bin/python -m era5etl status
