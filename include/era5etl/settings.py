"""Every ``ERA5_*`` setting the pipeline reads: one typed model, validated when it is read.

``Settings()`` reads the environment (pydantic-settings); ``load()`` does the same and turns a bad
value into an :class:`InputError` naming the variable, its value and what it must be, so a run
refuses a wrong setting at its start instead of deep inside a step. The configuration table of
docs/configuration.md is this model's (``python -m era5etl settings --markdown`` prints it; a test compares).

Not here: the CDS client's own ``CDSAPI_URL``/``CDSAPI_KEY`` (``fetch.Credentials``: the cdsapi
convention), Airflow's ``AIRFLOW__*`` and the compose file's own variables (``.env.example``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any, Literal, Self, cast

from pydantic import BeforeValidator, Field, ValidationError, ValidationInfo, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from era5etl.core.datasets import SINGLE_LEVELS, by_name
from era5etl.core.errors import InputError
from era5etl.core.grid import Area, Grid
from era5etl.core.months import Month
from era5etl.core.names import check_table, table_problem
from era5etl.core.paths import PROJECT_ROOT
from era5etl.core.variables import DEFAULT_VARIABLES, parse_list

ENV_PREFIX = "ERA5_"
# A 5 x 5 degree box over the Alps: 441 grid points, ~330k rows a month, a first run in seconds.
DEFAULT_AREA = "50/5/45/10"
# A chunk made for a whole year or month holds at most this many rows (points x hours).
DEFAULT_CHUNK_ROWS = 25_000_000
CompressionMode = Literal["auto", "off"]
# What the CDS is asked to deliver (fetch.request: the request's data_format, its hash, its cost limit).
DataFormat = Literal["netcdf", "grib"]
# Which staged downloads outlive their month's validation (fetch.retention).
KeepDownloads = Literal["none", "failed", "all"]
# The columnstore layout of a new table (db.layout).
TableLayout = Literal["auto", "tiles", "time"]
# Whether a validated month that makes its year whole copies the year place-major (load.years).
YearCopies = Literal["auto", "off"]


def _parsed(kind: Any) -> BeforeValidator:
    """A value given as text (the environment) parsed by the type's own ``parse``; typed values pass."""
    return BeforeValidator(lambda v: kind.parse(v) if isinstance(v, str | float | int) else v)


def _names(v: Any) -> Any:
    return tuple(x.strip() for x in v.split(",") if x.strip()) if isinstance(v, str) else v


def _lowercase(v: Any) -> Any:
    return v.strip().lower() if isinstance(v, str) else v


def _shown(text: str) -> dict[str, Any]:
    """How the docs show a default that depends on the checkout or the machine."""
    return {"shown": text}


