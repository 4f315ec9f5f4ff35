"""Where the checkout is: its root holds sql/, dags/, plugins/ and the local state in .local/."""

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[3]
