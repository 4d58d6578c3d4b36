from __future__ import annotations

import base64
from pathlib import Path

import yaml

from ballast.runtime.envtest.certs import TinyCA
from ballast.runtime.envtest.kubeconfig import Credentials


def test_kubeconfig_embeds_certificates_and_is_private(tmp_path: Path) -> None:
    ca = TinyCA()
    ca_file = tmp_path / "ca.crt"
    ca_file.write_bytes(ca.cert_pem)
    cert, key = ca.issue("alice", client=True).write(tmp_path, "a.crt", "a.key")
    path = Credentials("alice", "https://127.0.0.1:1234", ca_file, cert, key).write_kubeconfig(tmp_path / "kc")
    config = yaml.safe_load(path.read_text())
    assert path.stat().st_mode & 0o777 == 0o600
    assert config["clusters"][0]["cluster"]["server"] == "https://127.0.0.1:1234"
    assert base64.b64decode(config["clusters"][0]["cluster"]["certificate-authority-data"]) == ca.cert_pem
    assert base64.b64decode(config["users"][0]["user"]["client-certificate-data"]) == cert.read_bytes()
    assert config["contexts"][0]["context"] == {"cluster": "envtest", "user": "alice"}


def test_token_credentials_configure_the_official_client(tmp_path: Path) -> None:
    ca_file = tmp_path / "ca.crt"
    ca_file.write_bytes(TinyCA().cert_pem)
    configuration = Credentials("sa", "https://127.0.0.1:1", ca_file, token="t0k3n").client_configuration()
    assert configuration.host == "https://127.0.0.1:1"
    assert configuration.get_api_key_with_prefix("authorization") == "Bearer t0k3n"
    assert configuration.cert_file is None
