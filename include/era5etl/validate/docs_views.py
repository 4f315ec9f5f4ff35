"""Great Expectations' Data Docs views with Jinja's bytecode cache: the same pages, rendered without
compiling their templates again for every month.

GX builds a new Jinja environment for every page it renders and compiles its ~50 templates each
time: 0.7 s of a month's 1.0 s of Data Docs (cProfile of ``validate_step`` on a 441-point month),
paid by every validation, in every task process. Jinja's own ``FileSystemBytecodeCache`` keeps the
compiled templates on disk (written atomically, keyed by each template's source checksum), so the
first validation on a machine compiles them and every later one, in any process, loads them.
The site's configuration names these views (``validate.suite``); nothing else differs from GX's.
"""

from __future__ import annotations

import os
import tempfile
from functools import cache
from pathlib import Path

from great_expectations import __version__
from great_expectations.render.view.view import DefaultJinjaIndexPageView, DefaultJinjaPageView
from jinja2 import FileSystemBytecodeCache


@cache
def bytecode_cache() -> FileSystemBytecodeCache:
    """One cache a user and GX version: templates compiled by one GX are never loaded by another."""
    folder = Path(tempfile.gettempdir()) / f"era5etl-jinja-{os.getuid()}" / str(__version__)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    return FileSystemBytecodeCache(str(folder))


class CachedPageView(DefaultJinjaPageView):
    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.env.bytecode_cache = bytecode_cache()


class CachedIndexPageView(DefaultJinjaIndexPageView):
    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.env.bytecode_cache = bytecode_cache()
