#!/usr/bin/env bash
# Set up everything the tests need, then run them all: unit, integration (real TimescaleDB, real
# cdsapi against the local CDS server), the DAG integrity test and a full DAG run.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --dev
exec .venv/bin/python -m pytest "$@"
