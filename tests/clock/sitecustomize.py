"""The test clock: every Python process started with ``TEST_CLOCK_OFFSET_S`` in its environment sees
the wall clock moved by that many seconds, from its first line on (``scripts/test-at.sh`` puts this
folder on ``PYTHONPATH``, so pytest, the local CDS, Airflow's components and their task processes all
load it and agree). time-machine moves ``time.time``, ``datetime.now``, ``date.today`` and their kin
and lets them run on (``tick``); monotonic clocks and timeouts are left alone. The database server
keeps the real clock, as a server on another host would."""

import os

_offset = os.environ.get("TEST_CLOCK_OFFSET_S")
if _offset:
    import time

    import time_machine

    time_machine.travel(time.time() + float(_offset), tick=True).start()
