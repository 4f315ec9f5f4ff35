"""The session settings a write into the columnstore runs under, in one place: the COPY of a month's
rows (sorted by time, or in tiles), the INSERT that moves rows within a table (relayout, the copy of
years), and the lifted limit on rows decompressed by one transaction. Each is set for the current
transaction only (``set_config(..., true)``, ``SET LOCAL``), so a pooled connection keeps its own."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import psycopg

# TimescaleDB refuses a DML transaction that decompresses more rows than this setting (100,000 by
# default); a rerun of a month decompresses the month's batches it replaces, hence 0 (no limit).
DECOMPRESSION_LIMIT = "timescaledb.max_tuples_decompressed_per_dml_transaction"

# A COPY into a columnstore chunk laid out as sql/020_columnstore.sql says. The rows arrive sorted by
# its orderby (time, location_id), so the server needs no sort; batches of 5,000 rows rather than the
# default 1,000: fewer batch headers and TOAST pieces, while one place's history still decompresses
# only 5,000 rows an hour.
COLUMNSTORE_COPY_SETTINGS: dict[str, str] = {
    "timescaledb.enable_direct_compress_copy": "on",
    "timescaledb.enable_direct_compress_copy_client_sorted": "on",
    "timescaledb.compression_batch_size_limit": "5000",
}
# In tiles the rows go point by point within each tile (tile, location_id, time), a block of days at a
# time: a later block, a later load of the chunk's other months, or a merge of a month's daily chunks
# brings batches of the same points again, which overlap the earlier ones in that order. The server is
# therefore not told the rows are sorted: it sorts each buffer of rows (already in order, so cheaply)
# and marks the chunk as holding overlapping batches, which its reads then merge by batch instead of
# trusting the batches' order (a read of a tile ordered by (location_id, time) came back out of order
# from a merged month told otherwise). Buffers of 1M rows: a tile's day of a wide area stays one batch.
TILES_COPY_SETTINGS: dict[str, str] = {
    **COLUMNSTORE_COPY_SETTINGS,
    "timescaledb.enable_direct_compress_copy_client_sorted": "off",
    "timescaledb.direct_compress_copy_tuple_sort_limit": "1000000",
}
# Direct-to-columnstore INSERT with the rows sent in the table's order (tile, location_id, time), in
# batches of up to 5,000 rows as the loader writes them.
INSERT_SETTINGS: dict[str, str] = {
    "timescaledb.enable_direct_compress_insert": "on",
    "timescaledb.enable_direct_compress_insert_client_sorted": "on",
    "timescaledb.compression_batch_size_limit": COLUMNSTORE_COPY_SETTINGS["timescaledb.compression_batch_size_limit"],
}


def apply_settings(cur: psycopg.Cursor[Any], settings: Mapping[str, str]) -> None:
    """``settings`` for the rest of the cursor's transaction."""
    for setting, value in settings.items():
        cur.execute("SELECT set_config(%s, %s, true)", (setting, value))


def lift_decompression_limit(cur: psycopg.Cursor[Any]) -> None:
    """No limit on the rows this transaction decompresses (:data:`DECOMPRESSION_LIMIT`)."""
    cur.execute(f"SET LOCAL {DECOMPRESSION_LIMIT} = 0")
