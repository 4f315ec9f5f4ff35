"""``table years``: a table's finished years copied place-major into ``<table>_years``, and its daily
rollup's into ``<table>_daily_years`` (``db.years``).

Why a second copy: the table's own chunks are time-major, as the loader writes them and as an hour's
map and an area's day want them; one place's decades there decode a batch of its neighbours for
every day (a global table: 1,020 monthly chunks of 31 batches each). Its copy keeps a calendar year
in one chunk segmented by ``location_id``: a place's year is two batches of its own rows (5,000 rows
a batch), found through the compressed chunk's index on ``location_id`` (docs/table.md#a-places-decades).
The daily rollup's chunks at global breadth are the table's months too, so its years are copied the
same way, in the same transaction (a place's year of days there is one batch).

A year is copied in one transaction, under the year's lock taken alone (``load.locks.lock_year``;
every writer of the year's rows takes it shared and forgets the year's record, :func:`forget_years`):
for the table and its daily rollup each, an empty table attached to the copy as the year's chunk,
filled by direct-to-columnstore ``INSERT`` from the rows in (location_id, [level,] time) order, a
piece of points at a time, and the year recorded in ``era5_year_copies`` under the relation's name.
Killed at any point, the year rolls back whole: its chunks and records never existed, and the next
run copies it again. A year copied before is replaced the same way (its old chunk dropped in the
transaction), so readers see the old year or the new one.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

import psycopg
from psycopg import sql

from era5etl.core.errors import InputError
from era5etl.core.names import MAX_CHUNK_NAME, fitted
from era5etl.core.tiles import TILE_COLUMN
from era5etl.db import LEVEL_COLUMN, columnstore_available, connect, split_table, table_ident
from era5etl.db.columns import table_columns
from era5etl.db.layout import in_tiles
from era5etl.db.registry import table_dataset
from era5etl.db.tables import rollup_of
from era5etl.db.years import COPY_COMMENT, copied_years, copy_name, copy_sources, is_copy
from era5etl.load.chunks import chunks_between
from era5etl.load.errors import NothingToCopy
from era5etl.load.locks import lock_year
from era5etl.load.session import INSERT_SETTINGS, apply_settings

# The points of a year copied by one INSERT: about 50M rows of hours (a global year is ~190 pieces).
# Each piece is read in (location_id, time) order; in tiles the server merges the chunks' batches in
# that order without sorting the rows (docs/benchmarks.md).
PIECE_ROWS = 50_000_000
# A point's rows in a year at most, by the copied relation's time column: its hours, its days.
ROWS_A_YEAR = {"time": 8784, "bucket": 366}


@dataclass(frozen=True)
class YearCopy:
    """One year copied: its hourly rows, pieces and seconds, and its daily rollup's rows (0 when the
    year's hours were copied before and only its days now, or the table has no daily rollup)."""

    year: int
    rows: int
    pieces: int
    seconds: float
    daily_rows: int = 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def forget_years(cur: psycopg.Cursor[Any], table: str, first: datetime, last: datetime) -> None:
    """In a writer's transaction, before it changes ``table``'s rows (and so its daily rollup's) from
    ``first`` to ``last``: the years they fall in leave the copies' records (their lock shared, so a
    copy of one of them waits for this transaction, and this for a copy under way)."""
    years = list(range(first.astimezone(UTC).year, last.astimezone(UTC).year + 1))
    for year in years:
        lock_year(cur, table, year, shared=True)
    cur.execute("DELETE FROM era5_year_copies WHERE table_name = ANY(%s) AND year = ANY(%s)",
                ([r for r, _ in copy_sources(table)], years))


def copy_years(url: str, table: str, years: list[int] | None = None,
               said: Callable[[YearCopy], None] | None = None) -> list[YearCopy]:
    """Copy ``years`` of ``table`` (default: :func:`finished_years` not yet copied) into its copy of
    years, a year a transaction, oldest first; what each copied. InputError for a table of monthly
    means, a server without the columnstore, or a ``<table>_years`` that is not the pipeline's."""
    with connect(url, autocommit=True) as conn:
        sources = _ensure_copies(conn, table)
        for relation, _ in sources:
            _drop_forgotten(conn, table, relation)
        todo = sorted(set(years)) if years is not None else [
            y for y in finished_years(conn, table) if not _copied(conn, sources, y)]
        done = []
        for year in todo:
            try:
                result = copy_year(conn, table, year, again=years is not None)
            except NothingToCopy:
                if years is not None:  # asked for by name
                    raise
                continue  # a year a chunk reaches into without rows (the chunk after December's)
            done.append(result)
            if said is not None:
                said(result)
    return done


