"""load.spill: runs' values written to an unlinked temporary file and read back exactly, whatever
their order, dtype or thread; nothing left on disk once closed."""

from __future__ import annotations

import os
import tempfile
import threading

import numpy as np

from era5etl.load.spill import Spill

DAY = np.datetime64("2020-01-01", "D")


def test_runs_are_read_back_exactly_in_any_order() -> None:
    rng = np.random.default_rng(0)
    spill = Spill()
    written = []
    for i in range(5):
        hour = {"temperature": rng.normal(size=1000 + i).astype(np.float32),
                "wind_speed": rng.normal(size=1000 + i)}  # float8, as the loader's wind speed
        hour["temperature"][::7] = np.nan
        written.append((spill.put(DAY, slice(i, i + 1000 + i), hour), hour))
    for run, hour in reversed(written):
        got = spill.get(run)
        assert got.keys() == hour.keys()
        for name, values in hour.items():
            assert got[name].dtype == values.dtype
            np.testing.assert_array_equal(got[name], values)
    spill.close()


def test_threads_put_and_get_side_by_side() -> None:
    spill = Spill()
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            for i in range(50):
                values = np.full(500, k * 1000 + i, dtype=np.float32)
                run = spill.put(DAY, slice(0, 500), {"t": values})
                np.testing.assert_array_equal(spill.get(run)["t"], values)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    spill.close()
    assert not errors


def _spill_files() -> list[str]:
    """This process's open files in the temporary directory that have no name there any more (as
    /proc shows them: Linux makes them with O_TMPFILE, never named)."""
    links = (os.readlink(f"/proc/self/fd/{fd}") for fd in os.listdir("/proc/self/fd")
             if os.path.exists(f"/proc/self/fd/{fd}"))
    return [link for link in links if link.startswith(tempfile.gettempdir()) and link.endswith("(deleted)")]


def test_the_file_has_no_name_on_disk_and_is_closed_with_the_spill() -> None:
    before = _spill_files()
    spill = Spill()
    assert _spill_files() == before  # made with the first run only
    spill.put(DAY, slice(0, 3), {"t": np.ones(3, np.float32)})
    made = [f for f in _spill_files() if f not in before]
    assert len(made) == 1
    spill.close()
    spill.close()  # twice: nothing
    assert _spill_files() == before
