"""db.image's stamp: which of the packages installed beside the server an image lacks (its stamp
says which it has), the image's own current stamp listing them all."""

from __future__ import annotations

import json
from pathlib import Path

from era5etl.db.image import EXTRA_PACKAGES, STAMP, image_stamp, missing_packages


def _stamp(root: Path, **fields: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / STAMP).write_text(json.dumps({"image": "x", **fields}))
    return root


def test_an_image_from_before_the_packages_lacks_them(tmp_path: Path) -> None:
    assert "postgresql-17-postgis-3" in EXTRA_PACKAGES
    old = _stamp(tmp_path / "old")
    assert missing_packages(old) == EXTRA_PACKAGES
    new = _stamp(tmp_path / "new", packages=" ".join(EXTRA_PACKAGES))
    assert missing_packages(new) == () and image_stamp(new)["packages"] == " ".join(EXTRA_PACKAGES)
    other = _stamp(tmp_path / "other", packages="something-else")
    assert missing_packages(other) == EXTRA_PACKAGES
