"""The daily and monthly rollups, computed by the loader from the blocks it writes.

Why in the loader (figures in docs/benchmarks.md): the blocks of every hour of every grid point pass
through the loader as numpy arrays anyway. Aggregating them there per grid point and UTC day costs a
few passes over arrays already in memory, and the day's rollup rows are written with the same binary
COPY, in the same transaction as the day's hourly rows: a reload replaces both, a killed load leaves
both as they were, and nothing is ever refreshed. PostgreSQL aggregating the same hours again from
the table could not get under ~10 s for one global day here (hash aggregation of 24.9M rows into 1M
groups), twice the load itself. No library aggregates streaming numpy blocks per (day, point) and
emits COPY tuples, so this is hand-written; it is checked against SQL aggregates of the hourly rows
(tests/integration/read/test_rollups.py) and by every month's validation.

* :class:`WindowRollup` follows one chunk's blocks: every UTC day whose 24 hours are all in the load
  (a *whole* day) is aggregated here, and so is a day the load brings only some hours of when the
  table holds no other hour of it (a *lone* day: a global hour loaded on its own); any other day the
  load holds only some hours of is left to SQL over the hourly rows inside the chunk's transaction
  (``db.rollups.daily_from_hourly``: it needs the hours the load does not bring). A lone day the load
  holds one hour of, read in runs of levels (a global hour on 37 levels), is not summed: each run
  is its points' whole day, kept on disk (``load.spill``) until its rows go out.
* :class:`MonthlyRollup` adds up the whole days per calendar month; at the end of the load each month
  touched is written once, the days the loader did not aggregate (other loads', partial days) taken
  from the daily rollup with SQL.

Every value follows SQL's definition on the hourly rows: NULL hours skipped; min and max exact;
mean and sum accumulated in float8 and stored as float4 (the order of additions differs from
PostgreSQL's, so a mean or a sum can differ in its last float4 bit); the wind speed is
sqrt(u^2 + v^2) per hour in float8.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from era5etl.core.rollups import KEY_COLUMNS, rolled_up, sources
from era5etl.core.tiles import TILE_COLUMN, tile_of
from era5etl.load import encode
from era5etl.load.spill import Spill, SpilledRun

F64 = npt.NDArray[np.float64]
# Pieces of a window's last daily rows waiting for its writer at most (WindowRollup.close).
CLOSING_PIECES = 2


@dataclass
class Partial:
    """Aggregates over some hours, per (bucket, point): arrays of shape (n, P)."""

    hours: npt.NDArray[np.integer[Any]]  # int32 in an open day (_open_day), int64 where numpy widens
    low: dict[str, npt.NDArray[Any]] = field(default_factory=dict)
    high: dict[str, npt.NDArray[Any]] = field(default_factory=dict)
    total: dict[str, F64] = field(default_factory=dict)
    count: dict[str, npt.NDArray[np.integer[Any]]] = field(default_factory=dict)

    def take(self, rows: slice | npt.NDArray[np.intp] | tuple[slice, slice]) -> Partial:
        return Partial(self.hours[rows], {k: v[rows] for k, v in self.low.items()},
                       {k: v[rows] for k, v in self.high.items()}, {k: v[rows] for k, v in self.total.items()},
                       {k: v[rows] for k, v in self.count.items()})

    def merge(self, other: Partial) -> Partial:
        """Both partials' hours together (same shape); a variable only one of them holds is taken as is."""
        def both(mine: dict[str, Any], theirs: dict[str, Any], fn: Any) -> dict[str, Any]:
            return {k: fn(mine[k], theirs[k]) if k in mine and k in theirs else mine.get(k, theirs.get(k))
                    for k in (*mine, *(k for k in theirs if k not in mine))}

        return Partial(self.hours + other.hours, both(self.low, other.low, np.fmin),
                       both(self.high, other.high, np.fmax), both(self.total, other.total, np.add),
                       both(self.count, other.count, np.add))

    @staticmethod
    def stacked(partials: list[Partial]) -> Partial:
        """Partials of the same variables one after another along axis 0 (days, or months); one is
        itself (a global day's month: no copy of its arrays)."""
        first = partials[0]
        if len(partials) == 1:
            return first
        return Partial(np.concatenate([p.hours for p in partials]),
                       {k: np.concatenate([p.low[k] for p in partials]) for k in first.low},
                       {k: np.concatenate([p.high[k] for p in partials]) for k in first.high},
                       {k: np.concatenate([p.total[k] for p in partials]) for k in first.total},
                       {k: np.concatenate([p.count[k] for p in partials]) for k in first.count})

    def reduce(self, starts: npt.NDArray[np.intp]) -> Partial:
        """Rows aggregated over the runs beginning at ``starts`` (axis 0); itself when every run is one
        row (a day's partial into its month: a copy of 19 arrays of a million points otherwise)."""
        if len(starts) == self.hours.shape[0]:
            return self
        return Partial(np.add.reduceat(self.hours, starts, axis=0),
                       {k: np.fmin.reduceat(v, starts, axis=0) for k, v in self.low.items()},
                       {k: np.fmax.reduceat(v, starts, axis=0) for k, v in self.high.items()},
                       {k: np.add.reduceat(v, starts, axis=0) for k, v in self.total.items()},
                       {k: np.add.reduceat(v, starts, axis=0) for k, v in self.count.items()})

    def values(self, rolled: dict[str, tuple[str, ...]]) -> dict[str, npt.NDArray[np.float32]]:
        """The rollup's value columns (float32, NaN: NULL) of the variables this partial holds."""
        out: dict[str, npt.NDArray[np.float32]] = {}
        for variable, aggs in rolled.items():
            if variable not in self.count:
                continue  # not in the download: NULL, left out of the COPY's tuples
            none = self.count[variable] == 0
            for agg in aggs:
                if agg == "min":
                    value: npt.NDArray[Any] = self.low[variable]
                elif agg == "max":
                    value = self.high[variable]
                elif agg == "mean":
                    with np.errstate(invalid="ignore", divide="ignore"):
                        value = np.where(none, np.nan, self.total[variable] / self.count[variable])
                else:
                    value = np.where(none, np.nan, self.total[variable])
                out[f"{variable}_{agg}"] = value.astype(np.float32)
        return out


