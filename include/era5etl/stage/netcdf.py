"""One NetCDF file of a download opened and checked: truncation, chunk caches, its variables,
dimensions and coordinates, and reading a variable's time steps in table units.

Layouts read (the real ones are in the repository's tests/data/era5-samples):

* new CDS (2024+), NetCDF4/HDF5: dims ``valid_time`` (int64 s since 1970), ``latitude``
  (decreasing), ``longitude``; scalar coord ``number``; string coord ``expver`` along valid_time;
  float32 with NaN fill. Often a ZIP (recognised by its magic bytes, whatever its name says)
  holding one file per stream and step type (``...stepType-instant.nc``, ``...-accum.nc``).
* old CDS, NetCDF3: dim ``time`` (int32 h since 1900), int16 packed with scale_factor/add_offset and
  _FillValue -32767; when ERA5 and ERA5T are mixed, an extra ``expver`` dim: (time, expver, lat, lon).

Values: xarray decodes (``mask_and_scale=True``: fill -> NaN, then ``raw * scale_factor +
add_offset``, float64 for the packed int16), then ``table = decoded_as_float64 * Variable.scale +
Variable.offset`` in float64, then float32. Tests and the load checks compute exactly this from
``xr.open_dataset``, so the loaded float4 is comparable bit for bit.

ERA5/ERA5T mixed along an ``expver`` dimension: per value, the first non-missing one in ascending
expver order is taken. The CDS fills the other expver with _FillValue at every time step, so this is
"the expver that has the step"; if both ever held a value, final ERA5 (0001) beats ERA5T (0005).

Memory: only coordinates are read at open; ``blocks`` reads just the time slices of each block
(xarray lazy indexing on a netCDF4 handle). HDF5 decompresses whole chunks, so each variable's chunk
cache is sized to a time-slab of chunks and one chunk more (up to a cap): when chunks span several
time steps, reading hour by hour would otherwise decompress every chunk once per hour (measured 30x
slower). A part the reader has passed releases its caches, so a month delivered as 31 day files
holds one file's worth.

Why xarray rather than netCDF4 directly: on a global 24 h synthetic file netCDF4 was at most ~1.8x
faster (NetCDF3) and ~1.05x (NetCDF4), both far above what binary COPY into PostgreSQL consumes, and
xarray's decoding is by construction the one tests compare against.
"""

from __future__ import annotations

import logging
import math
import mmap
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import netCDF4
import numpy as np
import xarray as xr

from era5etl.core.variables import BY_SHORT_NAME, Variable
from era5etl.stage.block import DT64, F32, F64
from era5etl.stage.errors import StageError

log = logging.getLogger(__name__)

# Per variable, not in total; only used when a variable's chunks span several time steps.
DEFAULT_CHUNK_CACHE_BYTES = 256 * 2**20

_TIME_DIMS = ("valid_time", "time")
_LAT_NAMES = ("latitude", "lat")
_LON_NAMES = ("longitude", "lon")
_EXPVER = "expver"
# The vertical dimension of a download on pressure levels: new CDS (float hPa, descending), old CDS
# (int32 hPa, ascending), cfgrib's own name.
LEVEL_NAMES = ("pressure_level", "level", "isobaricInhPa")


@dataclass
class Part:
    """One NetCDF file of a download (a path given, or a ZIP member)."""

    label: str  # how messages name it
    ds: xr.Dataset
    table_names: list[str]  # registry short names it holds
    ignored: list[str]
    time_dim: str = ""
    lat_dim: str = ""
    lon_dim: str = ""
    times: DT64 | None = None
    lat: F64 | None = None
    lon: F64 | None = None
    expver: tuple[str, ...] = ()
    expver_order: tuple[int, ...] = ()  # set when expver is a dimension: indices, ERA5 before ERA5T
    time_chunk: int = 1
    row_chunk: int = 0  # the latitude chunking of its table variables (0: not chunked, any rows read alike)
    level_dim: str = ""  # set when the variables have a pressure level dimension
    levels: tuple[int, ...] = ()  # its levels, hPa ascending
    level_order: tuple[int, ...] = ()  # indices of the file's levels in ascending hPa
    nc: Any = None  # the netCDF4 handle of an HDF5 part, whose chunk caches are released once read past
    cached: bool = False  # read since its caches were last released


