"""The GRIB stager against the real GRIB1 files the CDS delivered (tests/data/era5-samples, README there)
and against files built from them: rows and values equal to ecCodes' own decoding after the unit
change, ERA5T beside final ERA5, duplicates, other streams named, files cut short or with junk refused.

The reference decodes every message in full with ecCodes and its own keys (``paramId``,
``validityDate``/``validityTime``), independent of the stager's header shortcuts.
"""

from __future__ import annotations

import functools
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import eccodes
import numpy as np
import pytest

from era5etl.core.grid import location_ids
from era5etl.core.variables import BY_PARAM_ID, VARIABLES
from era5etl.stage import StageError, open_download

WAVE_POINT = "grib1_2t_10u_10v_2d_tp_plus_wave_point_2015-08_2days_hourly.grib"
DAILY_OFFGRID = "grib1_2t_2d_tcrw_tp_mx2t_mn2t_5x4_offgrid_2018_to_2025_daily0200utc_expver0001_0005.grib"
POINT_360 = "grib1_2t_point_lon237.5_2023-01_to_2026-04_hourly_expver0001_0005.grib"
TP_5X9 = "grib1_tp_5x9_2023-01_to_2023-11_hourly_expver0001_0005.grib"
TABLE = {v.param_id: v for v in VARIABLES}


