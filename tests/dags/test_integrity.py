"""The DAGs as Airflow parses them, without a database or a scheduler: the fast layer that runs first.

Shape, schedule, pools, params and docs of both DAGs, and that parsing stays light.
"""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime
from typing import Any

import pytest

from era5etl import settings
from era5etl.core.paths import PROJECT_ROOT

DAG_FILE = PROJECT_ROOT / "dags" / "era5_monthly.py"


@pytest.fixture(scope="module")
def dagbag() -> Any:
    from airflow.dag_processing.dagbag import DagBag

    return DagBag(dag_folder=str(DAG_FILE.parent))


def test_dags_import_without_errors(dagbag: Any) -> None:
    assert dagbag.import_errors == {}
    assert {"era5_monthly", "era5_finalize"} <= set(dagbag.dags)


def test_dag_shape_and_schedule(dagbag: Any) -> None:
    dag = dagbag.dags["era5_monthly"]
    assert [t.task_id for t in dag.topological_sort()] == [
        "fetch", "stage", "load", "validate"]
    assert dag.catchup is settings.load().catchup is False  # ERA5_CATCHUP: off unless asked for
    # The CDS queue per credential and the database's writers are bounded by pools.
    pools = {t.task_id: t.pool for t in dag.tasks}
    assert pools["fetch"] == "era5_cds"
    assert pools["load"] == pools["validate"] == "era5_db"
    # The month waits for publication in its fetch, deferred (tests/dags/test_fetch_waits.py); no task of its own.
    assert not dag.user_defined_macros
    assert dag.max_active_runs == settings.load().max_active_runs
    # Each run's data interval is exactly one calendar month (not the zero-length @monthly one).
    # The timetable as the scheduler holds it (the SDK's is only its definition).
    from airflow.serialization.encoders import coerce_to_core_timetable

    timetable = coerce_to_core_timetable(dag.timetable)
    # A manual run at a date loads the month that date is in.
    interval = timetable.infer_manual_data_interval(run_after=datetime(2024, 3, 15, tzinfo=UTC))
    assert (interval.start, interval.end) == (datetime(2024, 3, 1, tzinfo=UTC), datetime(2024, 4, 1, tzinfo=UTC))
    info = timetable.next_dagrun_info(last_automated_data_interval=None, restriction=_restriction(dag))
    assert info is not None and info.data_interval.start == dag.start_date
    assert set(dag.params.keys()) >= {"month", "area", "grid", "variables", "table", "revision"}


def _month(year: int, month: int) -> Any:
    import pendulum

    return pendulum.datetime(year, month, 1, tz="UTC")


def test_runs_are_named_and_shown_by_the_month_they_load(dagbag: Any) -> None:
    # As the scheduler and `airflow backfill create` see the DAG: read back from its serialized form.
    from airflow.models.dagrun import DagRun
    from airflow.serialization.serialized_objects import DagSerialization
    from airflow.utils.types import DagRunType

    dag = DagSerialization.from_dict(DagSerialization.to_dict(dagbag.dags["era5_monthly"]))
    infos = list(dag.iter_dagrun_infos_between(_month(2022, 1), _month(2022, 3)))
    # A backfill from 2022-01-01 to 2022-03-01: January, February, March, each run after its 1st.
    assert [(i.run_after, i.data_interval and i.data_interval.start, i.data_interval and i.data_interval.end)
            for i in infos] == [
        (_month(2022, m), _month(2022, m), _month(2022, m + 1)) for m in (1, 2, 3)]
    # The backfill's run id (Airflow names a backfill run by its run_after) is the month it loads,
    # and so is the scheduler's (the timetable's own).
    assert DagRun.generate_run_id(run_type=DagRunType.BACKFILL_JOB, logical_date=infos[0].logical_date,
                                  run_after=infos[0].run_after) == "backfill__2022-01-01T00:00:00+00:00"
    assert dag.timetable.generate_run_id(run_type=DagRunType.SCHEDULED, run_after=infos[1].run_after,
                                         data_interval=infos[1].data_interval) == "scheduled__2022-02-01T00:00:00+00:00"


