"""Read: the table read back the way people ask it, and the reads timed."""
