"""The Balancer's upstream examples (kubernetes/autoscaler `balancer/examples/`), restated as the YAML a user
applies: `nginx-priority`, `nginx-proportional` and `nginx-priority-hpa` (the priority example with CPU requests
and an HPA scaling the Balancer). Each must apply unchanged; the documents of one example share their names, so
each goes to a namespace of its own."""

from __future__ import annotations

from typing import Any

import yaml

JSON = dict[str, Any]


def _deployment(name: str, cpu_request: bool) -> str:
    resources = "\n          resources:\n            requests:\n              cpu: 100m" if cpu_request else ""
    return f"""\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  labels:
    app: {name}
    srv: nginx
spec:
  replicas: 3
  selector:
    matchLabels:
      app: {name}
      srv: nginx
  template:
    metadata:
      labels:
        app: {name}
        srv: nginx
    spec:
      containers:
        - name: nginx
          image: nginx:1.14.2
          ports:
            - containerPort: 80{resources}
"""


def _balancer(replicas: int, policy: str) -> str:
    return f"""\
apiVersion: balancer.x-k8s.io/v1alpha1
kind: Balancer
metadata:
  name: nginx
spec:
  replicas: {replicas}
  selector:
    matchLabels:
      srv: nginx
  policy:
{policy}
    fallback:
      startupTimeoutSeconds: 180
  targets:
    - name: nginx-1
      scaleTargetRef:
        apiVersion: apps/v1
        kind: Deployment
        name: nginx-1
      minReplicas: 1
      maxReplicas: 7
    - name: nginx-2
      scaleTargetRef:
        apiVersion: apps/v1
        kind: Deployment
        name: nginx-2
      minReplicas: 1
"""


_PRIORITY = """\
    policyName: priority
    priorities:
      targetOrder: [nginx-1,nginx-2]"""
_PROPORTIONAL = """\
    policyName: proportional
    proportions:
      targetProportions:
        nginx-1: 50
        nginx-2: 50"""
_SERVICE = """\
apiVersion: v1
kind: Service
metadata:
  name: nginx
spec:
  ports:
    - port: 80
      protocol: TCP
      targetPort: 80
  selector:
    srv: nginx
"""
_HPA = """\
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: nginx
spec:
  minReplicas: 2
  maxReplicas: 10
  metrics:
    - resource:
        name: cpu
        target:
          averageUtilization: 50
          type: Utilization
      type: Resource
  scaleTargetRef:
    apiVersion: balancer.x-k8s.io/v1alpha1
    kind: Balancer
    name: nginx
"""


def _example(*documents: str) -> str:
    return "---\n".join(documents)


EXAMPLES: dict[str, str] = {
    "nginx-priority": _example(
        _deployment("nginx-1", False), _deployment("nginx-2", False), _balancer(5, _PRIORITY), _SERVICE
    ),
    "nginx-proportional": _example(
        _deployment("nginx-1", False), _deployment("nginx-2", False), _balancer(10, _PROPORTIONAL), _SERVICE
    ),
    "nginx-priority-hpa": _example(
        _deployment("nginx-1", True), _deployment("nginx-2", True), _balancer(5, _PRIORITY), _SERVICE, _HPA
    ),
}
"""Example name → its YAML, as `kubectl apply -f` takes it."""


def documents(example: str) -> list[JSON]:
    """The objects of one example, parsed."""
    return [document for document in yaml.safe_load_all(EXAMPLES[example]) if document]


def balancer(example: str) -> JSON:
    """The example's Balancer."""
    [found] = [document for document in documents(example) if document["kind"] == "Balancer"]
    return found
