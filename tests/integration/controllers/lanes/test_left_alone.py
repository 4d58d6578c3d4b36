"""The operator's namespace and `--leave-alone-namespaces` on the real API server (docs/design.md, difference 60):
an enrolled pod there is not cached, so never enrolled, while the same pod elsewhere is."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ballast.api.scheme import add_to_scheme
from ballast.internal.cmd.wiring import CONTROLLERS, Dependencies, add_core_lanes, new_manager
from ballast.internal.enrollment import PROFILE_REF
from ballast.internal.history import open_store
from ballast.internal.killswitch import KillSwitchState
from ballast.internal.operator import OperatorOptions
from ballast.runtime import RESTConfig, Scheme
from ballast.runtime.client import APIServerClient
from ballast.runtime.envtest import Environment
from ballast.runtime.envtest.wait import poll_until
from ballast.runtime.rest import Transport
from tests.unit.internal.runtime.support import running

from .conftest import ballast_config, pod

LABELS = {"app.kubernetes.io/name": "left", "app.kubernetes.io/component": "alone"}


def _profile_ref(client: APIServerClient, namespace: str, name: str) -> Any:
    return (client.get("v1/Pod", name, namespace)["metadata"].get("annotations") or {}).get(PROFILE_REF)


def test_an_enrolled_pod_in_a_namespace_left_alone_is_neither_enrolled_nor_given_a_profile(
    envtest: Environment,
    operator_namespace: str,
    operator_client: APIServerClient,
    apply_config: Any,
    new_namespace: Callable[[str], str],
    tmp_path: Path,
) -> None:
    apply_config(ballast_config())
    elsewhere, extra = new_namespace("enrolled"), new_namespace("left-alone")
    client = APIServerClient(
        Transport(RESTConfig(envtest.client_configuration())), scheme=add_to_scheme(Scheme()), field_owner="ballastd"
    )
    manager = new_manager(client, namespace=operator_namespace, leave_alone=(extra,))
    options = OperatorOptions(operator_namespace=operator_namespace, leave_alone=(extra,))
    store = open_store(f"sqlite:///{tmp_path / 'history.db'}")
    deps = Dependencies(store=store, kill_switch=KillSwitchState(), options=options)
    add_core_lanes(manager, set(CONTROLLERS), deps)
    made = [(namespace, f"pod-{index}") for index, namespace in enumerate((operator_namespace, extra, elsewhere))]
    try:
        with running(manager, stop_timeout=40):
            for namespace, name in made:
                operator_client.create(pod(name, namespace, LABELS, mode="resize"))
            control_namespace, control = made[-1]
            poll_until(lambda: _profile_ref(operator_client, control_namespace, control), timeout=30,
                       what="the pod outside the left-alone namespaces to be enrolled")  # fmt: skip
            assert [_profile_ref(operator_client, namespace, name) for namespace, name in made[:2]] == [None, None]
            cached = {(p.metadata.namespace, p.metadata.name) for p in manager.cache.list("v1/Pod")}
            assert cached & set(made) == {made[-1]}
    finally:
        for namespace, name in made:
            operator_client.delete(pod(name, namespace, {}))
        store.close()
