"""Stage: a download's files opened as one grid of rows, read in bounded blocks."""

from era5etl.stage.block import Block as Block, StageError as StageError
from era5etl.stage.download import StagedDownload as StagedDownload, open_download as open_download
