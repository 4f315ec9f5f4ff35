"""ERA5 hourly single levels from the Copernicus CDS into TimescaleDB: the core, free of Airflow."""

__version__ = "0.1.0"