def finished_years(conn: psycopg.Connection[Any], table: str) -> list[int]:
    """The years worth copying: those before the current (UTC) one that the table's chunks reach; of a
    table the ledger has months of, only years whose twelve months are all validated."""
    schema, name = split_table(table)
    spans = conn.execute(
        "SELECT min(range_start), max(range_end) FROM timescaledb_information.chunks"
        " WHERE hypertable_schema = COALESCE(%s, current_schema()) AND hypertable_name = %s", (schema, name)).fetchone()
    if not spans or spans[0] is None:
        return []
    now = datetime.now(UTC).year
    years = [y for y in range(spans[0].astimezone(UTC).year, spans[1].astimezone(UTC).year + 1) if y < now]
    ledger = conn.execute(
        "SELECT extract(year FROM month)::int, count(DISTINCT month) FILTER (WHERE state = 'validated'),"
        " count(DISTINCT month) FROM era5_months WHERE table_name = %s GROUP BY 1", (table,)).fetchall()
    if not ledger:
        return years  # load-file's tables: no months in the ledger
    whole = {int(y) for y, validated, _ in ledger if validated == 12}
    return [y for y in years if y in whole]


def worth_copying(conn: psycopg.Connection[Any], table: str, year: int) -> bool:
    """Whether the validated month that ends ``year`` of ``table`` should copy it (``ERA5_YEAR_COPIES=auto``):
    the year finished (its twelve months validated), not copied, and held in more than one chunk of the
    table (a table of a chunk a year reads a place's year from one chunk already), on a server with
    the columnstore, of an hourly table."""
    if not columnstore_available(conn) or table_dataset(conn, table).monthly:
        return False
    if year not in finished_years(conn, table) or _copied(conn, _sources(conn, table), year):
        return False
    chunks = chunks_between(conn, table, datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC))
    return len(chunks) > 1


def copy_year(conn: psycopg.Connection[Any], table: str, year: int, *, again: bool = True) -> YearCopy:
    """Copy one calendar year of ``table`` and of its daily rollup into their copies of years, in one
    transaction (module doc); with ``again`` False, only what is not copied yet. NothingToCopy, having
    changed nothing, when the table has no rows in it."""
    began = time.perf_counter()
    counts: dict[str, int] = {}
    pieces = 0
    with conn.transaction(), conn.cursor() as cur:
        lock_year(cur, table, year, shared=False)
        for relation, time_column in _sources(conn, table):
            if again or year not in copied_years(conn, relation):
                counts[relation], n = _copy_relation_year(cur, relation, time_column, year)
                pieces += n
        if table in counts and counts[table] == 0:
            raise NothingToCopy(f"{table} has no rows in {year}: nothing to copy")
        seconds = time.perf_counter() - began
        for relation, rows in counts.items():
            cur.execute("INSERT INTO era5_year_copies (table_name, year, rows, seconds) VALUES (%s, %s, %s, %s)",
                        (relation, year, rows, seconds))
    daily = sum(rows for relation, rows in counts.items() if relation != table)
    return YearCopy(year, counts.get(table, 0), pieces, round(seconds, 3), daily)


def _copy_relation_year(cur: psycopg.Cursor[Any], relation: str, time_column: str, year: int) -> tuple[int, int]:
    """In the year's transaction: one relation's year copied into its copy, replacing any copied before;
    its rows and pieces."""
    y0, y1 = datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC)
    conn = cur.connection
    columns = table_columns(conn, relation)
    levels = LEVEL_COLUMN in columns
    _drop_span(cur, relation, y0, y1)  # the year copied before (its chunk is exactly the year)
    cur.execute("DELETE FROM era5_year_copies WHERE table_name = %s AND year = %s", (relation, year))
    chunk = _attach_year(cur, relation, time_column, year)
    apply_settings(cur, INSERT_SETTINGS)
    rows = pieces = 0
    tiled = TILE_COLUMN in columns and in_tiles(conn, relation)  # once, not once a piece
    for first, last in _pieces(cur, relation, time_column, (y0, y1), levels):
        rows += _insert(cur, relation, time_column, columns, (first, last), (y0, y1), (levels, tiled))
        pieces += 1
    # A row the direct path left in the chunk's row store (it keeps none when told the rows are
    # sorted) would be read as it is, but slowly: the chunk is compressed whole.
    cur.execute("CALL convert_to_columnstore(%s::regclass, if_not_columnstore => true, recompress => true)", (chunk,))
    return rows, pieces


