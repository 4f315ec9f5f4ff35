#!/usr/bin/env bash
# Run tests with the clock at a chosen moment: scripts/test-at.sh 'YYYY-MM-DD HH:MM' [pytest args].
#
# libfaketime (Debian's faketime, installed here on first use) shifts the wall clock of pytest and of
# every process it starts (Airflow's components, their tasks, the local CDS) by one fixed offset, so
# they agree with each other and their clocks run on; monotonic clocks are left alone. The local
# server (started before, in its chroot) keeps the real clock, as a database on another host would.
# docs/testing.md: the tests that read the date, run on the 1st, the 3rd and the 28th of a month.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: scripts/test-at.sh 'YYYY-MM-DD HH:MM' [pytest args]" >&2; exit 2; }
target=$(date -u -d "$1" +%s) || { echo "error: not a date: $1" >&2; exit 2; }
shift
lib=/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1
if [ ! -e "$lib" ]; then
  echo "installing Debian's faketime (libfaketime) for the clock"
  apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q faketime >/dev/null
fi
scripts/setup.sh --dev >/dev/null
offset=$((target - $(date -u +%s)))
sign=+
[ $offset -lt 0 ] && sign=- && offset=$((-offset))
echo "the clock at $(date -u -d "@$target" '+%Y-%m-%d %H:%M UTC') (real time ${sign}${offset} s)"
export FAKETIME="${sign}${offset}" DONT_FAKE_MONOTONIC=1 LD_PRELOAD="$lib"
exec .venv/bin/python -m pytest "$@"
