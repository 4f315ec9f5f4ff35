"""The pipeline's error: a step that cannot go on (a Failure, exit status 1)."""

from __future__ import annotations

from era5etl.core.errors import Failure


class PipelineError(Failure, RuntimeError):
    """A step cannot go on; the message says what is wrong and what to do."""
