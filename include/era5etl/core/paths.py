"""Where the checkout is: its root holds dags/, plugins/ and the local state in .local/.

An installed package (a wheel in an Airflow image) has no checkout around it: there the root is the
directory the process started in, so the local defaults (``.local/staging`` and the like) land in the
working directory instead of inside site-packages; a deployment sets ``ERA5_*`` paths explicitly.
"""

from pathlib import Path

_SOURCE_ROOT = Path(__file__).resolve().parents[3]
IN_CHECKOUT = (_SOURCE_ROOT / "include" / "era5etl").is_dir() and (_SOURCE_ROOT / "pyproject.toml").is_file()
PROJECT_ROOT = _SOURCE_ROOT if IN_CHECKOUT else Path.cwd()
