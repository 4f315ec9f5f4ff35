"""The server image: PostgreSQL 17 and PostGIS from Debian 13, TimescaleDB Community built from its release source.

Debian packages only TimescaleDB's Apache-licensed edition (no columnstore, no continuous
aggregates), so the Community edition is built from the release source: a ``debootstrap
--variant=minbase trixie`` root with ``postgresql-17`` and the build dependencies, the source
checked, configured with the flags its own CI uses, ``make install``. That takes a few minutes on two
cores, so it happens once per machine: the finished root lives under ``ERA5_SYSTEM_DIR`` (default
``/var/cache/era5etl``), and every checkout's server (``db.local``) is a hard-linked copy of it
with its own data directory. A second clone on the same machine (CI clones next to a working copy)
gets a running server in seconds. PostGIS (Debian's ``postgresql-17-postgis-3``) is installed with
PostgreSQL; an image built before it was added gets it by :func:`add_packages` (its stamp lists the
packages), and a checkout's copy follows when the image's stamp changes (``db.local``).

The source: ``ERA5_TIMESCALEDB_SOURCE`` when set, else ``../shared/vendor/timescaledb-<v>.tar.gz``
beside the checkout when present, else the release archive downloaded from GitHub. Whatever its
origin, the unpacked tree must hash to ``SOURCE_TREE`` (the tag's tree, hashed file by file), so a
GitHub archive, whose bytes differ from ``git archive``'s, is checked as strictly as the vendored one.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import shutil
import subprocess
import tarfile
import tempfile
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

from era5etl import settings
from era5etl.core.paths import PROJECT_ROOT
from era5etl.db.errors import DatabaseError

log = logging.getLogger(__name__)

TIMESCALEDB_VERSION = "2.29.2"
POSTGRES_MAJOR = 17
# sha256 of the vendored archive (``git archive --prefix=timescaledb-2.29.2/ 2.29.2``), and of the
# unpacked tree (see source_tree_digest), which any archive of the same tag must match.
SOURCE_SHA256 = "964a1a10660cf1aacc37b86fae07cf9381110cd2afe3f8f7f9f2a1162a58a623"
SOURCE_TREE = "93c1aed98d4f9fbbf5ec9cb4ffbf2370f346a5919cb1c63fcc310d4bad8fabb4"
SOURCE_URL = f"https://github.com/timescale/timescaledb/archive/refs/tags/{TIMESCALEDB_VERSION}.tar.gz"
SOURCE_NAME = f"timescaledb-{TIMESCALEDB_VERSION}.tar.gz"
PACKAGES = (f"postgresql-{POSTGRES_MAJOR}",)
# Debian's own packages installed beside the server; an image built before one was added gets it
# installed into a copy of its root (add_packages), not a rebuild of TimescaleDB.
# pgBackRest: the backups and point-in-time restores of db.backup.
EXTRA_PACKAGES = (f"postgresql-{POSTGRES_MAJOR}-postgis-3", "pgbackrest")
BUILD_PACKAGES = (f"postgresql-server-dev-{POSTGRES_MAJOR}", "cmake", "gcc", "make", "libssl-dev",
                  "libkrb5-dev", "libicu-dev")
CMAKE_FLAGS = ("-DREGRESS_CHECKS=OFF", "-DTAP_CHECKS=OFF", "-DWARNINGS_AS_ERRORS=OFF", "-DLINTER=OFF",
               "-DCMAKE_BUILD_TYPE=RelWithDebInfo")
IMAGE_NAME = f"trixie-pg{POSTGRES_MAJOR}-timescaledb-{TIMESCALEDB_VERSION}"
STAMP = ".era5etl-image.json"

Progress = Callable[[str], None]


class ImageError(DatabaseError):
    """The server image cannot be built; the message says which step failed and how to fix it."""


def system_dir() -> Path:
    return settings.load().system_dir


def image_path() -> Path:
    return system_dir() / "images" / IMAGE_NAME


def image_ready(path: Path | None = None) -> bool:
    return ((path or image_path()) / STAMP).is_file()


def missing_packages(path: Path | None = None) -> tuple[str, ...]:
    """The EXTRA_PACKAGES a built image's stamp does not list."""
    have = set(image_stamp(path).get("packages", "").split())
    return tuple(p for p in EXTRA_PACKAGES if p not in have)


def image_stamp(path: Path | None = None) -> dict[str, str]:
    stamp = (path or image_path()) / STAMP
    return dict(json.loads(stamp.read_text())) if stamp.is_file() else {}


