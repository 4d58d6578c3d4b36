"""`ballast-crdgen webhook` (controller-gen's webhook output from the webhooks a setup function registers, or a
module's WEBHOOKS) and source paths as targets (`api/v1/kind.py`, a package directory, `./dir/...`)."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from ballast.runtime.crd import HEADER
from ballast.runtime.crd.cli import main

KIND = """
from typing import ClassVar

from ballast.runtime.crd import CustomResource, Scope


class Widget(CustomResource):
    \"\"\"A widget.\"\"\"

    GROUP, VERSION, KIND, PLURAL = "example.com", "v1", "Widget", "widgets"
    SCOPE: ClassVar[Scope] = "Namespaced"
"""

WEBHOOK = """
from ballast.runtime.webhookbuilder import KindWebhooks, WebhookBuilder
from shop.api.v1.widget import Widget


class Defaulter:
    def default(self, ctx, obj):
        pass


class Validator:
    def validate_create(self, ctx, obj):
        return None

    def validate_update(self, ctx, old, new):
        return None

    def validate_delete(self, ctx, obj):
        return None


def setup_widget_webhook_with_manager(manager):
    return (
        WebhookBuilder(manager).for_(Widget).with_defaulter(Defaulter())
        .with_validator(Validator(), validate_delete=True).complete()
    )


def setup_using_the_client(manager):
    manager.client.get("v1/ConfigMap", "x")


def setup_nothing(manager):
    pass


WEBHOOKS = [KindWebhooks.of(Widget, defaulting=False)]
"""


RECONCILER = """
from ballast.runtime.rbacgen import rbac


@rbac(groups=["example.com"], resources=["widgets"], verbs=["get", "list", "watch"])
class WidgetReconciler:
    pass
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A project laid out as kubebuilder's: shop/api/v1/widget.py, shop/internal/webhook/v1/widget_webhook.py."""
    root = tmp_path / "project"
    for package in ("shop", "shop/api", "shop/api/v1", "shop/internal", "shop/internal/webhook",
                    "shop/internal/webhook/v1"):  # fmt: skip
        (root / package).mkdir(parents=True)
        (root / package / "__init__.py").write_text("")
    (root / "shop/api/v1/widget.py").write_text(textwrap.dedent(KIND))
    (root / "shop/internal/webhook/v1/widget_webhook.py").write_text(textwrap.dedent(WEBHOOK))
    (root / "shop/internal/webhook/v1/test_widget_webhook.py").write_text("raise SystemExit('a test was imported')\n")
    (root / "shop/internal/controller.py").write_text(textwrap.dedent(RECONCILER))
    monkeypatch.chdir(root)
    before = set(sys.modules)
    saved_path = list(sys.path)
    yield root
    for name in set(sys.modules) - before:
        if name == "shop" or name.startswith("shop."):
            del sys.modules[name]
    sys.path[:] = saved_path


SETUP = "shop/internal/webhook/v1/widget_webhook.py:setup_widget_webhook_with_manager"


def test_webhook_writes_what_the_setup_function_registers(project: Path) -> None:
    out = project / "config" / "webhook" / "manifests.yaml"
    assert main(["webhook", SETUP, "-o", str(out)]) == 0
    text = out.read_text()
    assert text.startswith(HEADER + "---\n")
    mutating, validating = yaml.safe_load_all(text)
    assert mutating["kind"] == "MutatingWebhookConfiguration"
    [hook] = mutating["webhooks"]
    assert hook["name"] == "mwidget-v1.kb.io"
    assert hook["clientConfig"]["service"] == {
        "name": "webhook-service", "namespace": "system", "path": "/mutate-example-com-v1-widget"
    }  # fmt: skip
    assert validating["webhooks"][0]["rules"][0]["operations"] == ["CREATE", "UPDATE", "DELETE"]
    assert main(["webhook", SETUP, "-o", str(out), "--check"]) == 0


def test_webhook_check_names_a_stale_file(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = project / "manifests.yaml"
    out.write_text("stale\n")
    assert main(["webhook", SETUP, "-o", str(out), "--check"]) == 1
    assert f"out of date: {out}" in capsys.readouterr().err
    assert out.read_text() == "stale\n"


def test_a_module_given_by_dotted_name_declares_webhooks(project: Path) -> None:
    out = project / "manifests.yaml"
    assert main(["webhook", "shop.internal.webhook.v1.widget_webhook", "-o", str(out)]) == 0
    assert [doc["kind"] for doc in yaml.safe_load_all(out.read_text())] == ["ValidatingWebhookConfiguration"]


def test_the_service_can_be_named(project: Path) -> None:
    out = project / "manifests.yaml"
    argv = ["webhook", SETUP, "-o", str(out), "--service-name=shop-webhook", "--service-namespace=shop-system"]
    assert main(argv) == 0
    service = next(yaml.safe_load_all(out.read_text()))["webhooks"][0]["clientConfig"]["service"]
    assert (service["name"], service["namespace"]) == ("shop-webhook", "shop-system")


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("shop/internal/webhook/v1/widget_webhook.py:setup_using_the_client", "used the manager beyond"),
        ("shop/internal/webhook/v1/widget_webhook.py:setup_nothing", "registered no webhook"),
        ("shop/internal/webhook/v1/widget_webhook.py:missing", "has no function 'missing'"),
        ("shop/api/v1/widget.py", "declares no WEBHOOKS"),
        ("shop/nowhere.py:setup", "no such source path: shop/nowhere.py"),
    ],
)
def test_bad_webhook_targets_are_named(
    project: Path, capsys: pytest.CaptureFixture[str], target: str, message: str
) -> None:
    assert main(["webhook", target, "-o", str(project / "out.yaml")]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    "target", ["shop/api/v1/widget.py", "shop/api/v1/widget.py:Widget", "./shop/...", "shop/api/..."]
)
def test_crd_takes_source_paths(project: Path, target: str) -> None:
    out = project / "crds"
    assert main(["crd", target, "-o", str(out)]) == 0
    assert [path.name for path in out.iterdir()] == ["example.com_widgets.yaml"]


def test_a_directory_without_init_is_not_a_package(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "plain").mkdir()
    assert main(["crd", "plain/", "-o", str(project / "crds")]) == 2
    assert "without __init__.py" in capsys.readouterr().err


def test_rbac_takes_every_module_under_a_directory_and_skips_those_without_rules(project: Path) -> None:
    out = project / "role.yaml"
    assert main(["rbac", "./shop/...", "--role-name", "manager-role", "-o", str(out)]) == 0
    role = yaml.safe_load(out.read_text())
    assert role["rules"] == [
        {"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["get", "list", "watch"]}
    ]


def test_rbac_under_a_directory_without_rules_is_named(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rbac", "./shop/api/...", "--role-name", "r", "-o", str(project / "role.yaml")]) == 2
    assert "no module under ./shop/api/... declares RBAC rules" in capsys.readouterr().err
