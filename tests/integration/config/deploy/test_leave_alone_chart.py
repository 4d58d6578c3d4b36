"""The chart's `leaveAloneNamespaces` (docs/design.md, difference 60): one value for ballastd's flag and every
webhook configuration's namespaceSelector, with the release's namespace always first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ballast.internal.cmd.ballastd import build_parser, leave_alone_namespaces
from tests.integration.config.deploy.conftest import one, render, render_error

SELECTOR_KEY = "kubernetes.io/metadata.name"


def _excluded(webhook: dict[str, Any]) -> list[str] | None:
    for expression in (webhook.get("namespaceSelector") or {}).get("matchExpressions") or ():
        if expression["key"] == SELECTOR_KEY and expression["operator"] == "NotIn":
            return list(expression["values"])
    return None


def test_the_namespaces_left_alone_reach_the_flag_and_every_namespace_selector(helm: Path) -> None:
    documents = render(helm, release="bl", namespace="ops", settings={"leaveAloneNamespaces": "{tenant-admin,batch}"})
    args = build_parser().parse_args(one(documents, "Deployment")["spec"]["template"]["spec"]["containers"][0]["args"])
    assert leave_alone_namespaces(args) == ("tenant-admin", "batch")
    selectors = {
        webhook["name"]: _excluded(webhook)
        for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")
        for name in ("bl", "bl-scheduling")
        for webhook in one(documents, kind, name)["webhooks"]
        if _excluded(webhook) is not None
    }
    assert selectors  # the pod webhooks and the scheduling webhook
    for name, excluded in selectors.items():
        assert excluded is not None
        assert excluded[:3] == ["ops", "tenant-admin", "batch"], name


def test_by_default_only_the_release_namespace_is_left_alone(helm: Path) -> None:
    documents = render(helm, release="bl", namespace="ops")
    args = build_parser().parse_args(one(documents, "Deployment")["spec"]["template"]["spec"]["containers"][0]["args"])
    assert leave_alone_namespaces(args) == ()
    (mutating,) = [w for w in one(documents, "MutatingWebhookConfiguration", "bl")["webhooks"] if _excluded(w)]
    assert _excluded(mutating) == ["ops"]


def test_a_name_that_cannot_be_a_namespace_is_refused_at_render(helm: Path) -> None:
    message = render_error(helm, settings={"leaveAloneNamespaces": "{Bad_Name}"})
    assert "leaveAloneNamespaces" in message
