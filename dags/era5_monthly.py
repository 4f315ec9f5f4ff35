"""The `era5_monthly` DAGs (one per ERA5 dataset), defined in the installed package: copy this into a DAGs folder."""
from era5etl.airflow.dags.era5_monthly import dag as dag, dags as dags

# Each dataset's DAG at module level, where Airflow looks for DAGs: era5_monthly_pressure_levels, ...
globals().update({d.dag_id: d for d in dags.values()})
