"""The `era5_monthly` DAG, defined in the installed package: copy this file into a DAGs folder."""
from era5etl.airflow.dags.era5_monthly import dag as dag
