"""Benchmarks of the pipeline: load methods, the sustained load, storage layouts. Not the product."""
