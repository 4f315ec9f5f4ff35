# Airflow with this project installed, for docker-compose.yaml.
FROM apache/airflow:3.3.2-python3.11
COPY --chown=airflow:root requirements.txt constraints.txt pyproject.toml /opt/era5etl/
COPY --chown=airflow:root include /opt/era5etl/include
COPY --chown=airflow:root sql /opt/era5etl/sql
RUN pip install --no-cache-dir -r /opt/era5etl/requirements.txt -e /opt/era5etl
