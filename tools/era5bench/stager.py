"""``python -m era5bench stage``: the stager alone, no database: how fast a download becomes blocks of
rows in table units, for the same day fetched as NetCDF and as GRIB (the local CDS packs both on the
same 16-bit lattice, so the two hold the same values). The decode must stay far above what binary
COPY consumes (docs/benchmarks.md: ~0.8-0.9M rows/s end to end), or the loader would wait on it.

Each format's synthetic download is generated once into .local/bench/ (a global day: ~300 MB of GRIB,
~170 MB of NetCDF). Figures: rows/s over open + every block, and the process's peak RSS.
``cfgrib`` reads the same GRIB file through cfgrib's xarray view (every variable decoded), for
comparison: the reader the GRIB stager does not use.
"""

from __future__ import annotations

import argparse
import resource
import time
from collections.abc import Sequence
from datetime import date

from era5bench.common import log
from era5bench.downloads import cached_download, day_request


def _cfgrib(path: object) -> tuple[int, float]:
    import cfgrib

    began = time.perf_counter()
    datasets = cfgrib.open_datasets(str(path), indexpath="")
    opened = time.perf_counter() - began
    for ds in datasets:
        for da in ds.data_vars.values():
            da.values  # noqa: B018 -- decoded here: that is what is timed
    # cfgrib's accumulations are a (base time x step) cube padded with NaN; the day's rows are its hours
    # (those of the analyses, which have no step dimension) x points, as the stager counts them.
    instant = next(ds for ds in datasets if "step" not in ds.dims)
    hours = set(instant["valid_time"].values.ravel().astype("datetime64[h]").astype("int64").tolist())
    points = int(instant.sizes["latitude"] * instant.sizes["longitude"])
    return len(hours) * points, opened


def measure(data_format: str, area: Sequence[float] | None, hours: int) -> dict[str, float | int | str]:
    from era5etl.stage import open_download

    request = day_request([date(2020, 1, 1)], area)
    request["data_format"] = "grib" if data_format == "cfgrib" else data_format
    path = cached_download(request)
    began = time.perf_counter()
    if data_format == "cfgrib":
        rows, opened = _cfgrib(path)
    else:
        with open_download([path]) as staged:
            opened = time.perf_counter() - began
            rows = sum(block.rows for block in staged.blocks(hours=hours))
    seconds = time.perf_counter() - began
    return {"format": data_format, "rows": rows, "open_s": round(opened, 2), "seconds": round(seconds, 2),
            "rows_per_s": round(rows / seconds), "bytes": path.stat().st_size,
            "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}


def main(argv: Sequence[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m era5bench stage", description=__doc__.split("\n\n")[0])
    p.add_argument("--formats", default="netcdf,grib",
                   help="comma-separated: netcdf, grib, cfgrib (the GRIB file through cfgrib; default netcdf,grib)")
    p.add_argument("--area", default=None, help="N/W/S/E (default: the globe)")
    p.add_argument("--hours", type=int, default=1, help="hours per block (the loader reads a global hour at a time)")
    args = p.parse_args(argv)
    area = [float(v) for v in args.area.split("/")] if args.area else None
    for data_format in [f.strip() for f in args.formats.split(",") if f.strip()]:
        if data_format not in ("netcdf", "grib", "cfgrib"):
            p.error(f"unknown format {data_format!r}; netcdf, grib or cfgrib")
        r = measure(data_format, area, args.hours)
        log(f"stage {r['format']:<6} {r['rows']:,} rows in {r['seconds']:.2f} s (open {r['open_s']:.2f} s): "
            f"{r['rows_per_s']:,} rows/s from {int(r['bytes']) / 1e6:,.0f} MB, peak RSS {r['peak_rss_mib']} MiB")
    return 0
