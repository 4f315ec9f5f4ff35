"""The schema, applied in order by era5etl.db. At the top of the repository, where a reader looks for
it; installed as the package ``era5etl.sql`` (pyproject.toml maps it there), so an installed wheel and
an editable checkout both read it with importlib.resources. The module itself is empty: it is what
makes the folder a package that setuptools' editable finder can map."""
