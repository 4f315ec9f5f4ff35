"""The ERA5 months dashboard plugin, defined in the installed package: copy this file into a plugins folder."""
from era5etl.airflow.plugins.era5_dashboard import Era5DashboardPlugin as Era5DashboardPlugin
