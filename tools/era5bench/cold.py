"""``python -m era5bench cold-climate``: ``climate --place`` as a user starts it, a new process each time
(imports, the gazetteer, a new connection's first reads), timed from outside; with ``--against DIR``
the same command from another checkout's ``include/`` (say the code before a change, from ``git worktree
add``) alternating with this one, so both see the same machine."""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


def _once(args: argparse.Namespace, pythonpath: str | None) -> tuple[float, str]:
    command = [sys.executable, "-m", "era5etl", "climate", "--place", args.place, "--variable", args.variable,
               "--baseline", args.baseline, "--json", "--table", args.table]
    env = {**os.environ, **({"PYTHONPATH": pythonpath} if pythonpath else {})}
    began = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    wall = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(f"climate failed ({done.returncode}): {done.stderr.strip()[-1000:]}")
    return wall, done.stdout.strip().splitlines()[-1]


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m era5bench cold-climate",
                                description="a cold climate --place process, timed (and another checkout's)")
    p.add_argument("--table", required=True, help="a table holding the place's hours, e.g. 1940-2024")
    p.add_argument("--place", default="Jakarta")
    p.add_argument("--variable", default="temperature_2m")
    p.add_argument("--baseline", default="1961-1990")
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--against", type=Path, metavar="DIR",
                   help="another checkout (its include/ goes first on PYTHONPATH; its .local must be this "
                        "one's, e.g. a symlink, so both read one server)")
    args = p.parse_args(argv)
    kinds = {"this": None, **({"against": str(args.against / "include")} if args.against else {})}
    walls: dict[str, list[float]] = {k: [] for k in kinds}
    answers: dict[str, str] = {}
    for _ in range(args.runs):
        for kind, path in kinds.items():
            wall, answers[kind] = _once(args, path)
            walls[kind].append(wall)
    for kind, times in walls.items():
        print(f"{kind}: median {statistics.median(times):.2f} s, {min(times):.2f}-{max(times):.2f} s over "
              f"{len(times)} runs ({', '.join(f'{t:.2f}' for t in sorted(times))})")
    if len(answers) == 2:
        print("the same JSON" if len(set(answers.values())) == 1 else "the JSON differs")
    print(f"load average {os.getloadavg()[0]:.2f}")
    return 0