def _sources(conn: psycopg.Connection[Any], table: str) -> list[tuple[str, str]]:
    """``db.years.copy_sources`` of ``table`` that exist (a table without its daily rollup: the hours)."""
    daily = rollup_of(conn, table, "day")
    return [(relation, column) for relation, column in copy_sources(table) if relation in (table, daily)]


def _copied(conn: psycopg.Connection[Any], sources: list[tuple[str, str]], year: int) -> bool:
    """Whether every one of ``sources`` has ``year`` copied."""
    return all(year in copied_years(conn, relation) for relation, _ in sources)


def _ensure_copies(conn: psycopg.Connection[Any], table: str) -> list[tuple[str, str]]:
    """The copies of ``table`` and of its daily rollup made if missing (``_ensure_copy``); the sources."""
    if table_dataset(conn, table).monthly:
        raise InputError(f"{table} holds monthly means: a place's month is a row already, there is nothing to copy")
    if not columnstore_available(conn):
        raise InputError("the copy of years is kept in the columnstore, which this server's TimescaleDB (Apache "
                         "licence) does not have")
    sources = _sources(conn, table)
    # Every copy's name checked before any is made: a user's <table>_daily_years must not leave a new
    # <table>_years behind when the command is refused.
    for relation, _ in sources:
        if is_copy(conn, relation) is False:
            raise InputError(f"{copy_name(relation)} exists and is not the pipeline's copy of {relation}'s years: "
                             "rename it, or drop it if it is no longer wanted; nothing was made")
    for relation, time_column in sources:
        _ensure_copy(conn, relation, time_column)
    return sources


def _ensure_copy(conn: psycopg.Connection[Any], table: str, time_column: str) -> None:
    """``<table>_years`` made if missing (the columns of ``table``, a weather table or its daily rollup,
    a hypertable on ``time_column`` segmented by location_id), and given any column the table has gained
    since; InputError where it cannot be."""
    target = copy_name(table)
    ident = table_ident(target)
    mine = is_copy(conn, table)
    if mine is False:
        raise InputError(f"{target} exists and is not the pipeline's copy of {table}'s years: rename it, or drop it "
                         "if it is no longer wanted")
    if mine is None:
        levels = LEVEL_COLUMN in table_columns(conn, table)
        with conn.transaction():
            conn.execute(sql.SQL("CREATE TABLE {} (LIKE {} INCLUDING DEFAULTS)").format(ident, table_ident(table)))
            conn.execute("SELECT create_hypertable(%s::regclass, by_range(%s, INTERVAL '365 days'),"
                         " create_default_indexes => false)", (ident.as_string(conn), time_column))
            conn.execute(sql.SQL("ALTER TABLE {} SET (timescaledb.enable_columnstore, timescaledb.segmentby = {},"
                                 " timescaledb.orderby = {})").format(
                ident, sql.Literal("location_id"), sql.Literal(f"level, {time_column}" if levels else time_column)))
            conn.execute(sql.SQL("COMMENT ON TABLE {} IS {}").format(ident, sql.Literal(COPY_COMMENT.format(table))))
    have = set(table_columns(conn, target))
    types = dict(conn.execute(
        "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = %s::regclass"
        " AND attnum > 0 AND NOT attisdropped", (table_ident(table).as_string(conn),)).fetchall())
    for column in table_columns(conn, table):
        if column not in have:  # a variable added to the table (variables add)
            conn.execute(sql.SQL("ALTER TABLE {} ADD COLUMN {} {}").format(
                ident, sql.Identifier(column), sql.SQL(types[column])))  # a type name from the catalogue


def _drop_forgotten(conn: psycopg.Connection[Any], table: str, relation: str) -> None:
    """The chunks of ``relation``'s copy (``table`` or its daily rollup) of years a load has rewritten
    since (no record: reads no longer take them), gone."""
    kept = set(copied_years(conn, relation))
    every = (datetime(1, 1, 1, tzinfo=UTC), datetime(9999, 1, 1, tzinfo=UTC))
    for _, _, start, end, _ in chunks_between(conn, copy_name(relation), *every):
        year = start.astimezone(UTC).year
        if year in kept:
            continue
        with conn.transaction(), conn.cursor() as cur:
            lock_year(cur, table, year, shared=False)
            if year not in copied_years(conn, relation):  # not copied again meanwhile
                _drop_span(cur, relation, start, end)


