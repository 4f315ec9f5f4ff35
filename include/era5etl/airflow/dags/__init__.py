"""The DAGs, defined in the package so an installed wheel carries them.

A DAGs folder needs only a file that imports one (the repository's ``dags/*.py``): Airflow's DagBag
collects the DAG objects a parsed file's globals hold, and names the file it parsed as their fileloc.
"""
