"""Stage: a download's files (NetCDF or GRIB) opened as one grid of rows, read in bounded blocks."""

from era5etl.stage.block import Block as Block, StagedDownload as StagedDownload
from era5etl.stage.download import open_download as open_download, scratch_dir as scratch_dir
from era5etl.stage.errors import StageError as StageError
