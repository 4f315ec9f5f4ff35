"""The Airflow plugins, defined in the package so an installed wheel carries them.

A plugins folder needs only a file that imports one (the repository's ``plugins/*.py``): Airflow
registers every AirflowPlugin subclass a plugin file's globals hold.
"""