class Settings(BaseSettings):
    """The pipeline's settings, from ``ERA5_<NAME>`` environment variables (docs/configuration.md)."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, frozen=True, extra="ignore",
                                      arbitrary_types_allowed=True, validate_default=True)

    # --- the database ----------------------------------------------------------------------------
    database_url: str | None = Field(
        None, description="a PostgreSQL server with TimescaleDB; nothing is provisioned when set",
        json_schema_extra=_shown("the local server"))
    reader_database_url: str | None = Field(
        None, description="the HTTP reads' connection: a role that may only SELECT the pipeline's tables "
                          "(docs/configuration.md); default: the local server's era5_reader, else ERA5_DATABASE_URL",
        json_schema_extra=_shown("era5_reader on the local server"))
    table: str = Field(
        "weather",
        description="the hypertable (created if missing): letters, digits and _, at most 55 characters, not "
                    "schema-qualified, not a system or bookkeeping name (docs/configuration.md); "
                    "`weather_<dataset>` (`weather_pressure_levels`) for a dataset other than single-levels when unset")
    home: Path = Field(
        PROJECT_ROOT / ".local", json_schema_extra=_shown(".local"),
        description="where the checkout's TimescaleDB (its copy of the server image and its data) lives")
    timescaledb_license: Literal["timescale", "apache"] = Field(
        "timescale", description="the local server's TimescaleDB licence: `timescale` (Community: the "
                                 "columnstore) or `apache` (row store only)")
    system_dir: Path = Field(
        Path("/var/cache/era5etl"),
        description="where the machine's server image is built once and kept, shared by every checkout")
    timescaledb_source: Path | None = Field(
        None, json_schema_extra=_shown("`../shared/vendor/timescaledb-2.29.2.tar.gz` if present, else "
                                       "downloaded from GitHub"),
        description="the TimescaleDB release archive to build; checked against the release's tree either way")
    debian_mirror: str = Field(
        "http://deb.debian.org/debian", description="the Debian mirror the server image is built from")
    backup_repository: Path | None = Field(
        None, json_schema_extra=_shown("none: no backups, no WAL archived"),
        description="the local server's pgBackRest repository, a folder best on another disk: when set, the server "
                    "archives its WAL there and `db backup` / `db restore` work (docs/operating.md, Backups)")
    backup_retention_full: int = Field(
        2, ge=1, description="full backups pgBackRest keeps in the repository (older ones, and the WAL only they "
                             "need, expire after each backup)")

    # --- what a month loads -----------------------------------------------------------------------
    dataset: Annotated[str, BeforeValidator(_lowercase)] = Field(
        "single-levels", description="the ERA5 collection loaded: `single-levels`, `pressure-levels` (or another "
                                     "of docs/datasets.md); its variables, table and levels default to its own")
    levels: Annotated[tuple[int, ...], NoDecode, BeforeValidator(_names)] = Field(
        (), json_schema_extra=_shown("all 37"),
        description="pressure levels in hPa, comma-separated (`pressure-levels` only; empty: all of them)")
    area: Annotated[Area, NoDecode, _parsed(Area)] = Field(
        Area.parse(DEFAULT_AREA),
        description="N/W/S/E in degrees, edges inclusive (refused if it crosses the antimeridian)")
    grid: Annotated[Grid, NoDecode, BeforeValidator(lambda v: Grid.parse(v, None) if isinstance(v, str | float | int)
                                                    else v)] = Field(
        Grid(), description="grid step in degrees, a multiple of the dataset's native step (0.25; ERA5-Land 0.1)")
    variables: Annotated[tuple[str, ...], NoDecode, BeforeValidator(_names)] = Field(
        DEFAULT_VARIABLES, json_schema_extra=_shown("all six"), description="comma-separated CDS names")
    data_format: DataFormat = Field(
        "netcdf", description="what the CDS is asked for: `netcdf` or `grib` (GRIB1, ERA5's native format: "
                              "larger requests allowed, so fewer jobs); another format is another request, "
                              "with its own staging folder and CDS job; both are staged and loaded alike")
    staging_dir: Path = Field(
        PROJECT_ROOT / ".local" / "staging", json_schema_extra=_shown(".local/staging"),
        description="where downloads are kept, by month and request hash")
    keep_downloads: Annotated[KeepDownloads, BeforeValidator(_lowercase)] = Field(
        "none", description="which downloads stay in staging once their month is validated: `none` (each is "
                            "removed after its month's validation, passed or failed), `failed` (kept when the "
                            "validation fails, removed once the month validates), `all` (never removed); the "
                            "manifest, checksums and CDS request stay either way (docs/staging.md)")
    validation_dir: Path = Field(
        PROJECT_ROOT / ".local" / "validation", json_schema_extra=_shown(".local/validation"),
        description="where each month's Great Expectations result and Data Docs are kept")
    chunk_rows: int = Field(
        DEFAULT_CHUNK_ROWS, ge=0,
        description="the most rows (grid points x hours) a chunk made for a whole calendar year or month may "
                    "hold: spans that fit get one chunk from the start; a larger month loads a day per "
                    "transaction and is merged once validated (`0`: always the table's interval, a day)")
    compression: CompressionMode = Field(
        "auto", description="`auto`: finish validated months in the columnstore (compress what is left, merge "
                            "the month's chunks) when the licence allows, else say so and go on; `off`")
    layout: Annotated[TableLayout, BeforeValidator(_lowercase)] = Field(
        "auto", description="the columnstore layout a new table is made with: `tiles` (segmented by a tile of 32 "
                            "neighbouring grid points: a place reads its own rows), `time` (batches of one hour's "
                            "neighbours: maps and wide loads fastest), or `auto`: tiles when the first load's area "
                            "fits a month in one chunk (ERA5_CHUNK_ROWS), else time; an existing table keeps its own, "
                            "`table relayout` moves it into tiles (docs/table.md)")
    year_copies: Annotated[YearCopies, BeforeValidator(_lowercase)] = Field(
        "auto", description="`auto`: when a validated month makes its year whole (its twelve months validated) on a "
                            "table that holds the year in more than one chunk, copy the year place-major into "
                            "`<table>_years` (its days into `<table>_daily_years`) so a place's decades read its "
                            "own rows (`table years`, docs/table.md); `off`")

    rollups: bool = Field(
        True, description="write the daily and monthly rollups (`<table>_daily`, `<table>_monthly`) with the "
                          "rows, in the load's own transactions, and check them when a month is validated; "
                          "`false` loads without them (docs/table.md, How the rollups are made)")

    # --- the schedule -----------------------------------------------------------------------------
    start_month: Annotated[Month, NoDecode, _parsed(Month)] = Field(
        Month(2024, 1), description="the first month the DAG's schedule catches up from (YYYY-MM)")
    catchup: bool = Field(
        False, description="`true`: unpausing the DAG creates a run for every month since `ERA5_START_MONTH`; "
                           "`false`: the schedule starts at the month under way, so only backfills load the past")
    publication_delay: float = Field(
        6.0, ge=0, lt=366, description="days after a month's end before all its hours are published (ERA5T)")
    final_after_months: int = Field(
        3, ge=1, le=24, description="calendar months after a month's end until final ERA5 replaces ERA5T")
    max_active_runs: int = Field(4, ge=1, description="months the DAG runs at once")
    retries: int = Field(2, ge=0, description="retries of each task (a failed validation verdict fails at once)")
    retry_delay_s: int = Field(60, ge=1, description="seconds before each retry")
    cds_pool_slots: int = Field(4, ge=1, description="the `era5_cds` pool: CDS fetches at once (scripts/setup.sh)")
    db_pool_slots: int = Field(2, ge=1, description="the `era5_db` pool: database writers at once (scripts/setup.sh)")

    # --- the CDS ----------------------------------------------------------------------------------
    cds_cost_limit: float | None = Field(
        None, gt=0, json_schema_extra=_shown("the service's, by format"),
        description="the largest request cost sent as one job; a month above it is split by days")
    cds_max_parallel: int = Field(4, ge=1, description="jobs queued or running at once per service URL")
    cds_retries: int = Field(5, ge=1, description="attempts per call for faults that may heal")
    cds_backoff_base: float = Field(2.0, gt=0, description="first pause between attempts, s; doubles, with jitter")
    cds_backoff_cap: float = Field(60.0, gt=0, description="longest pause between attempts, s")
    cds_max_retry_after: float = Field(300.0, gt=0, description="longest `Retry-After` honoured within a call, s")
    cds_poll_base: float = Field(0.25, gt=0, description="first wait on a queued job, s")
    cds_poll_cap: float = Field(60.0, gt=0, description="waits on a queued job grow 1.5x up to this, s")
    cds_wait_timeout: float = Field(12 * 3600.0, gt=0, description="the CLI's patience with the CDS queue, s")
    cds_defer_after: float = Field(
        10.0, ge=0, description="the Airflow fetch watches its jobs this long in its worker before deferring, and "
                                "its trigger never fires sooner after a deferral (apache/airflow#72716), s")
    cds_http_timeout: float = Field(60.0, gt=0, description="per HTTP request, s")

    # --- the HTTP reads ---------------------------------------------------------------------------
    http_max_body_bytes: int = Field(
        16 * 1024 * 1024, ge=1024, description="the largest request body the plugin's API reads (a region's GeoJSON "
                                               "outline), bytes; larger is refused with 413, and no body is read "
                                               "before the caller's login is checked")

    # --- the command line -------------------------------------------------------------------------
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        "WARNING", description="the CLI's logging without `-v` (Airflow tasks log at Airflow's level)")

    @field_validator("variables")
    @classmethod
    def _known(cls, v: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
        if info.data.get("dataset", "single-levels") != "single-levels":
            return v  # checked against the dataset's catalogue in _per_dataset
        return tuple(var.cds_name for var in parse_list(list(v)))

    @field_validator("dataset")
    @classmethod
    def _dataset(cls, v: str) -> str:
        return by_name(v).name

    @model_validator(mode="after")
    def _per_dataset(self) -> Self:
        """Variables, levels and the table of the dataset: its own defaults where none were set."""
        ds = by_name(self.dataset)
        if ds is not SINGLE_LEVELS:
            if "variables" not in self.model_fields_set:
                object.__setattr__(self, "variables", ds.default_variables)
            else:
                object.__setattr__(self, "variables", tuple(v.cds_name for v in parse_list(
                    list(self.variables), catalogue=ds.catalogue)))
            if "table" not in self.model_fields_set:
                object.__setattr__(self, "table", default_table(ds.name))
        native = Grid.native(ds.grid.step)
        if not self.grid.is_multiple_of(native):
            if "grid" in self.model_fields_set:
                raise ValueError(f"grid {self.grid}: {ds.name} needs a multiple of {native} degrees (its native grid)")
            object.__setattr__(self, "grid", native)
        object.__setattr__(self, "levels", ds.parse_levels(self.levels))
        return self

    @field_validator("table")
    @classmethod
    def _table(cls, v: str) -> str:
        problem = table_problem(v)
        if problem is not None:
            raise ValueError(problem)
        return v

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper(cls, v: Any) -> Any:
        return v.strip().upper() if isinstance(v, str) else v

    @field_validator("compression", "timescaledb_license", "data_format", mode="before")
    @classmethod
    def _lower(cls, v: Any) -> Any:
        return v.strip().lower() if isinstance(v, str) else v

    @property
    def chunk_interval(self) -> timedelta:
        """The interval of a new table's chunks (a day); months and years are made by the loader."""
        return timedelta(days=1)

    @property
    def publication_delay_td(self) -> timedelta:
        return timedelta(days=self.publication_delay)


