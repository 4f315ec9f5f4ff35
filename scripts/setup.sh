#!/usr/bin/env bash
# Set up this checkout from nothing: the virtualenv, the local TimescaleDB, Airflow's metadata database.
# Idempotent: a second run reuses what is there. `--dev` adds the test tools and a headless browser.
set -euo pipefail
cd "$(dirname "$0")/.."
dev=0
[ "${1:-}" = "--dev" ] && dev=1

python=${PYTHON:-python3}
if ! "$python" -c 'import sys; sys.exit(sys.version_info[:2] < (3, 11))'; then
  echo "error: Python 3.11 or newer is needed ($python is $("$python" --version 2>&1))" >&2
  exit 1
fi
[ -x .venv/bin/python ] || "$python" -m venv .venv

# What a deployment installs is requirements.txt (the package with its extras: the CeleryExecutor,
# StatsD and the FAB auth manager the compose stack logs in with); every version comes from
# constraints.txt. --dev adds the test tools (requirements-dev.txt).
reqs=()
[ $dev = 1 ] && reqs=(-r requirements-dev.txt)
stamp=.venv/.installed-$(cat requirements.txt requirements-dev.txt constraints.txt pyproject.toml \
  tools/requirements.txt tools/pyproject.toml | sha256sum | cut -c1-16)
# The dev install is a superset: after it, the plain one has nothing to add.
if [ ! -e "$stamp-$dev" ] && [ ! -e "$stamp-1" ]; then
  echo "installing Python packages (a few minutes the first time)"
  # requirements.txt with the package editable here, for development (a deployment installs it as
  # written: docs/install.md): its other lines and the package's dependencies with its extras
  # (scripts/dependencies.py, as the Dockerfile does), then the package itself with -e. Beside it the
  # tools the demo and the README's commands use (tools/: the local CDS emulator and the benchmark, with
  # their own requirements; the Airflow image has neither).
  "$python" scripts/dependencies.py > .venv/era5etl-dependencies.txt
  .venv/bin/pip install -q --disable-pip-version-check -c constraints.txt "${reqs[@]}" -r tools/requirements.txt \
    -r .venv/era5etl-dependencies.txt -e . -e tools
  touch "$stamp-$dev"
fi

if [ $dev = 1 ] && [ ! -x /usr/bin/chromium ]; then
  echo "installing Debian's chromium for the browser tests"
  apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null
fi
if [ $dev = 1 ] && [ ! -x /usr/bin/redis-server ]; then
  echo "installing Debian's redis-server for the CeleryExecutor test (tests/e2e/test_celery.py)"
  apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q redis-server >/dev/null
fi

# The Data view's browser code, pinned by package.json + package-lock.json from the npm registry:
# uPlot (the series charts; the plugin serves it from node_modules, so the page needs no internet)
# always, ESLint (tests/unit/report/test_static_js.py lints the static files) with --dev.
npm_stamp=node_modules/.installed-$(cat package.json package-lock.json | sha256sum | cut -c1-16)
if [ ! -e "$npm_stamp-$dev" ] && [ ! -e "$npm_stamp-1" ]; then
  command -v npm >/dev/null || { echo "error: npm is needed for the Data view's uPlot (apt-get install npm)" >&2; exit 1; }
  echo "installing the Data view's npm packages (package-lock.json)"
  if [ $dev = 1 ]; then npm ci --no-audit --no-fund --loglevel=error; else npm ci --omit=dev --no-audit --no-fund --loglevel=error; fi
  touch "$npm_stamp-$dev"
fi

# The database: ERA5_DATABASE_URL when set, else the local server (installed on first use).
.venv/bin/python -m era5etl db up >/dev/null

# Airflow's home and metadata live in this checkout and on the same server.
eval "$(.venv/bin/python -m era5etl airflow-env)"
mkdir -p "$AIRFLOW_HOME" && chmod 700 "$AIRFLOW_HOME"  # it will hold the generated admin password (docs/install.md)
PATH="$PWD/.venv/bin:$PATH" airflow db migrate >"$AIRFLOW_HOME/db-migrate.log" 2>&1 || {
  tail -30 "$AIRFLOW_HOME/db-migrate.log" >&2
  exit 1
}
# Pools the DAG's tasks run in: CDS fetches per credential, and database writers. Safe to re-run.
PATH="$PWD/.venv/bin:$PATH" airflow pools set era5_cds "${ERA5_CDS_POOL_SLOTS:-4}" \
  "ERA5: CDS fetches per credential (fetch task)" >/dev/null
PATH="$PWD/.venv/bin:$PATH" airflow pools set era5_db "${ERA5_DB_POOL_SLOTS:-2}" \
  "ERA5: TimescaleDB writers (load, validate)" >/dev/null
echo "set up: $(.venv/bin/python -m era5etl db status)"
