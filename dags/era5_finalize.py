"""The `era5_finalize` DAG, defined in the installed package: copy this file into a DAGs folder."""
from era5etl.airflow.dags.era5_finalize import dag as dag
