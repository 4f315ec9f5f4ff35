"""Stage: a download's files opened as one grid of rows, read in bounded blocks."""

from era5etl.stage.download import (
    Block as Block,
)
from era5etl.stage.download import (
    StagedDownload as StagedDownload,
)
from era5etl.stage.download import (
    StageError as StageError,
)
from era5etl.stage.download import (
    open_download as open_download,
)
