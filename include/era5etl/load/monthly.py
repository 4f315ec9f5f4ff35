"""The monthly rollup rows of a load: written once per load for every month it touched, while its last
chunks are still being copied when no day of it is partial, after its chunks otherwise (``load.loader``).

A month's row of a grid point adds up its daily rows. The loader holds the whole days it aggregated
itself (:class:`era5etl.load.rollup.MonthlyRollup`); the other days of a month it touched (days of
other loads, days it held only some hours of, whose rows SQL computed in the chunk's transaction)
are read back from the daily rollup, already committed, aggregated per point by the server
(``db.rollups.months_from_daily``). A month the loader aggregated whole asks the server nothing.

The months are written in one transaction (DELETE of the months inside the load's footprint, one COPY),
one load of a table at a time (a transaction lock on the monthly rollup): loads of different
months of a table write side by side into the same ten-year chunk otherwise. A loader killed after
its chunks and before this (or a chunk that fails after this) leaves the months' monthly rows stale;
the month's ledger then says the load failed, and validation (``read.rollup_check``) compares the
monthly rows with the daily ones, so no month is called validated on stale monthly rows.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt
import psycopg
from psycopg import sql

from era5etl.core.rollups import rolled_up
from era5etl.db import connect, rollup_tables, table_ident
from era5etl.db.rollups import box_filter, months_from_daily, other_days
from era5etl.load import encode
from era5etl.load.rollup import MonthlyRollup, Partial, Points, encoded_pieces, hour_partial, rollup_copy_columns
from era5etl.load.session import apply_settings, lift_decompression_limit
from era5etl.load.spill import SpilledRun
from era5etl.load.writer import Footprint


def _days_in(month: np.datetime64) -> int:
    return int(((month + 1).astype("datetime64[D]") - month.astype("datetime64[D]")).astype(int))


def _key(points: Points) -> npt.NDArray[np.int64]:
    """A row's key among a month's rows: its location id, with its level above it on pressure levels
    (ascending keys are then the rows' order, level by level)."""
    ids = points.location_id.astype(np.int64)
    return ids if points.level is None else (points.level.astype(np.int64) << 32) | ids


def _server_partials(rows: list[tuple[Any, ...]], names: list[str], rolled: dict[str, tuple[str, ...]],
                     levels: bool = False) -> dict[np.datetime64, tuple[npt.NDArray[np.int64], Points, Partial]]:
    """The server's partial monthly figures by month: (keys, points, partial of shape (1, K)); ``levels``:
    each row has its level after the month (``db.rollups.months_from_daily``)."""
    out: dict[np.datetime64, tuple[npt.NDArray[np.int64], Points, Partial]] = {}
    if not rows:
        return out
    months = np.array([np.datetime64(r[0].replace(tzinfo=None), "M") for r in rows])
    skip = 2 if levels else 1
    table = np.array([r[skip:] for r in rows], dtype=np.float64)  # NULL -> NaN
    level_of = np.array([r[1] for r in rows], dtype=np.int16) if levels else None
    col = {name: 3 + i for i, name in enumerate(names)}
    for month in np.unique(months):
        part = table[months == month]
        pts = Points(part[:, 0].astype(np.int32), part[:, 1].astype(np.float32),
                     None if level_of is None else level_of[months == month])
        partial = Partial(part[None, :, 2].astype(np.int64))
        for variable, aggs in rolled.items():
            if "min" in aggs:
                partial.low[variable] = part[None, :, col[f"{variable}_min"]]
                partial.high[variable] = part[None, :, col[f"{variable}_max"]]
            kind = "mean" if "mean" in aggs else "sum"
            partial.total[variable] = np.nan_to_num(part[None, :, col[f"{variable}_{kind}.total"]])
            partial.count[variable] = part[None, :, col[f"{variable}_{kind}.count"]].astype(np.int64)
        out[month] = (_key(pts), pts, partial)
    return out


def _placed(partial: Partial, at: npt.NDArray[np.intp], n: int) -> Partial:
    """``partial`` (1, k) spread over (1, n) at ``at``, empty elsewhere (NaN extremes, zero sums)."""
    def spread(a: npt.NDArray[Any], empty: float) -> npt.NDArray[Any]:
        out = np.full((1, n), empty, dtype=a.dtype)
        out[0, at] = a[0]
        return out

    return Partial(spread(partial.hours, 0), {k: spread(v, np.nan) for k, v in partial.low.items()},
                   {k: spread(v, np.nan) for k, v in partial.high.items()},
                   {k: spread(v, 0) for k, v in partial.total.items()},
                   {k: spread(v, 0) for k, v in partial.count.items()})


def write_monthly(url: str, table: str, footprint: Footprint, touched: Sequence[np.datetime64], monthly: MonthlyRollup,
                  points: Points | None, data_columns: tuple[str, ...],
                  copy_settings: dict[str, str] | None) -> tuple[int, float]:
    """Replace the monthly rollup rows of the ``touched`` months (datetime64[M]) inside ``footprint``;
    returns (rows written, seconds)."""
    t0 = time.perf_counter()
    months = sorted(set(touched))
    if not months:
        return 0, 0.0
    rolled = rolled_up(data_columns)
    columns = tuple(f"{v}_{a}" for v, aggs in rolled.items() for a in aggs)
    name = rollup_tables(table)["month"]
    ident = table_ident(name)
    whole = {m for m in months if m in monthly.days and len(set(monthly.days[m])) == _days_in(m)}
    # A month with runs of levels on disk (load.spill) is asked of the server run by run, below.
    ask = [m for m in months if m not in whole and m not in monthly.runs]
    bounds = footprint.rollup_params()
    levels = bool(footprint.levels)  # a reload of a download's levels replaces those levels' rows only
    first = months[0].astype("datetime64[s]").item()
    last = (months[-1] + 1).astype("datetime64[s]").item()
    stamps = [m.astype("datetime64[s]").item() for m in months]
    written = 0
    with connect(url) as conn, conn.transaction(), conn.cursor() as cur:
        cur.execute("SELECT pg_advisory_xact_lock(hashtext(%s), 0)", (f"era5etl.monthly {name}",))
        # A reload's DELETE decompresses the batches holding the months' rows (a global month is a
        # million): no per-statement limit in the transaction that replaces them (load.writer).
        lift_decompression_limit(cur)
        server: dict[np.datetime64, tuple[npt.NDArray[np.int64], Points, Partial]] = {}
        if ask:
            statement, names = months_from_daily(table, data_columns, footprint.grid, levels)
            skip = sorted({d for m in ask for d in monthly.days.get(m, [])})
            rows = cur.execute(statement, {
                **bounds, "first": first, "last": last,
                "months": [m.astype("datetime64[s]").item() for m in ask],
                "skip": [d.astype("datetime64[s]").item() for d in skip]}).fetchall()
            server = _server_partials(rows, names, rolled, levels)
        cur.execute(sql.SQL("DELETE FROM {} WHERE bucket >= %(first)s AND bucket < %(last)s"
                            " AND bucket = ANY(%(months)s) AND {}{}").format(ident, box_filter(footprint.grid),
                                                                               footprint.level_filter()),
                    {**bounds, "first": first, "last": last, "months": stamps})
        if copy_settings is not None:
            apply_settings(cur, copy_settings)
        with encode.binary_copy(cur, sql.SQL("COPY {} ({}) FROM STDIN (FORMAT BINARY)").format(
                ident, sql.SQL(", ").join(map(sql.Identifier,
                                               rollup_copy_columns(columns, footprint.rollups_tiled, levels))))) as cp:
            # Runs of months the loader holds alone are encoded at once (a download over decades:
            # ~1,000 months of a few points); the rest a month at a time. Rows stay in (bucket,
            # location_id) order, as the columnstore is told they come.
            run: list[np.datetime64] = []
            for month in [*months, None]:
                if month is not None and month in monthly.months and month not in server \
                        and month not in monthly.runs and points is not None:
                    run.append(month)
                    continue
                if run and points is not None:
                    stacked = Partial.stacked([monthly.months[m] for m in run])
                    tiled = footprint.rollups_tiled
                    for piece in encoded_pieces(np.array(run), points, stacked, rolled, columns, tiled, levels):
                        cp.write(piece)
                    written += len(run) * points.location_id.size
                    run = []
                if month is None:
                    break
                figures: Iterable[tuple[Points, Partial]]
                if month in monthly.runs and points is not None:
                    figures = _month_runs(url, table, footprint, month, monthly, points, month not in whole)
                else:
                    parts = [(_key(points), points, monthly.months[month])] if (
                        month in monthly.months and points is not None) else []
                    merged = _merged(parts + ([server[month]] if month in server else []))
                    figures = () if merged is None else (merged,)
                for pts, partial in figures:
                    for piece in encoded_pieces(np.array([month]), pts, partial, rolled, columns,
                                                footprint.rollups_tiled, levels):
                        cp.write(piece)
                    written += pts.location_id.size
    return written, time.perf_counter() - t0


def _month_runs(url: str, table: str, footprint: Footprint, month: np.datetime64, monthly: MonthlyRollup,
                points: Points, ask: bool) -> Iterator[tuple[Points, Partial]]:
    """A month's points and figures, a run of levels at a time, where the loader holds runs of levels
    of one-hour days on disk (``load.spill``): run by run, in level order, each run's days read back
    and added to the loader's sums at its columns and (``ask``: the month holds days of other loads)
    to the server's figures of its levels, asked on a connection of its own (the caller's is in its
    COPY). Memory follows one run, not the month's rows over every level."""
    rolled = rolled_up(footprint.columns)
    groups: dict[tuple[int, int], list[SpilledRun]] = {}
    for run in monthly.runs[month]:
        groups.setdefault((run.cols.start, run.cols.stop), []).append(run)
    levels = bool(footprint.levels)
    stamp = month.astype("datetime64[s]").item()
    skip = [d.astype("datetime64[s]").item() for d in sorted(set(monthly.days[month]))]
    statement, names = months_from_daily(table, footprint.columns, footprint.grid, levels)

    def first_level(key: tuple[int, int]) -> int:
        return int(points.level[key[0]]) if points.level is not None else key[0]

    with connect(url) as reader:
        # Asked of the server run by run only if the month holds days besides the load's (one
        # question): a run's question reads the month's daily rows of its levels.
        ask = ask and _other_days(reader, table, footprint, month, monthly.days[month])
        for start, stop in sorted(groups, key=first_level):
            cols = slice(start, stop)
            pts = points.take(cols)
            partial = monthly.months[month].take((slice(0, 1), cols)) if month in monthly.months else None
            for run in groups[(start, stop)]:
                day = hour_partial(monthly.spill.get(run), rolled)
                partial = day if partial is None else partial.merge(day)
            assert partial is not None
            parts = [(_key(pts), pts, partial)]
            if ask:
                run_levels = np.unique(pts.level).tolist() if pts.level is not None else []
                rows = reader.execute(statement, {
                    **footprint.rollup_params(), "levels": run_levels, "first": stamp,
                    "last": (month + 1).astype("datetime64[s]").item(), "months": [stamp], "skip": skip}).fetchall()
                parts += list(_server_partials(rows, names, rolled, levels).values())
            found = _merged(parts)
            assert found is not None
            yield found


def _other_days(conn: psycopg.Connection[Any], table: str, footprint: Footprint, month: np.datetime64,
                days: list[np.datetime64]) -> bool:
    """Whether the daily rollup holds, inside ``footprint``, a day of ``month`` that is not in ``days``."""
    gaps: list[tuple[datetime, datetime]] = []
    at, end = month.astype("datetime64[D]"), (month + 1).astype("datetime64[D]")
    for day in [*sorted(set(days)), end]:
        if day > at:
            gaps.append((at.astype("datetime64[s]").item(), day.astype("datetime64[s]").item()))
        at = day + 1
    if not gaps:
        return False
    bounds = {f"{side}{i}": stamp for i, gap in enumerate(gaps) for side, stamp in zip(("lo", "hi"), gap, strict=True)}
    found = conn.execute(other_days(table, len(gaps), footprint.grid, bool(footprint.levels)),
                         {**footprint.rollup_params(), **bounds}).fetchone()
    return bool(found and found[0])


def _merged(parts: list[tuple[npt.NDArray[np.int64], Points, Partial]]) -> tuple[Points, Partial] | None:
    """Grid points and partial aggregates (the loader's, the server's of its days outside this load)
    merged point by point, in key order; None when there are none (the one part as it is when its keys
    ascend already: a run of levels the month has no other day of)."""
    if not parts:
        return None
    if len(parts) == 1 and bool((np.diff(parts[0][0]) > 0).all()):
        return parts[0][1], parts[0][2]
    keys = np.unique(np.concatenate([p[0] for p in parts]))
    lat = np.full(keys.size, np.nan, dtype=np.float32)
    merged: Partial | None = None
    for key, pts, partial in parts:
        at = np.searchsorted(keys, key)
        lat[at] = pts.latitude
        placed = _placed(partial, at, keys.size)
        merged = placed if merged is None else merged.merge(placed)
    assert merged is not None
    level = None if parts[0][1].level is None else (keys >> 32).astype(np.int16)
    return Points((keys & 0xFFFFFFFF).astype(np.int32), lat, level), merged
