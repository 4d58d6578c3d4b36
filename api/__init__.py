"""Ballast API types: pydantic models, one module per kind, grouped by group/version.

- `ballast.api.ballast.v1`: BallastConfig, MetricsSource, ClusterResourcePolicy, ResourcePolicy, WorkloadProfile
- `ballast.api.kupid.v1alpha1`: PodSchedulingPolicy, ClusterPodSchedulingPolicy
- `ballast.api.balancer.v1alpha1`: Balancer
- `ballast.api.meta` (ObjectMeta, LabelSelector, Condition, Time), `ballast.api.core` (Affinity, Toleration),
  `ballast.api.wire` (the base model and schema markers), `ballast.api.customresource` (the kind base class),
  `ballast.api.schema`, `ballast.api.formats`: the framework's typed-CRD package (`ballast.runtime.crd`),
  re-exported — `ballast.api` is its first user
- `ballast.api.scheme`: every kind (`KINDS`) and `add_to_scheme`; their CRDs are rendered by
  `ballast.internal.manifests.ballast_crds` (`hack/gen-manifests`) through `ballast.runtime.crd.generate`
"""
