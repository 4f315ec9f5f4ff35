"""The `era5_monthly` DAGs (one per ERA5 dataset), defined in the installed package: copy this into a DAGs folder."""
from era5etl.airflow.dags.era5_monthly import *  # noqa: F403 (era5_monthly, era5_monthly_land, ...: one a dataset)
