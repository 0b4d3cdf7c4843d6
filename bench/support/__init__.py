"""Helpers shared by the benchmark scripts (not a benchmark; `make bench` runs bench/*.py only)."""
