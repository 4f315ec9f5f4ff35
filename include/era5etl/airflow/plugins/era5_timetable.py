"""Registers the DAG's monthly timetable: Airflow reads a custom timetable back only from a plugin."""

from __future__ import annotations

from airflow.plugins_manager import AirflowPlugin

from era5etl.airflow.timetable import MonthTimetable


class Era5TimetablePlugin(AirflowPlugin):
    name = "era5_timetable"
    timetables = [MonthTimetable]  # noqa: RUF012  (as AirflowPlugin declares it)
