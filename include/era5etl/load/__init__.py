"""Load: blocks of rows into TimescaleDB chunks by binary COPY, then the month finished in the columnstore."""

from era5etl.load.loader import (
    CHUNK_INDEXES as CHUNK_INDEXES,
)
from era5etl.load.loader import (
    COLUMNSTORE_COPY_SETTINGS as COLUMNSTORE_COPY_SETTINGS,
)
from era5etl.load.loader import (
    ChunkResult as ChunkResult,
)
from era5etl.load.loader import (
    LoadError as LoadError,
)
from era5etl.load.loader import (
    LoadResult as LoadResult,
)
from era5etl.load.loader import (
    chunk_plan as chunk_plan,
)
from era5etl.load.loader import (
    load as load,
)
from era5etl.load.loader import (
    lock_chunk as lock_chunk,
)
from era5etl.load.loader import (
    lock_month as lock_month,
)