def _hours(values: dict[str, npt.NDArray[np.float32]], rolled: dict[str, tuple[str, ...]],
           starts: npt.NDArray[np.intp], lengths: npt.NDArray[np.int64], p: int) -> Partial:
    """The (T, P) hours of a block aggregated over the runs of hours beginning at ``starts``."""
    out = Partial(np.broadcast_to(lengths[:, None], (len(starts), p)).copy())
    for variable, aggs in rolled.items():
        parts = sources(variable)
        if not all(s in values for s in parts):
            continue
        if len(parts) == 2:
            u, v = (values[s].astype(np.float64) for s in parts)
            x: npt.NDArray[Any] = np.sqrt(u * u + v * v)
        else:
            x = values[parts[0]]
        nan = np.isnan(x)
        anynan = bool(nan.any())
        if "min" in aggs or "max" in aggs:
            out.low[variable] = np.fmin.reduceat(x, starts, axis=0)
            out.high[variable] = np.fmax.reduceat(x, starts, axis=0)
        if anynan:
            out.total[variable] = np.add.reduceat(np.where(nan, 0.0, x), starts, axis=0, dtype=np.float64)
            out.count[variable] = np.add.reduceat(~nan, starts, axis=0, dtype=np.int64)
        else:
            out.total[variable] = np.add.reduceat(x, starts, axis=0, dtype=np.float64)
            out.count[variable] = out.hours.copy()
    return out


def _hour_values(values: dict[str, npt.NDArray[np.float32]], rolled: dict[str, tuple[str, ...]]
                 ) -> dict[str, npt.NDArray[Any]]:
    """One hour's (P,) values of each rolled-up variable the block holds (a wind speed computed)."""
    out: dict[str, npt.NDArray[Any]] = {}
    for variable in rolled:
        parts = sources(variable)
        if not all(s in values for s in parts):
            continue
        if len(parts) == 2:  # in float8, as SQL's sqrt(u::float8 ^ 2 + v::float8 ^ 2), in two arrays
            speed = np.square(values[parts[0]][0], dtype=np.float64)
            np.add(speed, np.square(values[parts[1]][0], dtype=np.float64), out=speed)
            out[variable] = np.sqrt(speed, out=speed)
        else:
            out[variable] = values[parts[0]][0]
    return out


