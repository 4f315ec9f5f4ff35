"""Where a run's CPU went: the seconds of CPU each component of the one-command stack used, and the
machine's, between two snapshots.

A process's CPU is its own user + system time and, once it has waited for them, its children's
(``children_user``/``children_system``: the kernel adds an exited child's whole tree to the parent
that reaps it). So a component's CPU is, over the processes of its process group alive at a
snapshot, their own time plus their reaped children's: a task process that ran and exited between
two snapshots is counted in the executor worker that reaped it. The scheduler's group is split into
the scheduler's own process and the rest (the executor's workers and every task process they ran).
The database server is every process named ``postgres`` (the postmaster reaps its backends).

This is what separates Airflow's overhead (the scheduler's loop, the api-server answering the task
processes, starting task processes) from the tasks' own work and the database's.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

import psutil


def _times(proc: psutil.Process) -> float:
    t = proc.cpu_times()
    return float(t.user + t.system + t.children_user + t.children_system)


def snapshot(groups: dict[str, int]) -> dict[str, float]:
    """CPU seconds so far of each named process group (the scheduler's split in two), of the database
    server, and of the whole machine (``machine_busy``, ``machine_total``: every core's time)."""
    names = {group: name for name, group in groups.items()}
    out = {name: 0.0 for name in groups} | {"scheduler_tasks": 0.0, "postgres": 0.0}
    for proc in psutil.process_iter(["name"]):
        with contextlib.suppress(psutil.Error, OSError):
            if proc.info["name"] == "postgres":
                out["postgres"] += _times(proc)
                continue
            group = os.getpgid(proc.pid)
            name = names.get(group)
            if name is None:
                continue
            if name == "scheduler" and proc.pid != group:
                name = "scheduler_tasks"
            out[name] += _times(proc)
    machine = psutil.cpu_times()
    idle = machine.idle + getattr(machine, "iowait", 0.0)
    total = sum(machine)
    out["machine_busy"] = total - idle
    out["machine_total"] = total
    return out


def spent(before: dict[str, float], after: dict[str, float], per: int = 1) -> dict[str, Any]:
    """CPU seconds between two snapshots, per ``per`` (a month), and the machine's busy share."""
    delta = {k: after.get(k, 0.0) - before.get(k, 0.0) for k in after}
    total = delta.pop("machine_total")
    busy = delta.pop("machine_busy")
    named = sum(delta.values())
    return {"by_component_s": {k: round(v / per, 3) for k, v in sorted(delta.items(), key=lambda kv: -kv[1])},
            "stack_and_db_s": round(named / per, 3), "machine_busy_s": round(busy / per, 3),
            "machine_busy_share": round(busy / max(total, 1e-9), 3)}
