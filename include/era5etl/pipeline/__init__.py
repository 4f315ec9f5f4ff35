"""Pipeline: one month's run through the stages, the ledger kept, and the schedule's policy."""

from era5etl.pipeline.steps import (
    MonthJob as MonthJob,
)
from era5etl.pipeline.steps import (
    PipelineError as PipelineError,
)
from era5etl.pipeline.steps import (
    ValidationFailed as ValidationFailed,
)
from era5etl.pipeline.steps import (
    compress_step as compress_step,
)
from era5etl.pipeline.steps import (
    fetch_step as fetch_step,
)
from era5etl.pipeline.steps import (
    load_step as load_step,
)
from era5etl.pipeline.steps import (
    prepare as prepare,
)
from era5etl.pipeline.steps import (
    run_month as run_month,
)
from era5etl.pipeline.steps import (
    stage_step as stage_step,
)
from era5etl.pipeline.steps import (
    validate_step as validate_step,
)