def default_table(dataset: str) -> str:
    """The table of a dataset when ERA5_TABLE is not set: ``weather`` for single levels, else
    ``weather_<dataset>`` (``weather_pressure_levels``)."""
    return "weather" if dataset == "single-levels" else f"weather_{dataset.replace('-', '_')}"


def table_for(dataset: str, env: Mapping[str, str] | None = None) -> str:
    """The table a load of ``dataset`` goes to without --table: ERA5_TABLE when set, else its default."""
    given = (env if env is not None else os.environ).get(env_name("table"))
    return check_table(given) if given else default_table(dataset)


def env_name(field: str) -> str:
    return f"{ENV_PREFIX}{field.upper()}"


# Settings already read, by what they were read from: reading them costs ~1 ms (pydantic-settings
# walks every field's sources), and the Python API and the HTTP reads ask on every call. The model
# is frozen, and a pure function of the ERA5_* environment (any case) and ``env``.
_loaded: dict[tuple[tuple[str, str], ...], Settings] = {}


def load(env: Mapping[str, str] | None = None) -> Settings:
    """The settings from the environment (or ``env`` over it); a bad value is an :class:`InputError`
    that names the variable, the value given and what it must be."""
    given = {k: v for k, v in (env or {}).items() if k.startswith(ENV_PREFIX)}
    key = (*sorted((k, v) for k, v in os.environ.items() if k.upper().startswith(ENV_PREFIX)),
           ("", ""), *sorted(given.items()))
    found = _loaded.get(key)
    if found is not None:
        return found
    values = {k[len(ENV_PREFIX):].lower(): v for k, v in given.items()
              if k[len(ENV_PREFIX):].lower() in Settings.model_fields}
    try:
        found = cast(Settings, cast(Any, Settings)(**values))
    except ValidationError as exc:
        raise InputError("; ".join(_problem(e) for e in exc.errors())) from None
    if len(_loaded) >= 64:
        _loaded.clear()
    _loaded[key] = found
    return found


