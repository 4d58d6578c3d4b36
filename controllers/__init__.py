"""Reconcilers, one per module: read the cache, call domain code in `internal/`, write."""
