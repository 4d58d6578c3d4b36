"""Admission behind the real API server: the configurations of `webhook.configurations` installed (service
references rewritten to the local server), the handlers reading through the shared cache, owners read live."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from ballast.api.ballast.v1 import (
    BallastConfig,
    ClusterResourcePolicy,
    MetricsSource,
    ResourcePolicy,
    WorkloadProfile,
)
from ballast.internal.enrollment import MODE_LABEL
from ballast.internal.killswitch import KillSwitchState
from ballast.internal.manifests.webhooks import webhook_configurations
from ballast.internal.naming import policy_discriminator, profile_name, tuple_labels
from ballast.internal.operator import OperatorOptions
from ballast.runtime import (
    APIStatusError,
    Cache,
    NotFoundError,
    WebhookServer,
    metrics,
)
from ballast.runtime.cache import DelegatingClient
from ballast.runtime.client import APIServerClient
from ballast.runtime.envtest import Environment
from ballast.runtime.envtest.wait import poll_until
from ballast.webhook import configuration, pods, policies
from tests.integration.cleanup import deleted_afterwards
from tests.integration.lax_schema import lax_schema
from tests.integration.webhook_server import serve

IDENTITY = ["app.kubernetes.io/name", "app.kubernetes.io/component"]
APP_LABELS = {"app.kubernetes.io/name": "billing", "app.kubernetes.io/component": "api"}
ADMISSION = "/apis/admissionregistration.k8s.io/v1"


def invalid_mode(value: str) -> str:
    return f'invalid Ballast ballast.tightlinesoftware.com/mode label "{value}": must be one of measure, apply, resize'


def pod(name: str, namespace: str, mode: str | None, **spec: Any) -> dict[str, Any]:
    labels = dict(APP_LABELS)
    if mode is not None:
        labels[MODE_LABEL] = mode
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {"containers": [{"name": "app", "image": "example/app:1"}], **spec},
    }  # fmt: skip


@dataclass
class Admission:
    """The running webhook server, what it reads through, and the installed configurations."""

    client: APIServerClient
    reader: DelegatingClient
    kill_switch: KillSwitchState
    operator_namespace: str
    server: WebhookServer


@pytest.fixture(scope="module")
def ballast_config(client: APIServerClient) -> Iterator[None]:
    """BallastConfig `ballast` with our identity labels (restored afterwards if another suite made one)."""
    body = BallastConfig.model_validate({"metadata": {"name": "ballast"}, "spec": {"identityLabels": IDENTITY}})
    try:
        before = client.get(BallastConfig, "ballast")
    except NotFoundError:
        client.create(body)
        yield
        client.delete(body)
        return
    client.patch(before, {"spec": {"identityLabels": IDENTITY}})
    yield
    client.patch(before, {"spec": {"identityLabels": before.spec.identity_labels}})


def _namespace(client: APIServerClient, prefix: str) -> str:
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    return name


def _wait_until_admitting(client: APIServerClient, namespace: str) -> None:
    """The API server picks configurations up asynchronously: poll until an invalid mode is refused."""
    attempt = iter(range(1_000))

    def refused() -> bool:
        name = f"probe-{next(attempt)}"
        try:
            client.create(pod(name, namespace, "probe!"))
        except APIStatusError as error:
            return invalid_mode("probe!") in error.message
        client.delete(pod(name, namespace, None))
        return False

    poll_until(refused, timeout=20, what="the API server to call the pod webhooks")


@pytest.fixture(scope="module")
def admission(envtest: Environment, client: APIServerClient, ballast_config: None) -> Iterator[Admission]:
    operator_namespace = _namespace(client, "ballast-op")
    cache = Cache(client)
    cache.start()
    reader = DelegatingClient(cache, client)
    kill_switch = KillSwitchState()
    server = WebhookServer(host="127.0.0.1", port=0, cert_dir=envtest.webhook_cert_dir())
    pods.register(server, reader=reader, owner_reader=client, kill_switch=kill_switch, options=OperatorOptions())
    policies.register(server)
    configuration.register(server)
    shutdown = serve(server)
    configurations = webhook_configurations(
        service_name="ballast-webhook", service_namespace=operator_namespace, name=f"ballast-{operator_namespace}"
    )
    envtest.install_webhooks(configurations, host="127.0.0.1", port=server.port, ca_bundle=envtest.ca.cert_pem)
    probe_namespace = _namespace(client, "probe")
    try:
        _wait_until_admitting(client, probe_namespace)
        yield Admission(client, reader, kill_switch, operator_namespace, server)
    finally:
        for config in configurations:
            with contextlib.suppress(APIStatusError):
                envtest.rest.delete(f"{ADMISSION}/{config['kind'].lower()}s/{config['metadata']['name']}")
        for namespace in (operator_namespace, probe_namespace):
            with contextlib.suppress(APIStatusError):
                client.delete({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
        shutdown()
        cache.stop()


def _cluster_policy(name: str, **spec: Any) -> ClusterResourcePolicy:
    return ClusterResourcePolicy.model_validate({"metadata": {"name": name}, "spec": spec})


def _sized_by(admission: Admission, namespace: str, created: list[Any], status: dict[str, Any], *, held: str) -> None:
    """Policy `sizing` in `namespace` and the app's profile with `status`, once the admission cache holds the
    policy and the status field `held`."""
    client = admission.client
    client.create(ResourcePolicy.model_validate({"metadata": {"name": "sizing", "namespace": namespace}}))
    disc = policy_discriminator("ResourcePolicy", namespace, "sizing")
    name = profile_name(tuple_labels(APP_LABELS, IDENTITY), IDENTITY, disc)
    profile = client.create(WorkloadProfile.model_validate({"metadata": {"name": name}}))
    created.append(profile)
    client.status().patch(profile, {"status": status})
    poll_until(
        lambda: (
            admission.reader.list(ResourcePolicy, namespace)
            and getattr(admission.reader.get(WorkloadProfile, name).status, held, None)
        ),
        timeout=10,
        what=f"the cache to hold the policy and the profile's {held}",
    )


# ------------------------------------------------------------------------------------------------- tests


def test_a_pod_created_gets_the_recommendations_of_its_profile(admission: Admission, envtest_namespace: str) -> None:
    client = admission.client
    with deleted_afterwards(client) as created:
        status = {
            "meetsThreshold": True,
            "state": "Sufficient",
            "containers": [
                {"name": "app", "usageStats": [{"resource": "cpu"}, {"resource": "memory"}],
                 "recommendations": {"cpu": {"request": "600m"}, "memory": {"request": "192Mi", "limit": "256Mi"}}},
                {"name": "proxy", "usageStats": [{"resource": "cpu"}], "recommendations": {"cpu": {"request": "50m"}}},
            ],
        }  # fmt: skip
        _sized_by(admission, envtest_namespace, created, status, held="meets_threshold")
        body = pod(
            "web-0",
            envtest_namespace,
            "apply",
            containers=[{"name": "app", "image": "example/app:1",
                         "resources": {"requests": {"cpu": "100m"}, "limits": {"cpu": "500m"}}}],
            initContainers=[{"name": "proxy", "image": "example/proxy:1", "restartPolicy": "Always"}],
        )  # fmt: skip
        made = client.create(body)
    app, proxy = made["spec"]["containers"][0], made["spec"]["initContainers"][0]
    assert app["resources"] == {
        "requests": {"cpu": "600m", "memory": "192Mi"},
        "limits": {"cpu": "3", "memory": "256Mi"},  # cpu: the 5:1 limit:request ratio kept
    }
    assert proxy["resources"] == {"requests": {"cpu": "50m"}}
    annotations = made["metadata"]["annotations"]
    assert annotations["ballast.tightlinesoftware.com/policy-ref"] == f"{envtest_namespace}/sizing"
    assert annotations["ballast.tightlinesoftware.com/applied-cpu-request"] == "50m"  # the last container wins
    assert annotations["ballast.tightlinesoftware.com/applied-cpu-limit"] == "3"
    assert annotations["ballast.tightlinesoftware.com/applied-memory-limit"] == "256Mi"


def test_the_next_pod_after_an_oom_kill_gets_the_raised_limit(admission: Admission, envtest_namespace: str) -> None:
    # The OOM watcher's record (tests/integration/controllers/oom): a kill at 256Mi set the floor 356Mi.
    client = admission.client
    with deleted_afterwards(client) as created:
        status = {
            "meetsThreshold": True,
            "state": "Sufficient",
            "containers": [{"name": "app", "usageStats": [{"resource": "memory"}],
                            "recommendations": {"memory": {"request": "192Mi", "limit": "256Mi"}}}],
            "oomKills": [{"container": "app", "count": 1, "lastLimit": "256Mi", "floor": "356Mi",
                          "floorUntil": "2099-01-01T00:00:00Z", "namespaces": ["team-a", "team-b"]}],
        }  # fmt: skip
        _sized_by(admission, envtest_namespace, created, status, held="oom_kills")
        made = client.create(pod("web-0", envtest_namespace, "apply"))
    assert made["spec"]["containers"][0]["resources"] == {
        "requests": {"memory": "192Mi"},
        "limits": {"memory": "356Mi"},  # the floor, not the recommended 256Mi the container was killed at
    }
    annotations = made["metadata"]["annotations"]
    assert annotations["ballast.tightlinesoftware.com/oom-raised-for"] == "app=356Mi after OOM kills in team-a,team-b"
    assert annotations["ballast.tightlinesoftware.com/applied-memory-limit"] == "356Mi"


def test_an_invalid_mode_is_denied_at_create_and_at_update(admission: Admission, envtest_namespace: str) -> None:
    client = admission.client
    with pytest.raises(APIStatusError) as created:
        client.create(pod("bad", envtest_namespace, "Apply"))
    assert created.value.status == 403
    assert created.value.message == (
        f'admission webhook "mpod.ballast.tightlinesoftware.com" denied the request: {invalid_mode("Apply")}'
    )
    measured = client.create(pod("measured", envtest_namespace, "measure"))
    assert "annotations" not in measured["metadata"]
    with pytest.raises(APIStatusError) as updated:
        client.patch(measured, {"metadata": {"labels": {MODE_LABEL: "bogus"}}})
    assert updated.value.status == 403
    assert updated.value.message == (
        f'admission webhook "vpod.ballast.tightlinesoftware.com" denied the request: {invalid_mode("bogus")}'
    )
    promoted = client.patch(measured, {"metadata": {"labels": {MODE_LABEL: "resize"}}})
    assert promoted["metadata"]["labels"][MODE_LABEL] == "resize"


def test_a_policy_with_a_bad_regex_is_refused_at_write_time(admission: Admission, envtest_namespace: str) -> None:
    client = admission.client
    name = f"bad-{uuid.uuid4().hex[:6]}"
    with deleted_afterwards(client) as created, pytest.raises(APIStatusError) as refused:
        created.append(client.create(_cluster_policy(name, selector={"namespaces": {"include": ["/(/"]}})))
    assert refused.value.status == 422
    assert refused.value.message == (
        'admission webhook "vpolicy.ballast.tightlinesoftware.com" denied the request: '
        f'ClusterResourcePolicy.ballast.tightlinesoftware.com "{name}" is invalid: '
        'spec.selector.namespaces.include[0]: invalid regex "/(/": missing closing ): `(`'
    )
    local = ResourcePolicy.model_validate(
        {"metadata": {"name": "local", "namespace": envtest_namespace},
         "spec": {"selector": {"labelSelector": {"matchExpressions": [{"key": "tier", "operator": "Bogus"}]}}}}
    )  # fmt: skip
    with pytest.raises(APIStatusError) as refused_local:
        client.create(local)
    assert "spec.selector.labelSelector.matchExpressions[0]: operator 'Bogus'" in refused_local.value.message


def test_a_valid_policy_is_accepted_and_an_update_breaking_it_refused(admission: Admission) -> None:
    client = admission.client
    with deleted_afterwards(client) as created:
        stored = client.create(_cluster_policy(f"ok-{uuid.uuid4().hex[:6]}", priority=-1000))
        created.append(stored)
        with pytest.raises(APIStatusError) as refused:
            client.patch(stored, {"spec": {"readiness": {"cvMeanFloor": {"memory": "8Ei"}}}})  # a quantity > 2**63 − 1
        assert 'spec.readiness.cvMeanFloor[memory]: invalid quantity "8Ei"' in refused.value.message
        relabelled = client.patch(stored, {"metadata": {"labels": {"team": "sre"}}})
        assert relabelled.metadata.labels == {"team": "sre"}


# Inside the CRD's patterns but outside the ranges (docs/design.md, difference 25): the webhook refuses them.
OUT_OF_RANGE = [
    ({"metrics": [{"resource": "memory", "source": "m", "headroom": "150"}]},
     'spec.metrics[0].headroom: invalid headroom "150": must be a decimal number 0 < headroom ≤ 100 with at most 6 '
     'decimal places, such as "1.2"'),
    ({"metrics": [{"resource": "memory", "source": "m", "headroom": "0.0"}]},
     'spec.metrics[0].headroom: invalid headroom "0.0": must be a decimal number 0 < headroom ≤ 100'),
    ({"readiness": {"maxCV": "100.5"}},
     'spec.readiness.maxCV: invalid maxCV "100.5": must be a decimal number 0 ≤ maxCV ≤ 100'),
    ({"readiness": {"cvMeanFloor": {"cpu": "9300000000000000"}}},
     'spec.readiness.cvMeanFloor[cpu]: invalid quantity "9300000000000000": must be at most 9223372036854775807 '
     "millicores (2**63 − 1)"),
    ({"behaviors": {"thresholds": {"resize": {"resourceThresholds": {"cpu": {"request": "100.5%"}}}}}},
     'spec.behaviors.thresholds.resize.resourceThresholds[cpu].request: invalid percentage "100.5%": must be a '
     "number 0 < p ≤ 100"),
    ({"behaviors": {"resize": {"maxChangePerCycle": "150%"}}},
     'spec.behaviors.resize.maxChangePerCycle: invalid percentage "150%": must be a number 0 < p ≤ 100'),
]  # fmt: skip


@pytest.mark.parametrize(("spec", "problem"), OUT_OF_RANGE, ids=[p.split(":")[0] for _, p in OUT_OF_RANGE])
def test_a_policy_decimal_outside_its_range_is_refused_at_write_time(
    admission: Admission, spec: dict[str, Any], problem: str
) -> None:
    name = f"range-{uuid.uuid4().hex[:6]}"
    with deleted_afterwards(admission.client) as created, pytest.raises(APIStatusError) as refused:
        created.append(admission.client.create(_cluster_policy(name, **spec)))
    assert refused.value.status == 422
    assert refused.value.message.startswith(
        'admission webhook "vpolicy.ballast.tightlinesoftware.com" denied the request: '
        f'ClusterResourcePolicy.ballast.tightlinesoftware.com "{name}" is invalid: {problem}'
    )


def test_the_operator_namespace_is_excluded(admission: Admission) -> None:
    made = admission.client.create(pod(f"own-{uuid.uuid4().hex[:6]}", admission.operator_namespace, "Apply"))
    assert made["metadata"]["labels"][MODE_LABEL] == "Apply"


def test_a_pod_without_the_mode_label_is_never_sent_to_the_webhook(
    admission: Admission, envtest_namespace: str
) -> None:
    calls = metrics.WEBHOOK_REQUESTS.labels(pods.MUTATE_PATH, "200")
    before = calls._value.get()
    admission.client.create(pod("plain", envtest_namespace, None))
    assert calls._value.get() == before
    admission.client.create(pod("enrolled", envtest_namespace, "measure"))
    assert calls._value.get() > before


def test_the_kill_switch_admits_even_an_invalid_mode(admission: Admission, envtest_namespace: str) -> None:
    admission.kill_switch.update(configmap=True, suspended=False)
    try:
        made = admission.client.create(pod("switched", envtest_namespace, "Apply"))
    finally:
        admission.kill_switch.update(configmap=False, suspended=False)
    assert made["metadata"]["labels"][MODE_LABEL] == "Apply"


# What a CRD from before docs/design.md difference 26 let through (`lax_schema`): the webhook refuses it.
CONFIGURATION_REFUSALS = [
    (MetricsSource, {"type": "kubernetesMetrics", "config": {"pollInterval": "-5s"}},
     'spec.config.pollInterval: invalid duration "-5s": must be longer than 0, such as "60s"'),
    (MetricsSource, {"type": "bogus"},
     'spec.type: unknown type "bogus": must be one of kubernetesMetrics, kubeletSummary'),
    (BallastConfig, {"identityLabels": ["app", "app"]},
     'spec.identityLabels[1]: label key "app" appears more than once (first at spec.identityLabels[0])'),
]  # fmt: skip


@pytest.mark.parametrize(
    ("kind", "spec", "problem"), CONFIGURATION_REFUSALS, ids=["negative-poll", "bogus-type", "repeated-key"]
)
def test_a_source_or_config_the_schema_lets_through_is_refused_by_the_webhook(
    admission: Admission, envtest: Environment, kind: type[MetricsSource] | type[BallastConfig],
    spec: dict[str, Any], problem: str,
) -> None:  # fmt: skip
    name = f"cfg-{uuid.uuid4().hex[:6]}"
    body = {"apiVersion": kind.API_VERSION, "kind": kind.KIND, "metadata": {"name": name}, "spec": spec}
    with lax_schema(envtest, kind), deleted_afterwards(admission.client) as created:
        with pytest.raises(APIStatusError) as refused:
            created.append(admission.client.create(body))
        valid = {**body, "metadata": {"name": f"{name}-ok"}, "spec": {"type": "kubeletSummary"}}
        if kind is MetricsSource:
            created.append(admission.client.create(valid))  # the webhook lets a valid one through
    assert refused.value.status == 422
    assert refused.value.message == (
        'admission webhook "vconfig.ballast.tightlinesoftware.com" denied the request: '
        f'{kind.KIND}.ballast.tightlinesoftware.com "{name}" is invalid: {problem}'
    )
