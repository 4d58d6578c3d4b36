"""Implementation packages: the runtime framework, the domain of the right-sizing operator and of each companion,
and the tools. Package map (docs/design.md, Layout, has the same with more words):

Framework (imported as `ballast.runtime` only, never through `ballast.internal`):
    `runtime/`        controller-runtime for Python: client, cache, controllers, manager, admission, envtest

Right-sizing operator (Ballast itself):
    `quantity/`       Kubernetes quantities, exact
    `naming/`         profile identity: labels, the policy key and discriminator, profile names and hashes
    `policy/`         which ClusterResourcePolicy or ResourcePolicy governs a pod
    `enrollment/`     the enrollment contract and the cached pod (`PodProjection`)
    `stats/`          statistics, readiness and recommendations of usage series
    `limitplan/`      the apply rule: the limit admission writes next to a request
    `metricsources/`  metric sources polled once per cycle
    `history/`        usage history: the `HistoryStore` Protocol, Redis/Valkey and SQLite
    `collection/`     one cycle's samples to each fed profile's status
    `resize/`         in-place resize planning and the kubelet's outcome
    `oom/`            OOM kills and the memory-limit floor they set
    `killswitch/`     kill-switch state, on every replica
    `operator/`       the options every lane shares
    `telemetry/`      the operator's `ballast_*` metrics and OTLP export
    `explain/`        `ballast explain`: why a pod has its requests and limits

Companions, one folder each (domain, metrics, report shaping), none importing another:
    `scheduling/`     kupid's scheduling policies
    `balancer/`       the Balancer's placement
    `consolidation/`  the consolidation advisor (Karpenter's Balanced score), with `inputs/`, what it reads

Tools:
    `cmd/`            the `ballastd` / `ballast` entry points: flags and wiring only
    `tabular/`        plain-text tables as kubectl prints them, for the commands' reports
    `manifests/`      the generated CRDs, RBAC and webhook configurations of `config/`
    `enroll/`         the bulk enroller (`ballast enroll`)
    `dev/`            `make dev`: the operator on a local control plane
    `fleetsim/`       the fleet simulator (`ballast simulate`, `make demo`)
"""
