"""The DAG tests read the checkout's plugins (the monthly timetable is registered by one), set before Airflow loads."""

from __future__ import annotations

import os

from era5etl.core.paths import PROJECT_ROOT

os.environ["AIRFLOW__CORE__PLUGINS_FOLDER"] = str(PROJECT_ROOT / "plugins")
os.environ["AIRFLOW__CORE__DAGS_FOLDER"] = str(PROJECT_ROOT / "dags")
