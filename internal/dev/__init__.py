"""`make dev`: the operator running for real on a local control plane, with synthetic metrics and a live view.

`demo` orchestrates (control plane, preset, metrics backend, ballastd, workloads, cold start, resize), `usage`
is the synthetic usage model (pure functions), `metrics` the metrics.k8s.io backend serving it, `scenario` the
demo apps and pods, `preset` the `config/samples` loader, `operator` the ballastd child process, `progress`
the view. The entry point is `python -m ballast.internal.cmd.dev`.
"""
