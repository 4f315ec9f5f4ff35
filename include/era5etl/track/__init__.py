"""Track: what every run records, the month ledger (states) and the task metrics."""
