"""`helm install`, `helm upgrade` and `helm uninstall` for real, on a control plane of its own that starts without
our CRDs: the chart's crds/ must be installed by Helm before the policy objects that need them.

The hooks are skipped (`--no-hooks`): their Jobs need a kubelet to run. Their commands are run as the hooks'
ServiceAccounts in test_apply.py. A control plane of its own, because a real install creates cluster-wide
singletons (the BallastConfig `ballast`, the ClusterResourcePolicy `default`, webhook configurations) that the
session's other tests must not see.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from ballast.internal.manifests.ballast_crds import all_crds
from ballast.runtime import NotFoundError, RESTConfig, new_client
from ballast.runtime.envtest import Environment
from tests.integration.config.deploy.conftest import CERT_MANAGER_STAND_INS, CHART, PRESETS, values_args

CRP = "ballast.tightlinesoftware.com/v1/ClusterResourcePolicy"


@pytest.fixture(scope="module")
def cluster(envtest: Environment) -> Iterator[Environment]:
    """A fresh etcd + kube-apiserver (same binaries as the session's), with cert-manager's stand-in CRDs only."""
    with Environment(assets=envtest.assets) as env:
        env.install_crds(CERT_MANAGER_STAND_INS)
        yield env


def _helm(helm: Path, cluster: Environment, *args: str) -> subprocess.CompletedProcess[str]:
    argv = [str(helm), f"--kubeconfig={cluster.kubeconfig_path}", *args]
    result = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=180)
    assert result.returncode == 0, f"helm {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
    return result


def test_install_upgrade_uninstall(helm: Path, cluster: Environment) -> None:
    client = new_client(RESTConfig(cluster.client_configuration()))
    common = ["--namespace", "ballast-system", "--no-hooks"]
    installed = _helm(helm, cluster, "install", "ballast", str(CHART), "--create-namespace", *common)
    assert "STATUS: deployed" in installed.stdout
    assert "kubectl -n ballast-system create configmap ballast-kill-switch" in installed.stdout  # NOTES.txt
    for crd in all_crds():  # from crds/, before the objects that use them
        assert client.get("apiextensions.k8s.io/v1/CustomResourceDefinition", crd["metadata"]["name"])
    assert client.get(CRP, "default")["spec"]["readiness"]["minDataPoints"] == 250
    assert client.get("apps/v1/Deployment", "ballast", "ballast-system")["spec"]["replicas"] == 1
    assert client.get("cert-manager.io/v1/Certificate", "ballast-serving-cert", "ballast-system")

    upgrade = ["upgrade", "ballast", str(CHART), *common, *values_args(PRESETS["local-testing"], {"replicaCount": "2"})]
    _helm(helm, cluster, *upgrade)
    assert client.get(CRP, "default")["spec"]["readiness"]["minDataPoints"] == 5
    assert client.get("apps/v1/Deployment", "ballast", "ballast-system")["spec"]["replicas"] == 2
    assert client.get("policy/v1/PodDisruptionBudget", "ballast", "ballast-system")

    _helm(helm, cluster, "uninstall", "ballast", *common)
    with pytest.raises(NotFoundError):
        client.get(CRP, "default")
    with pytest.raises(NotFoundError):
        client.get("admissionregistration.k8s.io/v1/MutatingWebhookConfiguration", "ballast")
    # Helm keeps CRDs (deleting them would delete every user's policies): docs/install.md's last step does that.
    assert client.get(
        "apiextensions.k8s.io/v1/CustomResourceDefinition", "workloadprofiles.ballast.tightlinesoftware.com"
    )