def _open_day(hour: dict[str, npt.NDArray[Any]], rolled: dict[str, tuple[str, ...]], p: int) -> Partial:
    """An empty partial of shape (1, P) for the variables of ``hour``: NaN extremes, zero sums."""
    # Counts of a day's hours in int32, extremes in float32 (a wind speed's too: rounding is monotonic,
    # so the float32 of the float8 extreme is the extreme of its float32s, what the rollup stores): 2.6M
    # points of a global ERA5-Land day hold 144 bytes each in int64 and float64, 108 so.
    out = Partial(np.zeros((1, p), dtype=np.int32))
    for variable in hour:
        if "min" in rolled[variable]:
            out.low[variable] = np.full((1, p), np.nan, dtype=np.float32)
            out.high[variable] = np.full((1, p), np.nan, dtype=np.float32)
        out.total[variable] = np.zeros((1, p), dtype=np.float64)
        out.count[variable] = np.zeros((1, p), dtype=np.int32)
    return out


def hour_partial(hour: dict[str, npt.NDArray[Any]], rolled: dict[str, tuple[str, ...]]) -> Partial:
    """The (1, P) partial of a day the load holds one hour of (``hour``: :func:`_hour_values`): a day
    opened and its hour folded in as every hour is (a NULL adds nothing to the sums, so the day merges
    with other days' partials as theirs do)."""
    acc = _open_day(hour, rolled, next(iter(hour.values())).size)
    _add_hour(acc, hour, None)
    return acc


def _add_hour(acc: Partial, hour: dict[str, npt.NDArray[Any]], clean: dict[str, int] | None,
              cols: slice = slice(None)) -> None:
    """One hour folded into ``acc`` in place: a global hour is a million points, and making new
    arrays for every step of every variable cost more than the arithmetic (a global day's rollup took
    11 s of numpy that way, on a loaded machine). An hour without a NULL adds to ``clean`` (per
    variable) instead of to every point's count: :func:`_settle` adds those hours once, when the day
    is taken out. (Whether an hour has a NULL is one reduction, np.min propagating NaN, rather than a
    mask of a million booleans.) ``cols``: the hour holds these points only (one run of levels of an
    hour; the other columns' come in the hour's other blocks), whose counts are then added at once
    (``clean`` None), since :func:`_settle` would add to every point's."""
    acc.hours[0, cols] += 1
    for variable, x in hour.items():
        if variable in acc.low:
            low, high = acc.low[variable][0, cols], acc.high[variable][0, cols]  # views: updated in place
            np.fmin(low, x, out=low)
            np.fmax(high, x, out=high)
        total = acc.total[variable][0, cols]
        if np.isnan(np.min(x)):
            nan = np.isnan(x)
            np.add(total, np.where(nan, 0.0, x), out=total)
            acc.count[variable][0, cols] += ~nan
        else:
            np.add(total, x, out=total)
            if clean is None:
                acc.count[variable][0, cols] += 1
            else:
                clean[variable] = clean.get(variable, 0) + 1


def _settle(acc: Partial, clean: dict[str, int]) -> Partial:
    """``acc`` with the hours :func:`_add_hour` counted in ``clean`` added to its counts (emptied)."""
    for variable, hours in clean.items():
        acc.count[variable] += hours
    clean.clear()
    return acc


def _runs(keys: npt.NDArray[Any]) -> npt.NDArray[np.intp]:
    """Where each run of equal consecutive ``keys`` begins."""
    if len(keys) == 0:
        return np.zeros(0, dtype=np.intp)
    return np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1]))).astype(np.intp)


@dataclass
class Points:
    """The grid points of a load, in the order its blocks hold them (location_id ascending): what a
    rollup row keeps of a point (its id fixes its longitude)."""

    location_id: npt.NDArray[np.int32]
    latitude: npt.NDArray[np.float32]
    # On pressure levels a rollup row is a (level, point): each column of the blocks is one, level-major
    # (the order the hourly rows go in: time, level, location_id); None for a table without levels.
    level: npt.NDArray[np.int16] | None = None

    def take(self, cols: slice) -> Points:
        """The points of a run of levels (views)."""
        return Points(self.location_id[cols], self.latitude[cols], None if self.level is None else self.level[cols])


