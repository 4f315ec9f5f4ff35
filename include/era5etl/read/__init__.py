"""Read: the table read back the way people ask it, and the reads timed.

``series`` (one place over time: ``nearest_point``, then hourly rows or the daily and monthly
rollups), ``maps`` (one hour over an area), ``plots`` (either as a PNG), and the rollups checked
against their hourly rows (``rollup_check``); the rollups are written by ``load`` and made by ``db.rollups``. The CLI's
``series`` and ``map`` commands and the HTTP API call the same functions.
"""
