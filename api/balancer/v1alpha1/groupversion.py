"""Group and version of the Balancer kind."""

GROUP = "balancer.x-k8s.io"
VERSION = "v1alpha1"