class MonthlyRollup:
    """Whole days added up per calendar month, for the whole load; and the runs of levels of one-hour
    days, kept on disk (``load.spill``), each month's added to its rows run by run (``load.monthly``)."""

    def __init__(self) -> None:
        self.months: dict[np.datetime64, Partial] = {}
        self.days: dict[np.datetime64, list[np.datetime64]] = {}
        self.spill = Spill()
        self.runs: dict[np.datetime64, list[SpilledRun]] = {}

    def add_run(self, day: np.datetime64, cols: slice, hour: dict[str, npt.NDArray[Any]]) -> SpilledRun:
        """One run of levels of a day the load holds one hour of: to disk, and into its month's runs."""
        run = self.spill.put(day, cols, hour)
        month = day.astype("datetime64[M]")
        self.runs.setdefault(month, []).append(run)
        days = self.days.setdefault(month, [])
        if not days or days[-1] != day:
            days.append(day)
        return run

    def add(self, days: npt.NDArray[np.datetime64], partial: Partial) -> None:
        months = days.astype("datetime64[M]")
        starts = _runs(months)
        summed = partial.reduce(starts)
        for i, month in enumerate(months[starts]):
            one = summed.take(slice(i, i + 1))
            self.months[month] = self.months[month].merge(one) if month in self.months else one
        for day, month in zip(days, months, strict=True):
            self.days.setdefault(month, []).append(day)