def _problem(error: Any) -> str:
    value = error.get("input")
    message = str(error.get("msg", "is not valid"))
    if isinstance(error.get("ctx", {}).get("error"), InputError):
        message = str(error["ctx"]["error"])
    if not error.get("loc"):  # the settings together (_per_dataset): the dataset and what it was given
        given = {env_name(k): v for k, v in value.items()} if isinstance(value, dict) else {}
        return f"{', '.join(f'{k}={v!r}' for k, v in given.items())}: {message.removeprefix('Value error, ')}"
    field = str(error["loc"][0])
    return f"{env_name(field)}={value!r}: {message.removeprefix('Value error, ')}"


def table_rows() -> list[tuple[str, str, str]]:
    """(variable, default as shown, meaning) for every setting, in the model's order: docs/configuration.md's table."""
    out = []
    for name, info in Settings.model_fields.items():
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        shown = extra.get("shown")
        if shown is None:
            default = info.default
            default = ",".join(default) if isinstance(default, tuple) else default
            shown = f"`{default}`"
        elif " " not in str(shown):
            shown = f"`{shown}`"
        out.append((f"`{env_name(name)}`", str(shown), info.description or ""))
    return out


def markdown_table() -> str:
    lines = ["| variable | default | meaning |", "|---|---|---|"]
    lines += [f"| {v} | {d} | {m} |" for v, d, m in table_rows()]
    return "\n".join(lines)