@dataclass
class Source:
    """One registry variable in one part."""

    part: Part
    name: str
    variable: Variable

    @property
    def times(self) -> DT64:
        assert self.part.times is not None
        return self.part.times

    def read(self, j0: int, j1: int, dtype: type[np.floating] = np.float32, run: tuple[int, int] | None = None,
             rows: tuple[int, int] | None = None) -> F32:
        """Time steps j0..j1-1 of this part as (steps, points) float32 (or ``dtype``) in table units;
        ``run``: only the ascending levels run[0]..run[1]-1; ``rows``: only the grid's latitude rows
        rows[0]..rows[1]-1 (file order), whose points are those rows' columns."""
        p = self.part
        dims = [p.time_dim, *([_EXPVER] if p.expver_order else []), *([p.level_dim] if p.level_dim else []),
                p.lat_dim, p.lon_dim]
        da = p.ds[self.name].isel({p.time_dim: slice(j0, j1)})
        if rows is not None:
            da = da.isel({p.lat_dim: slice(*rows)})
        if p.level_dim:
            wanted = p.level_order if run is None else p.level_order[run[0]:run[1]]
            if wanted != tuple(range(len(p.level_order))):
                da = da.isel({p.level_dim: list(wanted)})  # levels ascending, whatever the file's order
        da = da.transpose(*dims)
        try:
            decoded = np.asarray(da.values)
        except (OSError, RuntimeError, ValueError) as exc:
            raise StageError(f"{p.label}: reading {self.name} at {self.times[j0]}..{self.times[j1 - 1]} "
                             f"failed: {exc} (the file is corrupt)") from exc
        # A fresh float64 copy: xarray's result is float32 for the new CDS and may be a view.
        x = np.array(decoded, dtype=np.float64)
        if p.expver_order:
            x = _first_valid(x, p.expver_order)
        np.multiply(x, self.variable.scale, out=x)
        np.add(x, self.variable.offset, out=x)
        return x.astype(dtype, copy=False).reshape(j1 - j0, -1)


def _first_valid(x: F64, order: tuple[int, ...]) -> F64:
    """(T, expver, lat, lon) -> (T, lat, lon): per value, the first non-NaN in ``order``."""
    out = x[:, order[0]].copy()
    for k in order[1:]:
        hole = np.isnan(out)
        if not hole.any():
            break
        out[hole] = x[:, k][hole]
    return out


def _check_nc3_size(path: Path, label: str) -> None:
    """Refuse a truncated NetCDF3 file: the C library opens one and reads the missing tail as zeros."""
    with path.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        try:
            need = _nc3_required_size(buf)
        except (struct.error, ValueError) as exc:
            raise StageError(f"{label}: truncated or corrupt NetCDF3 header ({exc})") from None
        if need > len(buf):
            raise StageError(f"{label}: truncated NetCDF3 file: its header describes {need:,} bytes of data "
                             f"but the file has {len(buf):,}")


_NC3_TYPE_SIZE = {1: 1, 2: 1, 3: 2, 4: 4, 5: 4, 6: 8, 7: 1, 8: 2, 9: 4, 10: 8, 11: 8}


