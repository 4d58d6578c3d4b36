"""Ballast API types: pydantic models, one module per kind, grouped by group/version, and the CRDs generated
from them.

- `ballast.api.ballast.v1`: BallastConfig, MetricsSource, ClusterResourcePolicy, ResourcePolicy, WorkloadProfile
- `ballast.api.kupid.v1alpha1`: PodSchedulingPolicy, ClusterPodSchedulingPolicy
- `ballast.api.balancer.v1alpha1`: Balancer
- `ballast.api.meta` (ObjectMeta, LabelSelector, Condition, Time), `ballast.api.core` (Affinity, Toleration),
  `ballast.api.wire` (the base model and schema markers), `ballast.api.customresource` (the kind base class)
- `ballast.api.crds`: the CustomResourceDefinitions (`all_crds()`, `hack/gen-crds`)
"""
