"""Per-step figures, in one namespace for their callers: written for every task of every run
(``track.figures``), sent to an optional stats sink (``track.stats``), logged as progress lines while a
long step runs (``track.progress``) and read back by the dashboard (``track.dashboard``)."""

from era5etl.track.dashboard import (
    latest_figures as latest_figures,
    load_chunks as load_chunks,
    load_runs as load_runs,
    task_seconds as task_seconds,
)
from era5etl.track.figures import (
    StepFigures as StepFigures,
    emit_step as emit_step,
    record as record,
    run_figures as run_figures,
    timed as timed,
)
from era5etl.track.progress import (
    Chunk as Chunk,
    ChunkLike as ChunkLike,
    Progress as Progress,
    progress_reporter as progress_reporter,
)
from era5etl.track.stats import (
    STAT_PREFIX as STAT_PREFIX,
    StatsSink as StatsSink,
    peak_rss_mb as peak_rss_mb,
    set_stats_sink as set_stats_sink,
    stat_name as stat_name,
    stats_sink as stats_sink,
)