def _nc3_required_size(buf: mmap.mmap) -> int:
    """Bytes a classic/64-bit-offset/CDF-5 file must have, from its header (NetCDF file format spec)."""
    version = buf[3]
    size_fmt = ">q" if version == 5 else ">i"  # nelems, dim lengths, dim ids, vsize
    pos = 4

    def take(fmt: str) -> int:
        nonlocal pos
        (value,) = struct.unpack_from(fmt, buf, pos)
        pos += struct.calcsize(fmt)
        return int(value)

    def skip_name() -> None:
        nonlocal pos
        n = take(size_fmt)
        if n < 0 or pos + n > len(buf):
            raise ValueError("name runs past the end of the file")
        pos += -(-n // 4) * 4

    def skip_atts() -> None:
        nonlocal pos
        tag, n = take(">i"), take(size_fmt)
        if tag not in (0, 0x0C) or n < 0:
            raise ValueError("bad attribute list")
        for _ in range(n):
            skip_name()
            nc_type = take(">i")
            if nc_type not in _NC3_TYPE_SIZE:
                raise ValueError(f"unknown attribute type {nc_type}")
            n_values = take(size_fmt)  # not inlined into `pos +=`: take() moves pos itself
            if n_values < 0:
                raise ValueError("bad attribute length")
            pos += -(-n_values * _NC3_TYPE_SIZE[nc_type] // 4) * 4

    numrecs = take(">Q" if version == 5 else ">I")
    streaming = numrecs == (2**64 - 1 if version == 5 else 2**32 - 1)
    tag, n = take(">i"), take(size_fmt)
    if tag not in (0, 0x0A) or n < 0:
        raise ValueError("bad dimension list")
    dim_len = []
    for _ in range(n):
        skip_name()
        dim_len.append(take(size_fmt))
    skip_atts()
    tag, n = take(">i"), take(size_fmt)
    if tag not in (0, 0x0B) or n < 0:
        raise ValueError("bad variable list")
    fixed_end = pos
    records: list[tuple[int, int]] = []  # (begin, bytes per record)
    for _ in range(n):
        skip_name()
        dimids = [take(size_fmt) for _ in range(take(size_fmt))]
        skip_atts()
        nc_type = take(">i")
        if nc_type not in _NC3_TYPE_SIZE or any(not 0 <= d < len(dim_len) for d in dimids):
            raise ValueError("bad variable definition")
        take(size_fmt)  # vsize: clamped for > 4 GiB variables, so recomputed below
        begin = take(">i" if version == 1 else ">q")
        shape = [dim_len[d] for d in dimids]
        if shape and shape[0] == 0:  # the record (unlimited) dimension comes first
            records.append((begin, math.prod(shape[1:]) * _NC3_TYPE_SIZE[nc_type]))
        else:
            fixed_end = max(fixed_end, begin + math.prod(shape) * _NC3_TYPE_SIZE[nc_type])
    need = fixed_end
    if records and numrecs and not streaming:
        # Record slabs are padded to 4 bytes, except when there is a single record variable.
        recsize = records[0][1] if len(records) == 1 else sum(-(-b // 4) * 4 for _, b in records)
        need = max(need, *(begin + (numrecs - 1) * recsize + b for begin, b in records))
    return need


def _size_chunk_caches(nc: Any, names: list[str], label: str, cap: int) -> int:
    """Size each variable's HDF5 chunk cache to one time-slab of chunks and one chunk more; returns
    the largest time chunk.

    A block reads every point of a run of time steps, so a chunk is needed again only by the next
    block, when the block boundary falls inside its time span: one slab (the chunks of one time span
    across the grid) must stay cached, and one chunk more leaves room for the first chunk of the
    next slab. More is waste that stays resident until the part is released (netCDF-C's default is
    64 MiB a variable, whatever the chunking: a global day of hourly chunks kept 384 MiB per file
    for nothing).
    """
    time_chunk = 1
    for name in names:
        var = nc.variables[name]
        chunks = var.chunking()
        tdims = [i for i, d in enumerate(var.dimensions) if d in _TIME_DIMS]
        if chunks == "contiguous" or not tdims:
            continue
        ti = tdims[0]
        time_chunk = max(time_chunk, int(chunks[ti]))
        # On levels, a global hour is read a run of levels at a time (stage.block): with one step a
        # chunk, no chunk serves two blocks' levels unless it spans levels, so one layer of level
        # chunks is the slab (not all 37 levels' chunks, which stayed resident: 154 MB a variable).
        layer = {i for i, d in enumerate(var.dimensions) if d in LEVEL_NAMES} if int(chunks[ti]) == 1 else set()
        n_chunks = 1
        chunk = slab = int(chunks[ti]) * var.dtype.itemsize
        for i, (c, length) in enumerate(zip(chunks, var.shape, strict=True)):
            if i != ti:
                n_chunks *= -(-length // c)
                slab *= c if i in layer else -(-length // c) * c
                chunk *= c
        _, nelems, preemption = var.get_var_chunk_cache()
        var.set_var_chunk_cache(size=min(slab + chunk, cap), nelems=max(nelems, 4 * n_chunks + 1),
                                preemption=preemption)
        if slab > cap:
            log.warning("%s: %s is chunked %s steps deep; one time-slab of chunks is %d MiB, more than "
                        "the %d MiB chunk cache, so blocks shorter than %s steps re-decompress chunks",
                        label, name, chunks[ti], slab >> 20, cap >> 20, chunks[ti])
    return time_chunk


def _lat_chunk(nc: Any, names: list[str]) -> int:
    """The largest latitude chunking of the variables ``names`` (0 when none is chunked)."""
    rows = 0
    for name in names:
        var = nc.variables[name]
        chunks = var.chunking()
        if chunks == "contiguous":
            continue
        for c, d in zip(chunks, var.dimensions, strict=True):
            if d in _LAT_NAMES:
                rows = max(rows, int(c))
    return rows


def release_chunk_caches(nc: Any, names: list[str]) -> None:
    """Free what a part's chunk caches hold. Setting a variable's cache makes netCDF-C reopen its HDF5
    dataset, which drops the cached chunks; the size itself is kept for a later read."""
    for name in names:
        var = nc.variables[name]
        size, nelems, preemption = var.get_var_chunk_cache()
        var.set_var_chunk_cache(size=0, nelems=nelems, preemption=preemption)
        var.set_var_chunk_cache(size=size, nelems=nelems, preemption=preemption)


def open_part(path: Path, label: str, kind: str, chunk_cache_bytes: int,
               by_name: Mapping[str, Variable] = BY_SHORT_NAME, levels: tuple[int, ...] = ()) -> Part:
    """One NetCDF file opened; ``by_name``: the load's variables by their name in the file; ``levels``:
    the dataset's pressure levels (hPa), empty for a dataset without levels."""
    if kind == "nc3":
        _check_nc3_size(path, label)
    try:
        nc = netCDF4.Dataset(path, "r")
    except OSError as exc:
        raise StageError(f"{label}: not a readable NetCDF file, corrupt or truncated ({exc})") from None
    try:
        time_chunk, row_chunk = 1, 0
        if kind == "hdf5":
            names = [n for n in nc.variables if n in by_name]
            time_chunk = _size_chunk_caches(nc, names, label, chunk_cache_bytes)
            row_chunk = _lat_chunk(nc, names)
        # Wrapping our own handle keeps the chunk caches set above and lets ds.close() close it.
        store = xr.backends.NetCDF4DataStore(nc)  # type: ignore[no-untyped-call]  # untyped in xarray
        ds = xr.open_dataset(store, mask_and_scale=True, decode_times=True,
                             decode_timedelta=False, cache=False)
    except Exception as exc:
        nc.close()
        raise StageError(f"{label}: cannot be read as NetCDF ({type(exc).__name__}: {exc})") from exc
    try:
        part = _describe(ds, label, time_chunk, by_name, levels)
        part.row_chunk = row_chunk
        if kind == "hdf5":
            part.nc = nc
        return part
    except BaseException:
        ds.close()
        raise


def _describe(ds: xr.Dataset, label: str, time_chunk: int, by_name: Mapping[str, Variable],
              dataset_levels: tuple[int, ...] = ()) -> Part:
    table_names: list[str] = []
    ignored: list[str] = []
    for name in map(str, ds.data_vars):
        if name in by_name:
            table_names.append(name)
        elif any(d in ds[name].dims for d in _LAT_NAMES) and any(d in ds[name].dims for d in _LON_NAMES):
            ignored.append(name)  # bounds, scalars and other metadata are not worth naming
    if not dataset_levels:
        # A variable on pressure levels, loadable or not, says the file is not single levels.
        for name in [*table_names, *ignored]:
            lev = [str(d) for d in ds[name].dims if d in LEVEL_NAMES]
            if lev:
                found = ", ".join(f"{v:g}" for v in np.asarray(ds[lev[0]].values, dtype=np.float64).ravel()) \
                    if lev[0] in ds.variables else "?"
                raise StageError(f"{label}: {name} is on pressure levels ({lev[0]}: {found} hPa), not single "
                                 "levels; load it as the pressure-levels dataset (--dataset pressure-levels)")
    ds = _scalar_date_as_time(ds, table_names, label)
    part = Part(label=label, ds=ds, table_names=table_names, ignored=ignored, time_chunk=time_chunk)
    if not table_names:
        return part

    dims0: tuple[str, ...] | None = None
    for name in table_names:
        dims = tuple(map(str, ds[name].dims))
        tdims = [d for d in dims if d in _TIME_DIMS]
        lat = [d for d in dims if d in _LAT_NAMES]
        lon = [d for d in dims if d in _LON_NAMES]
        lev = [d for d in dims if d in LEVEL_NAMES]
        if dataset_levels and not lev:
            raise StageError(f"{label}: {name} has no pressure level dimension (its dimensions are {dims}); "
                             "the file is not on pressure levels: load it as a dataset without levels "
                             "(--dataset single-levels)")
        if not tdims:
            raise StageError(f"{label}: {name} has no time dimension (valid_time or time); "
                             f"its dimensions are {dims}")
        extra = set(dims) - {*tdims[:1], *lat[:1], *lon[:1], *lev[:1], _EXPVER}
        if len(tdims) != 1 or len(lat) != 1 or len(lon) != 1 or len(lev) > 1 or extra:
            shape = "[pressure_level,] " if dataset_levels else ""
            raise StageError(f"{label}: {name} has dimensions {dims}; expected (valid_time or time, "
                             f"[expver,] {shape}latitude, longitude) - ensemble members are not loadable")
        if dims0 is not None and set(dims) != set(dims0):
            raise StageError(f"{label}: {name} has dimensions {dims} but {table_names[0]} has {dims0}")
        dims0 = dims
    assert dims0 is not None
    part.time_dim = next(d for d in dims0 if d in _TIME_DIMS)
    part.lat_dim = next(d for d in dims0 if d in _LAT_NAMES)
    part.lon_dim = next(d for d in dims0 if d in _LON_NAMES)
    if dataset_levels:
        part.level_dim = next(d for d in dims0 if d in LEVEL_NAMES)
        _describe_levels(part, ds, dataset_levels)

    t = ds[part.time_dim].values
    if not np.issubdtype(t.dtype, np.datetime64):
        units = ds[part.time_dim].attrs.get("units") or ds[part.time_dim].encoding.get("units")
        raise StageError(f"{label}: the time coordinate {part.time_dim} could not be decoded as dates "
                         f"(units {units!r})")
    times = t.astype("datetime64[s]")
    if np.isnat(times).any():
        raise StageError(f"{label}: the time coordinate {part.time_dim} has missing values")
    if times.size > 1 and not (np.diff(times.astype(np.int64)) > 0).all():
        raise StageError(f"{label}: the time steps of {part.time_dim} are not strictly increasing")
    part.times = times

    part.lat = np.asarray(ds[part.lat_dim].values, dtype=np.float64)
    part.lon = np.asarray(ds[part.lon_dim].values, dtype=np.float64)
    if not (np.isfinite(part.lat).all() and np.isfinite(part.lon).all()):
        raise StageError(f"{label}: latitude or longitude has missing values")

    if _EXPVER in dims0:
        raw = ds[_EXPVER].values if _EXPVER in ds.variables else np.arange(1, ds.sizes[_EXPVER] + 1)
        labels = [_expver_label(v) for v in raw]
        part.expver = tuple(sorted(set(labels)))
        part.expver_order = tuple(int(i) for i in np.argsort(labels, kind="stable"))
    elif _EXPVER in ds.variables:
        part.expver = tuple(sorted({_expver_label(v) for v in np.unique(ds[_EXPVER].values)}))
    return part


def _scalar_date_as_time(ds: xr.Dataset, table_names: list[str], label: str) -> xr.Dataset:
    """``ds`` with a time dimension where it has none and says its time in a scalar coordinate ``date``
    (YYYYMMDD): the monthly means the 2024 CDS-Beta delivered (a ZIP of netCDF members whose month is
    ``date`` = 20151001, no ``valid_time``) become a ``valid_time`` of that day at 00 UTC, as the
    current CDS stamps a month's mean. Any other ``ds`` is returned as it is."""
    if not table_names or any(d in ds[n].dims for n in table_names for d in _TIME_DIMS):
        return ds
    if "date" not in ds.variables or ds["date"].ndim != 0:
        return ds
    raw = ds["date"].values.item()
    text = str(int(raw)) if isinstance(raw, int | np.integer | float) and float(raw).is_integer() else str(raw)
    try:
        day = datetime.strptime(text, "%Y%m%d")
    except ValueError:
        raise StageError(f"{label}: the scalar coordinate date is {raw!r}, not a date YYYYMMDD") from None
    out = ds.drop_vars("date").expand_dims(valid_time=[np.datetime64(day.strftime("%Y-%m-%dT00:00"), "ns")])
    out.set_close(ds.close)  # closing the view closes the file
    return out


def _describe_levels(part: Part, ds: xr.Dataset, dataset_levels: tuple[int, ...]) -> None:
    """The part's pressure levels as whole hPa, each one of the dataset's and none twice."""
    dim, label = part.level_dim, part.label
    if dim not in ds.variables:
        raise StageError(f"{label}: the level dimension {dim} has no coordinate; which levels it holds is unknown")
    raw = np.asarray(ds[dim].values, dtype=np.float64).ravel()
    units = str(ds[dim].attrs.get("units", "hPa") or "hPa").strip().lower()
    if units in ("pa", "pascal", "pascals"):
        raw = raw / 100.0
    elif units not in ("hpa", "millibars", "millibar", "mbar", "mb"):
        raise StageError(f"{label}: the level coordinate {dim} is in {units!r}; expected hPa (millibars)")
    if not np.isfinite(raw).all() or (raw != np.rint(raw)).any():
        raise StageError(f"{label}: the levels of {dim} are not whole hPa: {', '.join(f'{v:g}' for v in raw)}")
    levels = raw.astype(np.int64)
    unknown = sorted(set(levels.tolist()) - set(dataset_levels))
    if unknown:
        raise StageError(f"{label}: level(s) {', '.join(map(str, unknown))} hPa are not pressure levels of the "
                         f"dataset ({', '.join(map(str, dataset_levels))})")
    if np.unique(levels).size != levels.size:
        raise StageError(f"{label}: a level of {dim} repeats ({', '.join(map(str, levels))})")
    order = np.argsort(levels, kind="stable")
    part.levels = tuple(int(v) for v in levels[order])
    part.level_order = tuple(int(i) for i in order)


def _expver_label(v: object) -> str:
    """'0001' whether the file says 1 (old CDS, int) or '0001' (new CDS, string)."""
    if isinstance(v, bytes):
        v = v.decode()
    if isinstance(v, str):
        v = v.strip()
        return f"{int(v):04d}" if v.isdigit() else v
    return f"{int(v):04d}"  # type: ignore[call-overload]