def ensure_image(progress: Progress | None = None) -> Path:
    """The machine's server image, built first if missing (under a machine-wide lock)."""
    path = image_path()
    if image_ready(path) and not missing_packages(path):
        return path
    say = progress or log.info
    path.parent.mkdir(parents=True, exist_ok=True)
    with _lock(path.parent / f".{IMAGE_NAME}.lock"):
        if not image_ready(path):  # another checkout may have built it while we waited
            _build(path, say)
        elif missing_packages(path):
            add_packages(path, say)
    return path


def add_packages(path: Path, say: Progress) -> None:
    """Install the EXTRA_PACKAGES the image lacks, and list them in its stamp (the caller holds the
    image's lock). Into a full copy of the root, then swapped in: the checkouts' servers are hard-linked
    copies of the image, and dpkg and apt write some files (their logs, caches) in place, which would
    change every checkout's copy at once."""
    if os.geteuid() != 0:
        raise ImageError("adding packages to the local server image needs root (chroot); run as root")
    missing = missing_packages(path)
    staging = path.with_name(path.name + ".partial")
    if staging.exists():
        shutil.rmtree(staging)
    say(f"adding {' '.join(missing)} from Debian 13 to the server image {path}")
    _run(["cp", "-a", str(path), str(staging)])
    try:
        _apt_install(staging, missing)
        stamp = image_stamp(staging)
        stamp["packages"] = " ".join(sorted({*stamp.get("packages", "").split(), *missing}))
        (staging / STAMP).write_text(json.dumps(stamp))
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    swap_in(staging, path)
    say(f"server image ready: {path} (with {' '.join(missing)})")


def swap_in(staging: Path, path: Path) -> None:
    """``staging`` (a finished root) put where the root ``path`` was, the old one removed after: two
    renames on one file system, so ``path`` is never half-written."""
    old = path.with_name(path.name + ".old")
    if old.exists():
        shutil.rmtree(old)
    path.rename(old)
    staging.rename(path)
    shutil.rmtree(old, ignore_errors=True)


def _apt_install(root: Path, packages: tuple[str, ...]) -> None:
    """Debian's ``packages`` into the image root, from the mirror in the settings; apt upgrades what is
    there (the server TimescaleDB was built against) only where a package needs a newer one."""
    mirror = settings.load().debian_mirror
    (root / "etc/apt/sources.list").write_text(f"deb {mirror} trixie main\n")
    _chroot(root, "apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "
                  "--no-install-recommends " + " ".join(packages) + " && apt-get clean")


