"""The `balancer.x-k8s.io` API group (the kubernetes/autoscaler Balancer)."""
