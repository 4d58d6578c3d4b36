from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from ballast.runtime.envtest.errors import ManifestError
from ballast.runtime.envtest.manifests import load_documents, rewrite_webhook_config


def test_documents_are_read_from_files_and_directories(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("kind: A\n---\n---\nkind: B\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "c.json").write_text('{"kind": "C"}')
    (tmp_path / "notes.txt").write_text("ignored")
    documents = load_documents([tmp_path, {"kind": "D"}])
    assert [d["kind"] for _, d in documents] == ["A", "B", "C", "D"]
    assert documents[1][0] == f"{tmp_path / 'a.yaml'} document 3"


def test_a_file_that_does_not_parse_is_named_in_the_error(tmp_path: Path) -> None:
    broken = tmp_path / "crd.yaml"
    broken.write_text("kind: CustomResourceDefinition\nspec: [unclosed\n")
    with pytest.raises(ManifestError, match=rf"(?s){broken} does not parse as YAML.*line 2, column 7"):
        load_documents([broken])


def test_a_scalar_document_is_refused(tmp_path: Path) -> None:
    (tmp_path / "x.yaml").write_text("just a string\n")
    with pytest.raises(ManifestError, match="document 1 is not an object"):
        load_documents([tmp_path / "x.yaml"])


def test_a_missing_path_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="does not exist"):
        load_documents([tmp_path / "nope.yaml"])


def test_webhook_service_references_become_local_urls_with_the_ca() -> None:
    config: dict[str, Any] = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": "m", "resourceVersion": "12"},
        "webhooks": [
            {"name": "a.example.com", "clientConfig": {"service": {"name": "s", "namespace": "n", "path": "/mutate"}}},
            {"name": "b.example.com", "clientConfig": {"service": {"name": "s", "namespace": "n"}}},
            {"name": "c.example.com", "clientConfig": {"url": "https://elsewhere:1/x"}},
        ],
    }
    rewritten = rewrite_webhook_config(config, host="127.0.0.1", port=9443, ca_bundle=b"PEM")
    urls = [w["clientConfig"]["url"] for w in rewritten["webhooks"]]
    assert urls == ["https://127.0.0.1:9443/mutate", "https://127.0.0.1:9443/", "https://elsewhere:1/x"]
    assert all(base64.b64decode(w["clientConfig"]["caBundle"]) == b"PEM" for w in rewritten["webhooks"])
    assert all("service" not in w["clientConfig"] for w in rewritten["webhooks"])
    assert "resourceVersion" not in rewritten["metadata"]
    assert config["webhooks"][0]["clientConfig"]["service"]["path"] == "/mutate"  # the input is untouched