class WindowRollup:
    """One chunk's daily rollup rows, built from its blocks as they pass (time order)."""

    def __init__(self, times: npt.NDArray[np.int64], points: Points | None, data_columns: tuple[str, ...],
                 monthly: MonthlyRollup, tiled: bool = False, levels: bool = False) -> None:
        self.times = np.asarray(times, dtype=np.int64)  # the load's time steps in the chunk, epoch seconds
        hours = self.times.astype("datetime64[s]")
        days, steps = np.unique(hours.astype("datetime64[D]"), return_counts=True)
        # A whole day: its 24 hours all in this load (on the hour); the rest are SQL's (the hours the
        # load lacks are in the table). Without points (a grid off the lattice) every day is SQL's.
        on_hour = hours[hours.astype("datetime64[h]") == hours]
        per_day = np.unique(on_hour.astype("datetime64[D]"), return_counts=True)
        full = set(per_day[0][per_day[1] == 24].tolist()) if points is not None else set()
        self._aggregate({d for d in days if d.item() in full}, days)
        # Days the load holds one hour of: read in runs of levels, each run is its points' whole day
        # (when the day is lone), kept on disk until its rows go out (load.spill).
        self.one_hour = set(days[steps == 1].tolist())
        self.spilled: list[SpilledRun] = []  # runs of one-hour days whose daily rows are not out yet
        self.lone: list[np.datetime64] = []  # partial days aggregated here all the same (adopt)
        self.days = days
        self.points = points or Points(np.zeros(0, np.int32), np.zeros(0, np.float32))
        self.levels = levels  # the table is on pressure levels: its rollup rows have a level
        self.data_columns = data_columns
        self.rolled = rolled_up(data_columns)
        self.columns = tuple(f"{v}_{a}" for v, aggs in self.rolled.items() for a in aggs)
        self.monthly = monthly
        self.tiled = tiled  # the daily rollup is laid out in tiles: its rows carry their tile
        self.open: tuple[np.datetime64, Partial] | None = None
        self.clean: dict[str, int] = {}  # hours of the open day without a NULL, per variable (_add_hour)
        # Encoded rows for the chunk's writer, in (bucket, location_id) order, None once closed.
        # Unbounded: a chunk's daily rows are a small part of its hourly ones (a twenty-fourth).
        self.encoded: queue.Queue[bytes | None] = queue.Queue()
        self.last: tuple[np.datetime64, Partial] | None = None  # settled, not yet encoded (settle)
        self.closing: threading.Event | None = None  # the load's stop, once closing (close)
        self.rows = 0

    def adopt(self, lone: list[np.datetime64]) -> None:
        """Partial days the table holds no other hour of (``load.writer.lone_days``, before any block):
        the load's hours are all such a day will hold, so they are aggregated here as a whole day's are.
        SQL would aggregate them again from the table: a global hour on 37 levels is 38.4M daily rows,
        which that ``INSERT ... SELECT`` had not written after 19 minutes. The chunk's transaction checks
        that they are still lone (another load of the same day may have come first)."""
        self.lone = [d for d in self.partial_days if d in set(lone)]
        self._aggregate(self.whole | set(self.lone), self.partial_days)

    def _aggregate(self, whole: set[np.datetime64], days: Iterable[np.datetime64]) -> None:
        """The days aggregated here (``whole``, and the same as a sorted array for the blocks' test);
        the rest of ``days`` are SQL's."""
        self.whole = whole
        self._whole = np.array(sorted(whole), dtype="datetime64[D]")
        self.partial_days = [d for d in days if d not in whole]

    def add(self, valid_time: npt.NDArray[np.datetime64], values: dict[str, npt.NDArray[np.float32]],
            cols: slice | None = None) -> None:
        """A block's hours (T,) and values (T, P), in the points' order; ``cols``: the block is one hour
        of a run of levels (a global hour on 37 levels: ``load.loader.block_levels``), these columns of
        the points (level-major), the rest of the hour in the blocks before and after it."""
        if not self.whole:
            return
        if cols is not None:
            self._add_run(valid_time, values, cols)
            return
        days = valid_time.astype("datetime64[D]")
        keep = np.isin(days, self._whole)
        if not keep.all():
            valid_time, days = valid_time[keep], days[keep]
            values = {k: v[keep] for k, v in values.items()}
        if len(days) == 0:
            return
        if len(days) == 1:  # one hour (a global hour is a block): into its day's sums, in place
            day, hour = days[0], _hour_values(values, self.rolled)
            if self.open is not None and self.open[0] != day:
                self._done(np.array([self.open[0]]), self._settled())
                self.open = None
            if self.open is None:
                self.open = (day, _open_day(hour, self.rolled, len(self.points.location_id)))
            _add_hour(self.open[1], hour, self.clean)
            return
        starts = _runs(days)
        lengths = np.diff(np.append(starts, len(days))).astype(np.int64)
        partial = _hours(values, self.rolled, starts, lengths, len(self.points.location_id))
        run_days = days[starts]
        if self.open is not None and self.open[0] == run_days[0]:
            partial = _first_merged(self._settled(), partial)
            self.open = None
        if self.open is not None:
            self._done(np.array([self.open[0]]), self._settled())
            self.open = None
        # The block's last day may go on in the next block; the days before it are complete.
        if len(run_days) > 1:
            self._done(run_days[:-1], partial.take(slice(0, len(run_days) - 1)))
        self.open = (run_days[-1], partial.take(slice(len(run_days) - 1, len(run_days))))

    def _add_run(self, valid_time: npt.NDArray[np.datetime64], values: dict[str, npt.NDArray[np.float32]],
                 cols: slice) -> None:
        """One hour of a run of levels folded into its day's sums at ``cols``, in place."""
        if len(valid_time) != 1:
            raise ValueError(f"a block of a run of levels holds one hour, not {len(valid_time)}")
        day = valid_time.astype("datetime64[D]")[0]
        if day not in self.whole:
            return
        hour = _hour_values(values, self.rolled)
        if self.open is not None and self.open[0] != day:
            self._done(np.array([self.open[0]]), self._settled())
            self.open = None
        if day.item() in self.one_hour:  # the run holds its points' whole day: to disk, not into sums
            self.spilled.append(self.monthly.add_run(day, cols, hour))
            return
        if self.open is None:
            self.open = (day, _open_day(hour, self.rolled, len(self.points.location_id)))
        _add_hour(self.open[1], hour, None, cols)

    def settle(self) -> None:
        """The window's last day complete, called once its last block has been added: from here the
        monthly rollup holds every day of the window (the load may write the months while this
        window's last day is still being encoded, by :meth:`close`)."""
        if self.open is not None:
            day, partial = self.open[0], self._settled()
            self.monthly.add(np.array([day]), partial)
            self.last = (day, partial)
            self.open = None

    def close(self, stop: threading.Event | None = None) -> None:
        """The window's last day out, encoded; then the end of its pieces. With ``stop`` (called once the
        window's hourly rows are all queued, so its writer goes on to these), at most
        ``CLOSING_PIECES`` pieces wait at a time: a global ERA5-Land day's daily rows are ten pieces,
        which were all queued at once while the writer was still finishing the hourly COPY."""
        self.settle()
        self.closing = stop
        self._emit_spilled()
        if self.last is not None:
            self._emit(np.array([self.last[0]]), self.last[1], self.points)
            self.last = None
        self.encoded.put(None)

    def pieces(self, stop: threading.Event) -> Iterator[bytes]:
        """The encoded rows as they are made, until :meth:`close` (for the chunk's writer, in its
        transaction); ends early, raising nothing, once ``stop`` is set (the load is abandoned)."""
        while not stop.is_set():
            try:
                item = self.encoded.get(timeout=0.2)
            except queue.Empty:
                continue
            if item is None:
                return
            yield item

    def _settled(self) -> Partial:
        assert self.open is not None
        return _settle(self.open[1], self.clean)

    def _done(self, days: npt.NDArray[np.datetime64], partial: Partial) -> None:
        """Complete days: into the monthly rollup, and out as daily rows."""
        self.monthly.add(days, partial)
        self._emit_spilled()
        self._emit(days, partial, self.points)

    def _emit_spilled(self) -> None:
        """The daily rows of the runs kept on disk, run by run: before any later day's (a day's first
        block closes the day before it), so the rows go in (bucket, level, location_id) order."""
        runs, self.spilled = self.spilled, []
        for run in runs:
            hour = self.monthly.spill.get(run)
            self._emit(np.array([run.day]), hour_partial(hour, self.rolled), self.points.take(run.cols))

    def _emit(self, days: npt.NDArray[np.datetime64], partial: Partial, points: Points) -> None:
        """Complete days' rows of ``points`` (the load's, or a run of levels'), encoded in pieces for the
        chunk's writer (a few at a time once closing)."""
        for piece in encoded_pieces(days, points, partial, self.rolled, self.columns, self.tiled, self.levels):
            while self.closing is not None and self.encoded.qsize() >= CLOSING_PIECES \
                    and not self.closing.wait(0.05):
                pass
            self.encoded.put(piece)
        self.rows += partial.hours.size

    def copy_columns(self) -> tuple[str, ...]:
        return rollup_copy_columns(self.columns, self.tiled, self.levels)


