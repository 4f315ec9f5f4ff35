#!/usr/bin/env bash
# Run tests with the clock at a chosen moment: scripts/test-at.sh 'YYYY-MM-DD HH:MM' [pytest args].
#
# Every Python process of the run (pytest, the local CDS, Airflow's components and their tasks) loads
# tests/clock/sitecustomize.py, which moves its wall clock by one offset with time-machine, so they
# agree with each other and their clocks run on; monotonic clocks and timeouts are left alone. The
# local server (started before, in its chroot) keeps the real clock. Airflow's scheduler creates a
# month's run once the database's now() has passed the month's start, so the moment must be in the
# real clock's month: there the runs the database lets it create are those the moved clock expects.
# docs/testing.md: the tests that read the date, run on the 1st, the 3rd and the 28th of a month.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: scripts/test-at.sh 'YYYY-MM-DD HH:MM' [pytest args]" >&2; exit 2; }
target=$(date -u -d "$1" +%s) || { echo "error: not a date: $1" >&2; exit 2; }
shift
if [ "$(date -u -d "@$target" +%Y-%m)" != "$(date -u +%Y-%m)" ]; then
  echo "error: $(date -u -d "@$target" +%Y-%m-%d) is not in this month ($(date -u +%Y-%m)): the database's clock" \
       "is not moved, and Airflow creates runs by it; choose a day of this month" >&2
  exit 2
fi
scripts/setup.sh --dev >/dev/null
offset=$((target - $(date -u +%s)))
echo "the clock at $(date -u -d "@$target" '+%Y-%m-%d %H:%M UTC') (real time $(printf '%+d' "$offset") s)"
export TEST_CLOCK_OFFSET_S="$offset" PYTHONPATH="$PWD/tests/clock${PYTHONPATH:+:$PYTHONPATH}"
exec .venv/bin/python -m pytest "$@"
