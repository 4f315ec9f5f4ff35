"""A local stand-in for the Copernicus Climate Data Store: its API for the real cdsapi client, and
synthetic ERA5 downloads in the CDS's formats. Not the product: the demo and the tests use it."""