def rollup_copy_columns(columns: tuple[str, ...], tiled: bool, levels: bool = False) -> tuple[str, ...]:
    """The columns a COPY of rollup rows names, in the order :func:`encoded_pieces` writes them: the key
    columns (with the level after location_id on pressure levels), the tile in a tiled rollup
    (``core.tiles``), then the aggregates."""
    keys = (*KEY_COLUMNS[:2], encode.LEVEL, *KEY_COLUMNS[2:]) if levels else KEY_COLUMNS
    return (*keys, *((TILE_COLUMN,) if tiled else ()), *columns)


def encoded_pieces(buckets: npt.NDArray[np.datetime64], points: Points, partial: Partial,
                   rolled: dict[str, tuple[str, ...]], columns: tuple[str, ...], tiled: bool = False,
                   levels: bool = False) -> Iterator[bytes]:
    """A (buckets, points) partial's rollup rows as COPY tuples, in pieces of ``encode.PIECE_ROWS`` rows
    in (bucket, location_id) order: the server takes the first while the next is encoded (a global
    day's million daily rows are four pieces, so the chunk's writer starts on them while the last day
    is still being encoded; the monthly rows of a load likewise)."""
    stamps = buckets.astype("datetime64[s]")
    tiles = tile_of(points.location_id) if tiled else None
    for t, p in encode.piece_slices(*partial.hours.shape):
        # A piece's values made for the piece: a global ERA5-Land day's were 14 float32 columns of
        # 2.6M points (146 MB) made at once, for the daily rows and again for the monthly ones.
        piece = partial.take((t, p))
        ints = {"hours": piece.hours.astype(np.int32)} | ({} if tiles is None else {TILE_COLUMN: tiles[None, p]})
        level = None
        if levels:
            assert points.level is not None
            level = points.level[p]
        yield encode.encode_grid(stamps[t], points.location_id[p], points.latitude[p], ints, piece.values(rolled),
                                 columns, level)


def _first_merged(open_: Partial, partial: Partial) -> Partial:
    """``partial`` with its first row merged with ``open_`` (the same day, begun in an earlier block)."""
    first = open_.merge(partial.take(slice(0, 1)))
    n = partial.hours.shape[0]
    return first if n == 1 else Partial.stacked([first, partial.take(slice(1, n))])
