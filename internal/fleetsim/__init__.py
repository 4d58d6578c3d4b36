"""The fleet simulator (`ballast simulate`, `make demo`): days of a fleet in seconds, on the operator's own code,
with a VPA-recommender baseline on the same usage (docs/simulate.md).

Pure parts live here — the fleet (`fleet`), its usage (`usage`), a recorded fleet (`replay`), the simulated
cluster (`world`), the run loop (`run`), the VPA baseline (`vpa`), the figures and the verdict (`figures`) and
the report (`report`). The driver that runs the operator's reconcilers and admission handler on the in-memory API
is an entry point: `ballast.internal.cmd.simulate`.
"""
