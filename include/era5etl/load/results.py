"""What a load reports, per chunk and in total, and the error it raises."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass
class ChunkResult:
    start: str
    rows: int
    deleted: int
    bytes: int
    seconds: float
    copy_seconds: float = 0.0
    index_seconds: float = 0.0
    replaced: str = "new"  # "new", "truncate" (the chunk held only what this load replaces) or "delete"
    rollup_rows: int = 0  # daily rollup rows written in the chunk's transaction
    rollup_seconds: float = 0.0  # writing them (their aggregation is in the reader's time)
    sql_days: int = 0  # days of them SQL aggregated from the hourly rows, not the loader (load.rollup)

    @property
    def rows_per_s(self) -> float:
        return self.rows / self.seconds if self.seconds > 0 else 0.0


@dataclass
class LoadResult:
    rows: int = 0
    deleted: int = 0
    bytes: int = 0
    seconds: float = 0.0
    chunks: list[ChunkResult] = field(default_factory=list)
    # The rollups: daily rows (written in the chunks' transactions), monthly rows (after them), and
    # the seconds they cost: aggregating in the client, writing the daily rows, writing the monthly.
    daily_rows: int = 0
    monthly_rows: int = 0
    rollup_seconds: dict[str, float] = field(default_factory=dict)

    @property
    def rows_per_s(self) -> float:
        return self.rows / self.seconds if self.seconds > 0 else 0.0

    @property
    def sql_days(self) -> int:
        """Days whose daily rows SQL aggregated from the hourly rows (the loader did the rest)."""
        return sum(c.sql_days for c in self.chunks)

    def chunk_rates(self) -> list[dict[str, object]]:
        return [{**asdict(c), "rows_per_s": round(c.rows_per_s)} for c in self.chunks]