@pytest.fixture(scope="module")
def point_360(samples: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """POINT_360's first 500 and last 2,000 messages, byte for byte: its 0-360 longitude and its switch
    to ERA5T (the last 1,747) in a tenth of its 28,795 messages of 110 bytes, each costing ecCodes
    a quarter of a millisecond to open whatever its size."""
    spans = list(eccodes.codes_extract_offsets_sizes(str(samples / POINT_360), eccodes.CODES_PRODUCT_GRIB, False))
    assert len(spans) == 28795
    data = (samples / POINT_360).read_bytes()
    out = tmp_path_factory.mktemp("grib") / "point_360_subset.grib"
    out.write_bytes(b"".join(data[o:o + n] for o, n in spans[:500] + spans[-2000:]))
    return out


def _messages(path: Path) -> Iterator[tuple[int, np.datetime64, str, np.ndarray]]:
    with path.open("rb") as f:
        while (h := eccodes.codes_grib_new_from_file(f)) is not None:
            try:
                d, t = eccodes.codes_get_long(h, "validityDate"), eccodes.codes_get_long(h, "validityTime")
                valid = np.datetime64(f"{d // 10000:04d}-{d // 100 % 100:02d}-{d % 100:02d}T{t // 100:02d}:"
                                      f"{t % 100:02d}", "s")
                yield (eccodes.codes_get_long(h, "paramId"), valid, eccodes.codes_get_string(h, "expver"),
                       eccodes.codes_get_values(h))
            finally:
                eccodes.codes_release(h)


@functools.cache
def _reference(path: Path) -> dict[str, dict[np.datetime64, np.ndarray]]:
    """column -> valid time -> table values: ecCodes' decoding, final (0001) over ERA5T (0005)."""
    best: dict[tuple[int, np.datetime64], tuple[str, np.ndarray]] = {}
    for param, valid, expver, values in _messages(path):
        if param in TABLE and ((param, valid) not in best or expver < best[param, valid][0]):
            best[param, valid] = (expver, values)
    out: dict[str, dict[np.datetime64, np.ndarray]] = {}
    for (param, valid), (_, values) in best.items():
        v = TABLE[param]
        out.setdefault(v.column, {})[valid] = (values * v.scale + v.offset).astype(np.float32)
    return out


@functools.cache
def _loaded(path: Path) -> tuple[dict[str, dict[np.datetime64, np.ndarray]], int]:
    """column -> valid time -> what the stager's blocks hold (hours with a value), and the rows."""
    got: dict[str, dict[np.datetime64, np.ndarray]] = {}
    rows = 0
    with open_download([path]) as s:
        for block in s.blocks(hours=7):
            rows += block.rows
            for column, values in block.values.items():
                for t, hour in zip(block.valid_time, values, strict=True):
                    if not np.isnan(hour).all():
                        got.setdefault(column, {})[t.astype("datetime64[s]")] = hour
        assert rows == s.rows
    return got, rows


@pytest.mark.parametrize(("name", "rows", "columns", "expver"), [
    (WAVE_POINT, 48, ["temperature_2m", "zonal_wind_10m", "meridional_wind_10m", "total_precipitation"], ["0001"]),
    (DAILY_OFFGRID, 2602 * 20, ["temperature_2m", "total_precipitation"], ["0001", "0005"]),
    ("point_360", 2500, ["temperature_2m"], ["0001", "0005"]),
    (TP_5X9, 7783 * 45, ["total_precipitation"], ["0001", "0005"]),
])
def test_real_files_load_what_eccodes_decodes(samples: Path, name: str, rows: int, columns: list[str],
                                               expver: list[str], request: pytest.FixtureRequest) -> None:
    path = request.getfixturevalue(name) if name == "point_360" else samples / name
    with open_download([path]) as s:
        assert (s.rows, [v.column for v in s.variables], s.expver) == (rows, columns, expver)
        assert s.notes == []  # each of these holds every (variable, hour) once
    want = _reference(path)
    got, loaded = _loaded(path)
    assert loaded == rows
    assert sorted(got) == sorted(want)
    for column in want:
        assert sorted(got[column]) == sorted(want[column]), column
        for t, values in want[column].items():
            np.testing.assert_array_equal(got[column][t], values, err_msg=f"{column} {t}")


def test_other_streams_and_variables_are_named_not_dropped(samples: Path) -> None:
    with open_download([samples / WAVE_POINT]) as s:
        ignored = "\n".join(s.ignored)
    # The wave model's parameters (table 140, meanSea) and 2d, which has no column in the table.
    for name, param in (("swh", 140229), ("mwd", 140230), ("mwp", 140232), ("2d", 168)):
        assert f"{name} (paramId {param}, 48 messages" in ignored, ignored
    with open_download([samples / DAILY_OFFGRID]) as s:
        assert {i.split(" ")[0] for i in s.ignored} == {"2d", "tcrw", "mx2t", "mn2t"}
        assert s.location_id is None  # 0.25 degree steps offset from the ERA5 lattice: stored with NULL ids


def test_accumulations_are_valid_at_the_end_of_their_step(samples: Path) -> None:
    # tp of the hour ending 2023-01-01 00:00 comes from the 18 UTC run of 2022-12-31 (step 5-6).
    with open_download([samples / TP_5X9]) as s:
        assert s.valid_time[0] == np.datetime64("2023-01-01T00:00")
        assert s.valid_time[-1] == np.datetime64("2023-11-21T06:00")
        assert np.all(np.diff(s.valid_time).astype(int) == 3600)


def test_one_valid_time_with_era5t_analyses_and_final_accumulations(samples: Path) -> None:
    # 2024-12-01 02:00: 2t from the ERA5T analysis, tp from the final 18 UTC forecast of the day before.
    at = np.datetime64("2024-12-01T02:00", "s")
    expvers = {(p, e) for p, v, e, _ in _messages(samples / DAILY_OFFGRID) if v == at and p in TABLE}
    assert expvers == {(167, "0005"), (228, "0001")}
    got, _ = _loaded(samples / DAILY_OFFGRID)
    assert at in got["temperature_2m"] and at in got["total_precipitation"]


def test_0_360_longitudes_become_the_tables(point_360: Path) -> None:
    with open_download([point_360]) as s:
        assert (float(s.latitude[0]), float(s.longitude[0])) == (47.75, -122.5)
        assert s.location_id is not None and int(s.location_id[0]) == int(location_ids(47.75, -122.5))


def _clone(path: Path, out: Path, *, expver: str | None = None, shift: float = 0.0, limit: int | None = None) -> None:
    """Append ``path``'s first ``limit`` messages to ``out`` re-encoded by ecCodes, expver and values changed."""
    with path.open("rb") as f, out.open("ab") as dst:
        n = 0
        while (h := eccodes.codes_grib_new_from_file(f)) is not None and (limit is None or n < limit):
            try:
                if expver is not None:
                    eccodes.codes_set_string(h, "expver", expver)
                if shift:
                    eccodes.codes_set_values(h, eccodes.codes_get_values(h) + shift)
                dst.write(eccodes.codes_get_message(h))
            finally:
                eccodes.codes_release(h)
            n += 1


def test_final_era5_wins_over_era5t_for_the_same_hour_and_says_so(samples: Path, tmp_path: Path) -> None:
    source = samples / TP_5X9
    mixed = tmp_path / "mixed.grib"
    _clone(source, mixed, expver="0005", shift=0.001, limit=100)  # ERA5T copies of the first 100 hours first
    mixed.write_bytes(mixed.read_bytes() + source.read_bytes())
    with open_download([mixed]) as s:
        assert s.rows == 7783 * 45
        assert s.notes == ["tp: 100 hour(s) in both expver 0005 and 0001; 0001 loaded"]
    got, _ = _loaded(mixed)
    want = _reference(source)
    for t, values in want["total_precipitation"].items():
        np.testing.assert_array_equal(got["total_precipitation"][t], values)


def test_an_hour_twice_loads_once_if_equal_and_is_refused_if_not(samples: Path, tmp_path: Path) -> None:
    source = samples / TP_5X9
    twice = tmp_path / "twice.grib"
    twice.write_bytes(source.read_bytes() + source.read_bytes()[:0])
    _clone(source, twice, limit=3)
    with open_download([twice]) as s:
        assert s.rows == 7783 * 45
        assert s.notes == ["tp: 3 hour(s) in two identical messages, loaded once"]
    differ = tmp_path / "differ.grib"
    differ.write_bytes(source.read_bytes())
    _clone(source, differ, shift=0.001, limit=1)
    with pytest.raises(StageError, match=r"tp at 2023-01-01T00:00:00 is in two messages with expver 0001 and "
                                         "different values; which to load is ambiguous"):
        open_download([differ])


@pytest.mark.parametrize("keep", [-1, -100, 0.5])
def test_a_file_cut_short_is_refused(samples: Path, tmp_path: Path, keep: float) -> None:
    data = (samples / WAVE_POINT).read_bytes()[:-10]  # without its zero padding: the cut is in a message
    short = tmp_path / "short.grib"
    short.write_bytes(data[:int(keep)] if keep < 0 else data[:int(len(data) * keep) + 7])
    with pytest.raises(StageError, match=r"cut short|not a GRIB message"):
        open_download([short])


def test_junk_after_or_between_messages_is_refused(samples: Path, tmp_path: Path) -> None:
    data = (samples / WAVE_POINT).read_bytes()  # its messages are followed by zero padding: that is fine
    after = tmp_path / "after.grib"
    after.write_bytes(data + b"<html>error</html>")
    with pytest.raises(StageError, match=r"28 bytes at offset 46,070 are not a GRIB message"):
        open_download([after])
    between = tmp_path / "between.grib"
    between.write_bytes(data[:120] + b"junk" + data[120:])
    with pytest.raises(StageError, match="not a GRIB message"):
        open_download([between])


def test_grib_and_netcdf_in_one_download_are_refused(samples: Path) -> None:
    with pytest.raises(StageError, match="both GRIB and NetCDF"):
        open_download([samples / TP_5X9, samples / "newcds_accum_tp_2025-05_hourly_expver0005.nc"])


def test_variables_of_the_table_by_param_id_are_the_catalogues() -> None:
    for v in VARIABLES:
        assert BY_PARAM_ID[v.param_id] is v


def test_blocks_read_only_their_window(samples: Path) -> None:
    with open_download([samples / TP_5X9]) as s:
        blocks = list(s.blocks(datetime(2023, 3, 1), datetime(2023, 3, 2), hours=5))
    assert [len(b.valid_time) for b in blocks] == [5, 5, 5, 5, 4]
    assert blocks[0].valid_time[0] == np.datetime64("2023-03-01T00:00")


@pytest.mark.parametrize("fill", [b"\x00", b"\xff"])
def test_a_grib_whose_section_1_is_overwritten_is_a_stage_error(samples: Path, tmp_path: Path, fill: bytes) -> None:
    # Issue 31: ecCodes' KeyValueNotFoundError escaped the stager (a traceback, exit 1) and load-file's
    # look at the headers; it is the file's fault, so a StageError (exit 2) naming the message.
    data = bytearray((samples / "grib1_tp_5x9_2023-01_to_2023-11_hourly_expver0001_0005.grib").read_bytes())
    data[8:28] = fill * 20  # section 1 (the product definition) of the first message, after section 0
    damaged = tmp_path / "damaged.grib"
    damaged.write_bytes(bytes(data))
    with pytest.raises(StageError, match="message 1 at offset 0 is damaged"), open_download([damaged]):
        pass


def test_every_sample_overwritten_at_bytes_20_to_60_is_refused_without_a_crash(samples: Path, tmp_path: Path) -> None:
    """Issue 47: bytes 20-60 of a real GRIB filled with 0xff or 0x00 gave a segfault (rc 139) or a
    ValueError traceback. Every GRIB sample so damaged, staged in a child process (a crash of ecCodes
    would kill it, not pytest): each a StageError naming the damaged message, and the child exits 0."""
    damaged = []
    for path in sorted(samples.glob("*.grib")):
        for fill in (b"\x00", b"\xff"):
            data = bytearray(path.read_bytes())
            data[20:60] = fill * 40
            damaged.append(tmp_path / f"{path.stem}_{fill.hex()}.grib")
            damaged[-1].write_bytes(bytes(data))
    child = (
        "import sys\n"
        "from pathlib import Path\n"
        "from era5etl.stage import open_download\n"
        "from era5etl.stage.errors import StageError\n"
        "for name in sys.argv[1:]:\n"
        "    try:\n"
        "        with open_download([Path(name)]):\n"
        "            print('staged', name)\n"
        "    except StageError as exc:\n"
        "        print('refused', exc)\n")
    done = subprocess.run([sys.executable, "-c", child, *map(str, damaged)], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    lines = done.stdout.splitlines()
    assert len(lines) == len(damaged) >= 18 and all(
        line.startswith("refused ") and "message 1 at offset 0" in line for line in lines), lines


def test_load_file_of_a_damaged_grib_is_exit_status_2(samples: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from era5etl.cli import main

    data = bytearray((samples / "grib1_tp_5x9_2023-01_to_2023-11_hourly_expver0001_0005.grib").read_bytes())
    data[8:28] = b"\x00" * 20
    damaged = tmp_path / "damaged.grib"
    damaged.write_bytes(bytes(data))
    # Refused while staging, before the database is asked for anything.
    assert main(["load-file", str(damaged), "--table", "never_made"]) == 2
    assert capsys.readouterr().err.startswith("error: ")