def test_without_catchup_the_schedule_starts_at_the_month_under_way(dagbag: Any) -> None:
    from airflow.serialization.encoders import coerce_to_core_timetable
    from airflow.timetables.base import TimeRestriction

    from era5etl.core.months import Month

    timetable = coerce_to_core_timetable(dagbag.dags["era5_monthly"].timetable)
    now = Month.of(datetime.now(UTC))
    # A start month years back: with catch-up, its first month; without, the month under way (which
    # waits for publication), never the latest complete month Airflow's own timetable would pick.
    for catchup, first in ((True, _month(2020, 1)), (False, now.start)):
        info = timetable.next_dagrun_info(last_automated_data_interval=None,
                                          restriction=TimeRestriction(_month(2020, 1), None, catchup))
        assert info is not None and (info.run_after, info.data_interval.start) == (first, first), (catchup, info)
    # After a run of an old month (a backfill does not count: this is the last scheduled run), the next
    # scheduled run without catch-up is still the month under way.
    last = timetable.infer_manual_data_interval(run_after=_month(2021, 5))
    info = timetable.next_dagrun_info(last_automated_data_interval=last,
                                      restriction=TimeRestriction(_month(2020, 1), None, False))
    assert info is not None and info.data_interval.start == now.start


def test_finalize_dag_triggers_monthly_runs(dagbag: Any) -> None:
    dag = dagbag.dags["era5_finalize"]
    assert [t.task_id for t in dag.topological_sort()] == ["find", "reload"]
    # Each month's own dataset's DAG, named by `find` (era5_monthly for single levels).
    assert "trigger_dag_id" not in dag.get_task("reload").partial_kwargs
    from era5etl.airflow.tasks import monthly_dag_id

    assert monthly_dag_id("single-levels") == "era5_monthly"
    assert monthly_dag_id("pressure-levels") == "era5_monthly_pressure_levels" in dagbag.dags
    assert dag.max_active_runs == 1


def _restriction(dag: Any) -> Any:
    from airflow.timetables.base import TimeRestriction

    return TimeRestriction(earliest=dag.start_date, latest=None, catchup=True)


