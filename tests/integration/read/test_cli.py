"""``python -m era5etl series`` and ``map`` on a month loaded through the pipeline: each output (a
table, CSV, JSON, a PNG, a series' Parquet file) and each refusal (exit status 2 and the reason)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from era5etl.cli import main

from ..helpers import cli

PNG = b"\x89PNG\r\n\x1a\n"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str], str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out.splitlines(), captured.err


def test_series_as_a_table_csv_json_and_png(capsys: pytest.CaptureFixture[str], month_table: str,
                                            tmp_path: Path) -> None:
    code, out, _ = _run(capsys, "series", "45.61", "7.39", "--table", month_table, "--to", "2024-03-01")
    assert code == 0
    assert out[0].startswith("point ") and out[0].endswith(f": 45.5, 7.5 (14.9 km from 45.61, 7.39), 24 hourly "
                                                           f"rows of {month_table}")
    assert "temperature_2m (degC)" in out[1] and "total_precipitation (mm)" in out[1]
    assert len(out) == 2 + 24 and out[2].lstrip().startswith("2024-03-01T00:00:00Z")

    code, out, _ = _run(capsys, "series", "45.61", "7.39", "--table", month_table, "--daily", "--csv",
                        "--variables", "temperature_2m,snowfall_sum")
    assert code == 0 and out[0].startswith("# point ")
    rows = list(csv.DictReader(io.StringIO("\n".join(out[1:]))))
    assert len(rows) == 31 and list(rows[0]) == ["time", "temperature_2m_min", "temperature_2m_max",
                                                 "temperature_2m_mean", "snowfall_sum"]

    code, out, _ = _run(capsys, "series", "45.61", "7.39", "--table", month_table, "--monthly", "--json",
                        "--from", "2024-03-01", "--to", "2024-03-31")
    data = json.loads(out[-1])
    assert code == 0 and data["time"] == ["2024-03-01T00:00:00Z"] and data["units"]["snowfall_sum"] == "mm"

    png = tmp_path / "series.png"
    code, out, _ = _run(capsys, "series", "45.5", "7.5", "--table", month_table, "--daily", "--png", str(png))
    assert code == 0 and out[-1] == f"wrote {png} ({png.stat().st_size:,} bytes)"
    assert png.read_bytes()[:8] == PNG and png.stat().st_size > 20_000


def test_series_as_parquet_is_the_csv(capsys: pytest.CaptureFixture[str], month_table: str, tmp_path: Path) -> None:
    """``--parquet FILE``: read back with pyarrow, the same rows and values as ``--csv`` prints."""
    import numpy as np
    import pyarrow.parquet as pq

    for step in ([], ["--daily"]):
        target = tmp_path / f"series{len(step)}.parquet"
        code, out, _ = _run(capsys, "series", "45.5", "7.5", "--table", month_table, *step, "--parquet", str(target))
        assert code == 0 and out[-1] == f"wrote {target} ({target.stat().st_size:,} bytes)"
        code, out, _ = _run(capsys, "series", "45.5", "7.5", "--table", month_table, *step, "--csv")
        rows = list(csv.DictReader(io.StringIO("\n".join(out[1:]))))
        table = pq.read_table(target)
        assert code == 0 and table.column_names == list(rows[0]) and table.num_rows == len(rows) == (
            31 if step else 31 * 24)
        times = [t.strftime("%Y-%m-%dT%H:%M:%SZ") for t in table.column("time").to_pylist()]
        assert times == [r["time"] for r in rows]
        for name in table.column_names[1:]:
            expected = np.array([np.nan if r[name] == "" else float(r[name]) for r in rows], dtype=np.float32)
            back = table.column(name).to_numpy(zero_copy_only=False).astype(np.float32)
            assert np.array_equal(back, expected, equal_nan=True), name
    code, _, err = _run(capsys, "series", "45.5", "7.5", "--table", month_table, "--parquet", "/no/such/dir/x.parquet")
    assert code == 2 and "--parquet /no/such/dir/x.parquet: the folder /no/such/dir does not exist" in err


def test_map_as_a_summary_csv_json_and_png(capsys: pytest.CaptureFixture[str], month_table: str,
                                           tmp_path: Path) -> None:
    code, out, _ = _run(capsys, "map", "2024-03-02T05:00", "--table", month_table)
    assert code == 0 and out[0].startswith(f"temperature_2m (degC) at 2024-03-02T05:00Z in {month_table}: 25 grid "
                                           "points in 46/7/45/8 (N/W/S/E); min ")
    code, out, _ = _run(capsys, "map", "2024-03-02T05", "--table", month_table, "--variable", "wind_speed_10m",
                        "--area", "46/7/45.5/7.5", "--csv")
    assert code == 0 and out[0] == "latitude,longitude,wind_speed_10m" and len(out) == 1 + 9
    code, out, _ = _run(capsys, "map", "2024-03-02T05:00Z", "--table", month_table, "--json")
    assert code == 0 and json.loads(out[-1])["time"] == "2024-03-02T05:00:00Z"
    png = tmp_path / "map.png"
    code, out, _ = _run(capsys, "map", "2024-03-02T05", "--table", month_table, "--png", str(png))
    assert code == 0 and png.read_bytes()[:8] == PNG and png.stat().st_size > 20_000


@pytest.mark.parametrize(("argv", "reason"), [
    (["series", "-33.9", "18.4"], "-33.9, 18.4 is outside the area {t} holds: 46/7/45/8"),
    (["series", "45.5", "7.5", "--variables", "rain"], "unknown variable(s) 'rain' at step=hour"),
    (["series", "45.5", "7.5", "--daily", "--variables", "zonal_wind_10m"], "'zonal_wind_10m' at step=day"),
    (["series", "45.5", "7.5", "--from", "2020-01-01", "--to", "2020-01-31"],
     "no hourly rows of {t} at point 781230 (45.5, 7.5) from 2020-01-01T00:00:00Z to 2020-02-01T00:00:00Z "
     "(exclusive); loaded there: 2024-03-01T00:00:00Z to 2024-03-31T23:00:00Z"),
    (["series", "45.5", "7.5", "--from", "2024-03-32"], "--from '2024-03-32' is not a day of the form YYYY-MM-DD"),
    (["series", "45.5", "7.5", "--from", "2024-03-05", "--to", "2024-03-01"], "--to 2024-03-01 is before --from"),
    (["series", "45.5", "7.5", "--png", "/no/such/folder/s.png"], "the folder /no/such/folder does not exist"),
    (["map", "2023-06-01T00"], "2023-06-01T00:00:00Z is not loaded in {t}: it holds hours from 2024-03-01T00"),
    (["map", "2024-03-02T05:30"], "is not on the hour"),
    (["map", "yesterday"], "time 'yesterday' is not an hour: give YYYY-MM-DDTHH:00"),
    (["map", "0001-01-01T00:00+14:00"], "is outside the calendar's years 1..9999"),
    (["series", "47", "7", "--daily", "--to", "9999-12-31"], "--to '9999-12-31': give a time in the years"),
    (["series", "47", "7", "--png", "/tmp"], "--png /tmp: is a folder"),
    (["series", "47", "7", "--parquet", "/dev/null"], "is not a regular file"),
    (["map", "2024-03-02T05", "--variable", "rain"], "unknown variable 'rain'"),
    (["map", "2024-03-02T05", "--area", "46/7/45"], "is not of the form N/W/S/E"),
    (["map", "2024-03-02T05", "--area", "10/0/0/5"], "holds no grid point inside 10/0/0/5"),
])
def test_each_refusal_is_exit_status_2_with_the_reason(capsys: pytest.CaptureFixture[str], month_table: str,
                                                       argv: list[str], reason: str) -> None:
    code, _, err = _run(capsys, *argv, "--table", month_table)
    assert code == 2
    assert err.startswith("error: ") and reason.format(t=month_table) in err, err


def test_a_missing_table_is_refused_and_the_entry_point_runs(month_table: str, tmp_path: Path) -> None:
    code, _, err, _ = cli("series", "45", "7", "--table", "no_such_table")
    assert code == 2 and "error: table 'no_such_table' does not exist" in err
    png = tmp_path / "m.png"
    code, out, err, _ = cli("map", "2024-03-31T23:00", "--table", month_table, "--png", str(png))
    assert out.startswith(f"wrote {png}")
    assert code == 0, err
    assert png.read_bytes()[:8] == PNG