@contextlib.contextmanager
def _lock(file: Path) -> Iterator[None]:
    with open(file, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _build(path: Path, say: Progress) -> None:
    if os.geteuid() != 0:
        raise ImageError("building the local TimescaleDB needs root (debootstrap, chroot); run as root or "
                         "set ERA5_DATABASE_URL to a PostgreSQL server with TimescaleDB")
    staging = path.with_name(path.name + ".partial")
    if staging.exists():
        shutil.rmtree(staging)
    if shutil.which("debootstrap") is None:
        say("installing debootstrap")
        _run(["apt-get", "update", "-q"])
        _run(["apt-get", "install", "-y", "-q", "debootstrap"], env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
    source = find_source(say)
    say(f"[1/4] Debian 13 root in {staging} (debootstrap, about a minute)")
    _run(["debootstrap", "--variant=minbase", "trixie", str(staging), settings.load().debian_mirror])
    # The server's cluster lives in our own data directory: no Debian-managed main cluster.
    conf = staging / "etc/postgresql-common/createcluster.conf"
    conf.parent.mkdir(parents=True, exist_ok=True)
    conf.write_text("create_main_cluster = false\n")
    say(f"[2/4] PostgreSQL {POSTGRES_MAJOR} and the build dependencies from Debian 13")
    _chroot(staging, "apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "
                     "--no-install-recommends " + " ".join(PACKAGES + EXTRA_PACKAGES + BUILD_PACKAGES)
            + " && apt-get clean")
    say(f"[3/4] unpacking TimescaleDB {TIMESCALEDB_VERSION} (checked: tree {SOURCE_TREE[:12]}...)")
    src_parent = staging / "usr/src"
    src_parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(source, "r:gz") as tar:
        tar.extractall(src_parent, filter="data")
    top = next(p for p in src_parent.iterdir() if p.is_dir() and p.name.startswith("timescaledb"))
    say(f"[4/4] building TimescaleDB {TIMESCALEDB_VERSION} Community (a few minutes on 2 cores)")
    jobs = max(1, os.cpu_count() or 1)
    _chroot(staging, f"cd /usr/src/{top.name} && ./bootstrap {' '.join(CMAKE_FLAGS)} >/tmp/bootstrap.log 2>&1 "
                     f"&& cd build && make -j{jobs} >/tmp/make.log 2>&1 && make install >/tmp/install.log 2>&1",
            logs=("/tmp/bootstrap.log", "/tmp/make.log", "/tmp/install.log"))
    shutil.rmtree(top)
    control = staging / f"usr/share/postgresql/{POSTGRES_MAJOR}/extension/timescaledb.control"
    tsl = staging / f"usr/lib/postgresql/{POSTGRES_MAJOR}/lib/timescaledb-tsl-{TIMESCALEDB_VERSION}.so"
    if not control.exists() or not tsl.exists():
        raise ImageError(f"the TimescaleDB build in {staging} installed no {control.name} or {tsl.name}")
    (staging / STAMP).write_text(json.dumps({
        "image": IMAGE_NAME, "timescaledb": TIMESCALEDB_VERSION, "postgresql": str(POSTGRES_MAJOR),
        "source_tree": SOURCE_TREE, "cmake_flags": " ".join(CMAKE_FLAGS),
        "packages": " ".join(sorted(EXTRA_PACKAGES))}))
    staging.rename(path)
    say(f"server image ready: {path}")


def find_source(say: Progress) -> Path:
    """The release archive, checked: given, vendored beside the checkout, or downloaded."""
    given = settings.load().timescaledb_source
    candidates = [given] if given else [PROJECT_ROOT.parent / "shared" / "vendor" / SOURCE_NAME]
    for path in candidates:
        if path.is_file():
            check_source(path)
            return path
    if given:
        raise ImageError(f"ERA5_TIMESCALEDB_SOURCE={given} is not a file")
    cache = system_dir() / "sources" / SOURCE_NAME
    if cache.is_file():
        check_source(cache)
        return cache
    say(f"downloading {SOURCE_URL}")
    cache.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=cache.parent, delete=False) as tmp:
        try:
            with urllib.request.urlopen(SOURCE_URL, timeout=60) as response:
                shutil.copyfileobj(response, tmp)
        except OSError as exc:
            Path(tmp.name).unlink(missing_ok=True)
            raise ImageError(f"cannot download {SOURCE_URL}: {exc}; put the release archive at "
                             f"{candidates[0]} or set ERA5_TIMESCALEDB_SOURCE") from None
    try:
        check_source(Path(tmp.name))
    except ImageError:
        Path(tmp.name).unlink(missing_ok=True)
        raise
    Path(tmp.name).rename(cache)
    return cache


def check_source(path: Path) -> None:
    """Refuse an archive that is not TimescaleDB's tagged release tree."""
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest == SOURCE_SHA256:
        return
    try:
        tree = source_tree_digest(path)
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise ImageError(f"{path} is not a readable .tar.gz: {exc}") from None
    if tree != SOURCE_TREE:
        raise ImageError(f"{path} is not the TimescaleDB {TIMESCALEDB_VERSION} release source "
                         f"(tree {tree[:16]}..., expected {SOURCE_TREE[:16]}...)")


def source_tree_digest(path: Path) -> str:
    """sha256 over the sorted (path below the top folder, kind, content sha256 or link target) entries.

    File modes and timestamps are left out: archivers set them differently for the same tag.
    """
    entries: list[tuple[str, str, str]] = []
    with tarfile.open(path, "r:gz") as tar:
        for member in tar:
            name = member.name.split("/", 1)[1] if "/" in member.name else ""
            if member.isfile():
                fh = tar.extractfile(member)
                assert fh is not None
                entries.append((name, "f", hashlib.sha256(fh.read()).hexdigest()))
            elif member.issym():
                entries.append((name, "l", member.linkname))
    h = hashlib.sha256()
    for entry in sorted(entries):
        h.update(("\0".join(entry) + "\n").encode())
    return h.hexdigest()


def _chroot(root: Path, script: str, logs: tuple[str, ...] = ()) -> None:
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8", "HOME": "/root"}
    result = subprocess.run(["chroot", str(root), "/bin/sh", "-c", script], capture_output=True, text=True,
                            env=env, check=False)
    if result.returncode != 0:
        tails = [f"--- {name}:\n" + "\n".join((root / name.lstrip("/")).read_text(errors="replace").splitlines()[-25:])
                 for name in logs if (root / name.lstrip("/")).exists()]
        raise ImageError(f"in the image root {root}: `{script[:120]}` failed ({result.returncode})\n"
                         + result.stderr[-2000:] + "\n".join(tails))


def _run(cmd: list[str], env: dict[str, str] | None = None) -> None:
    result = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if result.returncode != 0:
        raise ImageError(f"command failed ({result.returncode}): {' '.join(cmd)}\n"
                         f"{result.stdout[-2000:]}{result.stderr[-2000:]}")