def _drop_span(cur: psycopg.Cursor[Any], table: str, start: datetime, end: datetime) -> None:
    """The copy's chunks wholly inside [start, end) dropped (``drop_chunks``)."""
    cur.execute("SELECT drop_chunks(%s::regclass, older_than => %s, newer_than => %s)",
                (table_ident(copy_name(table)).as_string(cur), end, start))


def _attach_year(cur: psycopg.Cursor[Any], table: str, time_column: str, year: int) -> str:
    """An empty table made the copy's chunk of exactly ``year`` (``attach_chunk``); its name."""
    schema, name = split_table(copy_name(table))
    chunk = sql.Identifier(*(s for s in (schema, fitted(f"{name}_{year}", MAX_CHUNK_NAME)) if s))
    chunk_name = chunk.as_string(cur)
    taken = cur.execute("SELECT to_regclass(%s) IS NOT NULL", (chunk_name,)).fetchone()
    if taken and taken[0]:
        raise InputError(f"{chunk_name} exists and is not a chunk of the copy of {table}'s years (the year's "
                         "chunk takes that name): rename it, then run `table years` again")
    cur.execute(sql.SQL("CREATE TABLE {} (LIKE {} INCLUDING DEFAULTS)").format(chunk, table_ident(copy_name(table))))
    slices = {time_column: [f"{year}-01-01 00:00:00+00", f"{year + 1}-01-01 00:00:00+00"]}
    cur.execute("CALL attach_chunk(%s::regclass, %s::regclass, %s::jsonb)",
                (table_ident(copy_name(table)).as_string(cur), chunk_name, json.dumps(slices)))
    return chunk_name


def _pieces(cur: psycopg.Cursor[Any], table: str, time_column: str, span: tuple[datetime, datetime],
            levels: bool) -> list[tuple[int, int]]:
    """Ranges of location ids, each about PIECE_ROWS rows of the year (ids taken as dense: a bound),
    on tile boundaries (32 ids) so that a table in tiles reads each piece's own tiles."""
    t = sql.Identifier(time_column)
    statement = sql.SQL("SELECT min(location_id), max(location_id), {} FROM {} WHERE {} >= %s AND {} < %s").format(
        sql.SQL("count(DISTINCT level)" if levels else "1"), table_ident(table), t, t)
    found = cur.execute(statement, span).fetchone()
    if not found or found[0] is None:
        return []
    first, last, levels_in = int(found[0]), int(found[1]), max(int(found[2]), 1)
    ids = max(32, PIECE_ROWS // (ROWS_A_YEAR[time_column] * levels_in) // 32 * 32)
    start = (first - 1) // 32 * 32 + 1
    return [(a, min(a + ids - 1, last)) for a in range(start, last + 1, ids)]


def _insert(cur: psycopg.Cursor[Any], table: str, time_column: str, columns: list[str], ids: tuple[int, int],
            span: tuple[datetime, datetime], shape: tuple[bool, bool]) -> int:
    """One piece's rows into the copy, in its order; how many. Rows without a grid point's id (a file
    off the lattice) are not copied: a place's reads find rows by that id. ``shape``: whether the rows
    have levels, and whether the table is in tiles (then each piece names its tiles)."""
    levels, tiled = shape
    names = sql.SQL(", ").join(map(sql.Identifier, columns))
    t = sql.Identifier(time_column)
    where: list[sql.Composable] = [
        sql.SQL("{} >= %(y0)s AND {} < %(y1)s AND location_id BETWEEN %(a)s AND %(b)s").format(t, t)]
    if tiled:
        where.append(sql.SQL("tile BETWEEN era5_tile(%(a)s) AND era5_tile(%(b)s)"))
    order = sql.SQL("location_id, level, {}" if levels else "location_id, {}").format(t)
    statement = sql.SQL("INSERT INTO {} ({}) SELECT {} FROM {} WHERE {} ORDER BY {}").format(
        table_ident(copy_name(table)), names, names, table_ident(table), sql.SQL(" AND ").join(where), order)
    cur.execute(statement, {"y0": span[0], "y1": span[1], "a": ids[0], "b": ids[1]})
    return max(cur.rowcount, 0)
