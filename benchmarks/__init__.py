"""Benchmarks: the quality suite (``quality/``), speed and scale (``scale/``), tuning sweeps and
ideas tried and rejected (``experiments/``; the table is docs/experiments.md). See README.md here."""
