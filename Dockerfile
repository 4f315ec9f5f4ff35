# Airflow 3.3 with this project installed: the image every Airflow service of docker-compose.yaml runs
# (and the one to push for a KubernetesExecutor deployment: DAGs and plugins are baked in too).
#
#   docker compose build            # or: docker build -t era5etl-airflow:3.3.2 .
#
# The slim base carries Airflow and no providers; we add exactly the ones the stack uses, pinned:
#   postgres (requirements.txt)  the era5_timescale connection
#   celery                       CeleryExecutor, for the `celery` compose profile (workers, flower)
#   fab                          FabAuthManager: the login users airflow-init creates
# Python 3.11 matches constraints.txt, a freeze of a fresh install of requirements.txt on 3.11.
ARG AIRFLOW_VERSION=3.3.2
ARG PYTHON_VERSION=3.11
FROM apache/airflow:slim-${AIRFLOW_VERSION}-python${PYTHON_VERSION} AS airflow

ARG AIRFLOW_VERSION=3.3.2
ARG CELERY_PROVIDER_VERSION=3.26.0
ARG FAB_PROVIDER_VERSION=3.10.2
# Extra pip requirements, e.g. "apache-airflow-providers-cncf-kubernetes==<version>" for an image
# used with KubernetesExecutor (see README: Scaling out).
ARG EXTRA_PIP_REQUIREMENTS=""

# Shared storage mount points, owned by airflow (uid 50000, gid 0, group-writable as the official image
# does): a fresh named volume takes the ownership of the directory it is mounted over.
USER root
RUN mkdir -p /opt/airflow/staging /opt/airflow/validation \
 && chown -R airflow:0 /opt/airflow/staging /opt/airflow/validation \
 && chmod -R g+rwX /opt/airflow/staging /opt/airflow/validation
USER airflow

COPY --chown=airflow:0 constraints.txt pyproject.toml /opt/era5etl/
COPY --chown=airflow:0 include /opt/era5etl/include
# apache-airflow pinned on the same line, as Airflow's image docs advise, so pip never swaps it. The
# pipeline is installed as a package (built into a wheel, not editable: docs/install.md), its schema SQL
# inside it; the celery extra is the CeleryExecutor's provider, every version from constraints.txt.
RUN pip install --no-cache-dir -c /opt/era5etl/constraints.txt \
        "apache-airflow==${AIRFLOW_VERSION}" \
        "/opt/era5etl[celery,statsd]" \
        "apache-airflow-providers-fab==${FAB_PROVIDER_VERSION}" \
        ${EXTRA_PIP_REQUIREMENTS}

COPY --chown=airflow:0 dags /opt/airflow/dags
COPY --chown=airflow:0 plugins /opt/airflow/plugins

ENV ERA5_STAGING_DIR=/opt/airflow/staging \
    ERA5_VALIDATION_DIR=/opt/airflow/validation \
    GX_ANALYTICS_ENABLED=False

# The local CDS emulator (tools/localcds) on top of the image above, for the compose file's local-cds
# profile only: the Airflow services run the `airflow` target, which carries the pipeline and none of
# the tools. localcds needs nothing beyond the pipeline's requirements (numpy, netCDF4).
FROM airflow AS localcds
COPY --chown=airflow:0 tools /opt/era5etl/tools
RUN pip install --no-cache-dir --no-deps /opt/era5etl/tools
