"""The monthly schedule, named by the month it loads.

Airflow's ``CronDataIntervalTimetable("0 0 1 * *")`` gives each run the right data interval (the
whole month) but makes it *run after* the interval's end, and Airflow names runs and shows them in
the grid and the DAG list by that moment: ``backfill__2022-02-01T00:00:00+00:00`` loaded January
2022. :class:`MonthTimetable` keeps the interval and moves ``run_after`` to the month's first
instant, so every run id (``scheduled__``/``backfill__2022-01-01T00:00:00+00:00``), the grid and
*Latest Run* read as the month loaded. Nothing is loaded early for it: the DAG's first task,
``fetch``, defers until the month is published (its end plus ``ERA5_PUBLICATION_DELAY``).

Without catch-up (``ERA5_CATCHUP=false``, the default) the schedule starts at the month under way
(which waits for its publication) instead of Airflow's "latest complete interval": unpausing the
DAG to let a backfill run loads no month outside the backfill's range.

A custom timetable must be registered by a plugin (``plugins/era5_timetable.py``) for the
scheduler to read it back.
"""

# Imports inside functions: the DAG files import this package at every parse, and the core (numpy,
# psycopg, the pipeline) loads only in a task or a trigger's thread (Airflow's best practice on top-
# level code).

from __future__ import annotations

from typing import Any

from airflow.timetables.base import DagRunInfo, DataInterval, TimeRestriction
from airflow.timetables.interval import CronDataIntervalTimetable

MONTHLY_CRON = "0 0 1 * *"


class MonthTimetable(CronDataIntervalTimetable):
    """One run per calendar month; its data interval is the month and it is named by the month's start."""

    description = "one run per calendar month, named by its first day (the month it loads)"

    def __init__(self, cron: str = MONTHLY_CRON, timezone: Any = "UTC") -> None:
        super().__init__(cron, timezone)

    @property
    def summary(self) -> str:
        return "monthly (runs named by the month they load)"

    def next_dagrun_info(self, *, last_automated_data_interval: DataInterval | None,
                         restriction: TimeRestriction) -> DagRunInfo | None:
        if not restriction.catchup:
            # Airflow's default would be the latest *complete* month: one month outside any backfill
            # range loaded on unpause. Here the schedule starts at the month under way instead.
            under_way = self._align_to_prev(self._now())
            earliest = restriction.earliest
            restriction = TimeRestriction(max(earliest, under_way) if earliest else under_way,
                                          restriction.latest, catchup=True)
        info = super().next_dagrun_info(last_automated_data_interval=last_automated_data_interval,
                                        restriction=restriction)
        if info is None or info.data_interval is None:
            return info
        return DagRunInfo(run_after=info.data_interval.start, data_interval=info.data_interval)

    def infer_manual_data_interval(self, *, run_after: Any) -> DataInterval:
        # A manual run at a date loads the month that date is in (Airflow's default: the month before).
        start = self._align_to_prev(run_after)
        return DataInterval(start=start, end=self._get_next(start))

    @staticmethod
    def _now() -> Any:
        from airflow._shared.timezones.timezone import coerce_datetime, utcnow

        return coerce_datetime(utcnow())
