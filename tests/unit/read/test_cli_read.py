"""``series`` and ``map`` as the parser takes them: negative coordinates, one step, one output."""

from __future__ import annotations

import pytest

from era5etl.cli import build_parser


def test_series_takes_negative_coordinates_and_one_step() -> None:
    args = build_parser().parse_args(["series", "-33.9", "-70.5", "--from", "2024-01-01", "--monthly", "--csv"])
    assert (args.lat, args.lon, args.start, args.step, args.csv) == (-33.9, -70.5, "2024-01-01", "month", True)
    assert build_parser().parse_args(["series", "1", "2"]).step == "hour"


@pytest.mark.parametrize("argv", [
    ["series", "1", "2", "--daily", "--monthly"],
    ["series", "1", "2", "--csv", "--png", "x.png"],
    ["map", "2024-01-01T00", "--json", "--csv"],
    ["series", "north", "2"],
])
def test_conflicting_or_bad_options_are_refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        build_parser().parse_args(argv)
    assert done.value.code == 2
    assert "error:" in capsys.readouterr().err


def test_the_help_lists_every_option(capsys: pytest.CaptureFixture[str]) -> None:
    expected = {"series": ("--from", "--to", "--variables", "--daily", "--monthly", "--table", "--csv", "--json",
                           "--png"),
                "map": ("--variable", "--area", "--table", "--csv", "--json", "--png")}
    for command, options in expected.items():
        with pytest.raises(SystemExit):
            build_parser().parse_args([command, "--help"])
        text = capsys.readouterr().out
        assert all(option in text for option in options), command


def test_series_takes_an_area_instead_of_a_place() -> None:
    args = build_parser().parse_args(["series", "--area", "50/5/45/10", "--daily", "--variables",
                                      "total_precipitation"])
    assert (args.lat, args.lon, args.area, args.step) == (None, None, "50/5/45/10", "day")
    # A negative north edge is an option's value, not an option.
    assert build_parser().parse_args(["series", "--area=-10/5/-20/10"]).area == "-10/5/-20/10"
    with pytest.raises(SystemExit):
        build_parser().parse_args(["series", "--help"])
