"""With ``ERA5_CATCHUP=true`` the schedule catches up month by month from the start month, on a running Airflow.

A stack of its own (``tests/e2e/stack.py``), started as a user starts a new installation: with
``ERA5_START_MONTH`` two months before the last published one and catch-up on (it is off by default:
see ``test_first_start.py`` for a backfill that loads nothing else). Unpausing the DAG is all it
takes: the scheduler creates one ``scheduled`` run per month since then, each named by its month
(``scheduled__YYYY-MM-01...``) with exactly that month as its data interval; each published month is
loaded and validated exactly, and every later month (the month under way, and in a month's first
days also the month before it, which the CDS has not published yet) has a run whose fetch waits,
deferred, for its publication.

The months come from the clock when the test starts and from the product's own publication rule
(:func:`era5etl.pipeline.schedule.publication_target`), so the test passes on every day of the month
(docs/testing.md: the suite at a chosen date, under libfaketime).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from era5etl.core.months import Month
from era5etl.pipeline.schedule import publication_target
from tests.e2e.stack import AirflowStack, running_stack

pytestmark = pytest.mark.e2e

# How long the test runs at most, the stack's start included: a boundary (a month begins, a month is
# published) inside it would change the answer while the test waits for it.
HORIZON = timedelta(minutes=15)


@dataclass(frozen=True)
class Calendar:
    """The months a catch-up from ``loaded[0]`` meets at one moment: published, and still waiting."""

    loaded: list[Month]  # the last published month and the two before it
    waiting: list[Month]  # every month after them up to the month under way: not published yet

    @classmethod
    def at(cls, now: datetime, delay: timedelta | None = None) -> Calendar:
        under_way = Month.of(now)
        last = under_way.plus(-1)
        while publication_target(last, delay) > now:
            last = last.plus(-1)
        waiting = [last.plus(n) for n in range(1, 12) if last.plus(n).start <= under_way.start]
        return cls([last.plus(-2), last.plus(-1), last], waiting)

    @staticmethod
    def next_boundary(now: datetime, delay: timedelta | None = None) -> datetime:
        """The next moment the answer of :meth:`at` changes: a month begins or one is published."""
        under_way = Month.of(now)
        moments = [under_way.end, *(publication_target(under_way.plus(n), delay) for n in (-2, -1, 0))]
        return min(m for m in moments if m > now)


def _settled_clock() -> datetime:
    """Now, once no boundary falls within the test's horizon (it waits out one that does: at most
    the horizon, a quarter of an hour a month)."""
    now = datetime.now(UTC)
    boundary = Calendar.next_boundary(now)
    if boundary - now < HORIZON:
        time.sleep((boundary - now).total_seconds() + 1)
        now = datetime.now(UTC)
    return now


@pytest.mark.parametrize(("now", "loaded", "waiting"), [
    # The 1st and the 3rd: last month is not published yet (its end plus ERA5_PUBLICATION_DELAY, 6 days).
    (datetime(2027, 1, 1, 0, 5, tzinfo=UTC), ["2026-09", "2026-10", "2026-11"], ["2026-12", "2027-01"]),
    (datetime(2027, 3, 3, 12, tzinfo=UTC), ["2026-11", "2026-12", "2027-01"], ["2027-02", "2027-03"]),
    (datetime(2027, 3, 7, 0, 0, tzinfo=UTC), ["2026-12", "2027-01", "2027-02"], ["2027-03"]),
    (datetime(2027, 2, 28, 23, tzinfo=UTC), ["2026-11", "2026-12", "2027-01"], ["2027-02"]),
])
def test_the_calendar_follows_the_publication_rule(now: datetime, loaded: list[str], waiting: list[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ERA5_PUBLICATION_DELAY", raising=False)
    calendar = Calendar.at(now)
    assert ([str(m) for m in calendar.loaded], [str(m) for m in calendar.waiting]) == (loaded, waiting)


@pytest.fixture(scope="module")
def catchup(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[tuple[AirflowStack, Calendar]]:
    calendar = Calendar.at(_settled_clock())
    with running_stack(request, tmp_path_factory, ERA5_START_MONTH=str(calendar.loaded[0]),
                       ERA5_CATCHUP="true") as stack:
        yield stack, calendar


def test_the_schedule_catches_up_month_by_month_from_the_start_month(
        catchup: tuple[AirflowStack, Calendar]) -> None:
    stack, calendar = catchup
    assert stack.is_paused() and stack.runs() == {}  # a new installation: nothing runs until unpaused
    stack.unpause()
    runs = stack.wait_runs([str(m) for m in calendar.loaded], {"success"}, timeout=420)
    assert {r["run_type"] for r in runs.values()} == {"scheduled"}, runs
    for m in calendar.loaded:
        run = runs[str(m)]
        assert run["dag_run_id"] == f"scheduled__{m.start.isoformat()}", run
        assert (run["data_interval_start"][:10], run["data_interval_end"][:10]) == (
            m.start.date().isoformat(), m.end.date().isoformat()), run
        # Every task ran (a run whose tasks were left out would succeed too, with nothing loaded).
        tis = stack.task_instances(run["dag_run_id"])
        assert {t: ti["state"] for t, ti in tis.items()} == {t: "success" for t in (
            "fetch", "stage", "load", "validate")}, tis
        stack.assert_month_exact(str(m))
    # The months not yet published: each has its run (named by it) whose fetch waits for publication.
    stack.wait_runs([str(m) for m in calendar.waiting], {"running"}, timeout=120)
    runs = stack.runs()
    assert set(runs) == {str(m) for m in [*calendar.loaded, *calendar.waiting]}, runs
    for m in calendar.waiting:
        assert runs[str(m)]["state"] == "running", runs[str(m)]
        waiting = stack.wait_for(
            f"the fetch of {m} deferred", lambda m=m: _deferred(stack, runs[str(m)]["dag_run_id"]),
            timeout=120, interval=1.0)
        assert waiting == {"fetch": "deferred", "stage": None, "load": None, "validate": None}, waiting
        assert stack.rows(str(m)) == (0, 0)


def _deferred(stack: AirflowStack, run_id: str) -> dict[str, str | None] | None:
    states = {t: ti["state"] for t, ti in stack.task_instances(run_id).items()}
    return states if states.get("fetch") == "deferred" else None
