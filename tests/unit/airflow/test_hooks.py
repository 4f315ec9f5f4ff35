"""The Airflow connections through hooks: the Postgres connection's extras reach libpq, the CDS
connection's URL and key reach the client, and without a connection the environment is used."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from urllib.parse import parse_qs, urlsplit

import psycopg

from era5etl.airflow.hooks import CdsHook, connection_url


def _in_a_process(code: str, **env: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, **env}, capture_output=True, text=True,
                         timeout=120, check=True)
    return out.stdout.strip().splitlines()[-1]


def test_the_postgres_connection_and_its_extras_become_the_url_libpq_reads() -> None:
    conn = {"conn_type": "postgres", "host": "db.example", "login": "era5", "password": "p@ss/word", "port": 5433,
            "schema": "weather", "extra": {"sslmode": "require", "application_name": "era5etl", "cursor": "dictcursor"}}
    url = _in_a_process("from era5etl.airflow.hooks import database_url; print(database_url())",
                        AIRFLOW_CONN_ERA5_TIMESCALE=json.dumps(conn))
    parts = urlsplit(url)
    assert (parts.hostname, parts.port, parts.username, parts.path) == ("db.example", 5433, "era5", "/weather")
    assert parse_qs(parts.query) == {"sslmode": ["require"], "application_name": ["era5etl"]}  # not the hook's own
    info = psycopg.conninfo.conninfo_to_dict(url)
    assert info["password"] == "p@ss/word" and info["sslmode"] == "require"


def test_without_the_connection_the_environment_names_the_database() -> None:
    url = _in_a_process("from era5etl.airflow.hooks import database_url; print(database_url())",
                        ERA5_DATABASE_URL="postgresql://someone@elsewhere/era5")
    assert url == "postgresql://someone@elsewhere/era5"


def test_the_cds_connection_as_a_url_or_as_parts() -> None:
    from airflow.sdk import Connection

    whole = Connection(conn_id="era5_cds", conn_type="http", host="https://cds.climate.copernicus.eu/api",
                       password="abc-123")
    parts = Connection.from_uri("http://:key-1@localhost:8765/api", conn_id="era5_cds")
    assert (CdsHook.credentials_from_connection(whole).url, CdsHook.credentials_from_connection(whole).key) == (
        "https://cds.climate.copernicus.eu/api", "abc-123")
    assert CdsHook.credentials_from_connection(parts).url == "http://localhost:8765/api"
    code = "from era5etl.airflow.hooks import CdsHook; c = CdsHook().get_credentials(); print(c.url, c.key)"
    got = _in_a_process(code, AIRFLOW_CONN_ERA5_CDS="http://:key-2@cds.local:8765/api")
    assert got == "http://cds.local:8765/api key-2"


def test_connection_url_leaves_out_what_is_not_given() -> None:
    from airflow.sdk import Connection

    assert connection_url(Connection(conn_id="x", conn_type="postgres", host="h", schema="db")) == "postgresql://h/db"
