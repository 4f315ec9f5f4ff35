# Airflow 3.3 with this project installed: the image every Airflow service of docker-compose.yaml runs
# (and the one to push for a KubernetesExecutor deployment: DAGs and plugins are baked in too).
#
#   docker compose build            # or: docker build -t era5etl-airflow .
#
# uPlot for the Data view's series charts and world-atlas's country outlines, from the npm registry as package-lock.json pins it (what
# scripts/setup.sh does on a checkout); only its dist/ files go into the image, served by the plugin.
FROM node:20-slim AS web
WORKDIR /web
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund


# The slim base carries Airflow and no providers. Every Python package comes from requirements.txt (the
# package with its extras: celery for the `celery` compose profile, statsd for the metrics, fab for
# FabAuthManager's login users; the postgres provider, for the era5_timescale connection, is a plain
# dependency), each at the version constraints.txt pins, the one place versions are written, apache-airflow
# among them. No ARG repeats a pin. The base tag is the one other version written here:
# tests/integration/deploy/test_dockerfile.py checks it against constraints.txt's apache-airflow pin (the
# one requirements.txt installs), and Python 3.11 against the Python constraints.txt was frozen on.
FROM apache/airflow:slim-3.3.2-python3.11 AS airflow

# Extra pip requirements, e.g. "apache-airflow-providers-cncf-kubernetes==<version>" for an image
# used with KubernetesExecutor (see docs/scaling.md).
ARG EXTRA_PIP_REQUIREMENTS=""

# Shared storage mount points, owned by airflow (uid 50000, gid 0, group-writable as the official image
# does): a fresh named volume takes the ownership of the directory it is mounted over.
USER root
RUN mkdir -p /opt/airflow/staging /opt/airflow/validation \
 && chown -R airflow:0 /opt/airflow/staging /opt/airflow/validation \
 && chmod -R g+rwX /opt/airflow/staging /opt/airflow/validation
USER airflow

# The dependencies first, from the files that name and pin them and nothing else: an edit of the code
# reuses this layer (the large install) instead of rebuilding it. requirements.txt says which extras,
# pyproject.toml names the dependencies (dependencies.py expands the package's line of requirements.txt
# into them), constraints.txt pins them, apache-airflow with them so pip never swaps the base image's.
COPY --chown=airflow:0 constraints.txt requirements.txt pyproject.toml scripts/dependencies.py /opt/era5etl/
RUN python /opt/era5etl/dependencies.py > /tmp/era5etl-dependencies.txt \
 && pip install --no-cache-dir -c /opt/era5etl/constraints.txt -r /tmp/era5etl-dependencies.txt ${EXTRA_PIP_REQUIREMENTS}

# Then the project (the code and the schema of the top-level sql/, which the wheel carries as
# era5etl.sql), from requirements.txt, whose package line is relative to the folder it runs in. Not
# editable: the image runs the installed copy. --no-deps: the layer above has every dependency, and a
# code edit must not resolve again.
COPY --chown=airflow:0 include /opt/era5etl/include
COPY --chown=airflow:0 sql /opt/era5etl/sql
RUN cd /opt/era5etl && pip install --no-cache-dir --no-deps -r requirements.txt

COPY --from=web --chown=airflow:0 /web/node_modules/uplot/dist /opt/era5etl/node_modules/uplot/dist
# Natural Earth's admin-0 country outlines (1:50m) for --region and its land (the coastlines of the
# atlas's maps) (era5etl.read.regions).
COPY --from=web --chown=airflow:0 /web/node_modules/world-atlas/countries-50m.json \
     /web/node_modules/world-atlas/land-50m.json /opt/era5etl/node_modules/world-atlas/
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
