"""Tune-half sweeps that chose the defaults, and ideas measured and rejected (docs/experiments.md)."""
