"""ERA5's experiment versions: what the CDS marks each hour with (``expver``).

The CDS publishes a month some five days after its end as ERA5T, expver ``0005``; final ERA5,
``0001``, replaces it two to three months later. The ledger records which a month holds, the
schedule reloads ERA5T months once final ERA5 exists, and the page marks them.
"""

FINAL = "0001"
PRELIMINARY = "0005"  # ERA5T
