"""Pipeline: one month's run through the stages, the ledger kept, and the schedule's policy."""

from era5etl.pipeline.steps import (
    MonthJob as MonthJob,
    PipelineError as PipelineError,
    ValidationFailed as ValidationFailed,
    compress_step as compress_step,
    fetch_step as fetch_step,
    load_step as load_step,
    prepare as prepare,
    run_month as run_month,
    stage_step as stage_step,
    validate_step as validate_step,
)
