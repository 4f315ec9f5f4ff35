"""Load: blocks of rows into TimescaleDB chunks by binary COPY, then the month finished in the columnstore."""

from era5etl.load.loader import (
    CHUNK_INDEXES as CHUNK_INDEXES,
    COLUMNSTORE_COPY_SETTINGS as COLUMNSTORE_COPY_SETTINGS,
    ChunkResult as ChunkResult,
    LoadError as LoadError,
    LoadResult as LoadResult,
    chunk_plan as chunk_plan,
    load as load,
    lock_chunk as lock_chunk,
    lock_month as lock_month,
)
