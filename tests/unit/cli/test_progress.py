"""The CLI's progress display: live on a terminal, silent otherwise (the log lines say it)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from era5etl.cli.progress import month_display, status_lines


def test_on_a_terminal_each_step_shows_and_the_load_counts_rows(capsys: pytest.CaptureFixture[str]) -> None:
    with month_display(1_000, enabled=True) as shown:
        for task in ("fetch", "stage", "load"):
            shown.on_step(task, "start")
            if task == "load":
                shown.on_chunk(SimpleNamespace(rows=400))
                shown.on_chunk(SimpleNamespace(rows=600))
            shown.on_step(task, "done")
    err = capsys.readouterr().err
    assert "fetch (CDS queue and download)" in err and "stage" in err
    assert "1000/1000" in err


def test_off_a_terminal_nothing_is_added(capsys: pytest.CaptureFixture[str]) -> None:
    with month_display(1_000, enabled=False) as shown:
        shown.on_step("load", "start")
        shown.on_chunk(SimpleNamespace(rows=1_000))
        shown.on_step("load", "done")
    assert capsys.readouterr() == ("", "")
    with status_lines("db up", enabled=False) as say:
        say("building the server image")
    assert capsys.readouterr().err == "building the server image\n"
