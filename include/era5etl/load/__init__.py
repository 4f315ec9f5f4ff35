"""Load: blocks of rows into TimescaleDB chunks by binary COPY, then the month finished in the columnstore."""

from era5etl.load.chunks import chunk_plan as chunk_plan
from era5etl.load.errors import LoadError as LoadError
from era5etl.load.loader import load as load
from era5etl.load.locks import lock_chunk as lock_chunk, lock_month as lock_month
from era5etl.load.results import ChunkResult as ChunkResult, LoadResult as LoadResult
from era5etl.load.session import COLUMNSTORE_COPY_SETTINGS as COLUMNSTORE_COPY_SETTINGS
from era5etl.load.writer import CHUNK_INDEXES as CHUNK_INDEXES
