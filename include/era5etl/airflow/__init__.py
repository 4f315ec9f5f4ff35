"""The only place the core meets Airflow: task callables, connections, and the DAG's settings."""
