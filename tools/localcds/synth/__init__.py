"""Deterministic, ERA5-shaped data written the way the new (2024+) CDS delivers it.

The layout copies the real downloads in tests/data/era5-samples byte for byte where it matters to
a reader: dimensions ``valid_time`` (int64 seconds since 1970), ``latitude`` (float64, north first)
and ``longitude`` (float64); a scalar ``number`` coordinate; a string ``expver`` coordinate along
``valid_time``; float32 data with a NaN ``_FillValue``, zlib level 1 with shuffle; the cfgrib
attributes. Instantaneous and accumulated variables go to separate files named as the CDS names
them, and a request holding both kinds is delivered as one ZIP of the two, again as the CDS does.

Values are a pure function of (seed, variable, grid point, hour), never of the rest of the request:
the same request always gives the same values, and two requests that overlap agree on the points
they share, so a reload of a differently shaped area never contradicts an earlier load. Changing
``seed`` gives a different but equally plausible "reanalysis" when a test needs to tell loads apart.

Generation runs in time slices sized to a value budget, each slice written straight into the
NetCDF variable, so a large area never needs a whole month in memory.

The package, one concern a module: :mod:`.variables` (the dataset and its parameters' metadata),
:mod:`.request` (request parsing), :mod:`.publication` (ERA5T latency, expver), :mod:`.fields`
(the values; :data:`FIELDS_VERSION` names them for caches), :mod:`.climate` (the planted warming in
them), :mod:`.noise` (their hashes), :mod:`.packing` (GRIB-style packing), :mod:`.netcdf` (one NetCDF
file), :mod:`.grib` (one GRIB1 file of every variable, for ``data_format: grib``: the same values,
encoded by ecCodes) and :mod:`.download` (the file or ZIP the CDS delivers). Import its API from here.
"""

from __future__ import annotations

from localcds.synth.download import (
    ACCUM_FILE as ACCUM_FILE,
    GRIB_FILE as GRIB_FILE,
    INSTANT_FILE as INSTANT_FILE,
    write_download as write_download,
)
from localcds.synth.fields import F64 as F64, FIELDS_VERSION as FIELDS_VERSION
from localcds.synth.grib import forecast_base as forecast_base, write_grib as write_grib
from localcds.synth.levels import PL_DATASET as PL_DATASET, PL_META as PL_META
from localcds.synth.netcdf import DEFAULT_SLICE_VALUES as DEFAULT_SLICE_VALUES, write_netcdf as write_netcdf
from localcds.synth.packing import PACKING_RANGES as PACKING_RANGES, grib_packed as grib_packed
from localcds.synth.publication import (
    ERA5T_LATENCY as ERA5T_LATENCY,
    FINAL_AFTER_MONTHS as FINAL_AFTER_MONTHS,
    NoDataError as NoDataError,
    available_times as available_times,
    expver_for as expver_for,
)
from localcds.synth.request import (
    RequestError as RequestError,
    SynthRequest as SynthRequest,
    hourly_request as hourly_request,
    parse_request as parse_request,
)
from localcds.synth.variables import DATASET as DATASET, META as META, VarMeta as VarMeta