def test_dag_file_imports_no_heavy_core_at_parse_time() -> None:
    # The scheduler parses DAG files often: the core's data libraries must load only inside tasks.
    code = (
        "import sys, runpy; runpy.run_path(sys.argv[1]);"
        "print([m for m in ('xarray', 'great_expectations', 'netCDF4', 'cdsapi') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code, str(DAG_FILE)], capture_output=True, text=True,
                         env=os.environ.copy(), check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"




@pytest.mark.parametrize("dag_id", ["era5_monthly", "era5_finalize"])
def test_every_dag_and_task_says_what_it_does(dagbag: Any, dag_id: str) -> None:
    dag = dagbag.dags[dag_id]
    assert dag.doc_md and dag.doc_md.strip()
    undocumented = [t.task_id for t in dag.tasks if not (t.doc_md or "").strip()]
    assert undocumented == []


def test_the_trigger_form_titles_and_checks_each_param(dagbag: Any) -> None:
    import jsonschema

    params = dagbag.dags["era5_monthly"].params
    for name in ("month", "area", "grid", "variables", "table", "revision"):
        assert params.get_param(name).schema.get("title"), name

    def valid(name: str, value: Any) -> bool:
        try:
            jsonschema.validate(value, params.get_param(name).schema)
        except jsonschema.ValidationError:
            return False
        return True

    assert valid("month", "2024-03") and valid("month", None)
    assert not valid("month", "2024-13") and not valid("month", "March")
    assert valid("area", "50/5/45/10") and valid("area", "-10.5/-20/-30.25/40")
    assert not valid("area", "50/5/45") and not valid("area", "north")
    assert valid("grid", "0.5") and not valid("grid", "half")
    assert valid("variables", ["2m_temperature"]) and not valid("variables", ["sea_ice"])
    assert valid("table", "weather") and not valid("table", "weather; drop table x")


def test_validate_updates_the_tables_asset_and_the_example_schedules_on_it(dagbag: Any) -> None:
    from airflow.sdk import Asset, AssetAlias

    from era5etl.airflow.assets import VALIDATED, table_asset

    validate = dagbag.dags["era5_monthly"].get_task("validate")
    # The outlet is the alias: the run's table (a param) names the Asset only at run time.
    assert validate.outlets == [VALIDATED] and isinstance(VALIDATED, AssetAlias)
    assert [t.task_id for t in dagbag.dags["era5_monthly"].tasks if t.outlets] == ["validate"]
    assert table_asset("weather") == Asset("era5://weather")
    downstream = dagbag.dags["era5_downstream_example"]
    assert downstream.timetable.asset_condition.objects == (table_asset(settings.load().table),)
    assert [t.task_id for t in downstream.tasks] == ["landed_months"]


def test_a_dag_per_dataset_from_the_one_factory(dagbag: Any) -> None:
    from era5etl.core.datasets import DATASETS, PRESSURE_LEVELS

    assert {"era5_monthly", "era5_monthly_pressure_levels"} <= set(dagbag.dags)
    assert len([d for d in dagbag.dags if d.startswith("era5_monthly")]) == len(DATASETS)
    single, pl = dagbag.dags["era5_monthly"], dagbag.dags["era5_monthly_pressure_levels"]
    assert [t.task_id for t in pl.topological_sort()] == [t.task_id for t in single.topological_sort()]
    assert single.params["dataset"] == "single-levels" and "levels" not in single.params
    assert pl.params["dataset"] == "pressure-levels"
    assert pl.params["levels"] == list(PRESSURE_LEVELS.levels)
    assert pl.params["variables"] == list(PRESSURE_LEVELS.default_variables)
    assert pl.params["table"] == "weather_pressure_levels" or "ERA5_TABLE" in __import__("os").environ


def test_era5_land_has_its_dag_from_the_factory(dagbag: Any) -> None:
    from era5etl.core.datasets import LAND

    land, single = dagbag.dags["era5_monthly_land"], dagbag.dags["era5_monthly"]
    assert [t.task_id for t in land.topological_sort()] == [t.task_id for t in single.topological_sort()]
    assert land.params["dataset"] == "land" and "levels" not in land.params
    assert land.params["variables"] == list(LAND.default_variables)
    assert land.params["table"] == "weather_land" or "ERA5_TABLE" in __import__("os").environ


@pytest.mark.parametrize(("name", "dag_id"), [("monthly-means", "era5_monthly_monthly_means"),
                                              ("monthly-means-by-hour", "era5_monthly_monthly_means_by_hour"),
                                              ("land-monthly-means", "era5_monthly_land_monthly_means")])
def test_each_monthly_means_dataset_has_its_dag_from_the_factory(dagbag: Any, name: str, dag_id: str) -> None:
    from era5etl.airflow.timetable import MonthTimetable
    from era5etl.core.datasets import DATASETS
    from era5etl.core.months import Month
    from era5etl.pipeline.schedule import publication_target

    dag, single = dagbag.dags[dag_id], dagbag.dags["era5_monthly"]
    assert [t.task_id for t in dag.topological_sort()] == [t.task_id for t in single.topological_sort()]
    assert isinstance(dag.timetable, MonthTimetable)  # a run a month, named by the month it loads
    assert dag.params["dataset"] == name and "levels" not in dag.params
    assert dag.params["variables"] == list(DATASETS[name].default_variables)
    assert dag.params["table"] == f"weather_{name.replace('-', '_')}" or "ERA5_TABLE" in __import__("os").environ
    # Its fetch waits for the month's publication: about five days after the month (ERA5_PUBLICATION_DELAY).
    late = publication_target(Month(2024, 1)) - Month(2024, 1).end
    assert 5 <= late.days <= 7
