"""Pipeline: one month's run through the stages (steps, job), the schedule's policy, ERA5T to final.

No re-exports: the DAG file imports the light policy module at parse time, and this package must
not pull the data libraries in with it.
"""
