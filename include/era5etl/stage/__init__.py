"""Stage: a download's files opened as one grid of rows, read in bounded blocks."""

from era5etl.stage.download import (
    Block as Block,
    StagedDownload as StagedDownload,
    StageError as StageError,
    open_download as open_download,
)
