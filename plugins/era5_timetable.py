"""The monthly timetable plugin, defined in the installed package: copy this file into a plugins folder."""
from era5etl.airflow.plugins.era5_timetable import Era5TimetablePlugin as Era5TimetablePlugin
