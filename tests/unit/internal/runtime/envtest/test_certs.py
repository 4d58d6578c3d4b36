from __future__ import annotations

import ipaddress
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from ballast.runtime.envtest.certs import TinyCA, signing_key_pair


def _load(pem: bytes) -> x509.Certificate:
    return x509.load_pem_x509_certificate(pem)


def test_issued_certificate_is_signed_by_the_ca_and_names_its_hosts() -> None:
    ca = TinyCA("test-ca")
    pair = ca.issue("server", hosts=("localhost", "127.0.0.1", "svc.ns.svc"), server=True)
    cert, ca_cert = _load(pair.cert_pem), _load(ca.cert_pem)

    cert.verify_directly_issued_by(ca_cert)
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == ["localhost", "svc.ns.svc"]
    assert san.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("127.0.0.1")]
    usages = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(usages) == [ExtendedKeyUsageOID.SERVER_AUTH]
    assert ca_cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is True


def test_client_certificate_carries_groups_as_organizations() -> None:
    pair = TinyCA().issue("alice", organizations=("dev", "system:masters"), client=True)
    subject = _load(pair.cert_pem).subject
    assert [a.value for a in subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)] == ["dev", "system:masters"]
    assert subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "alice"


def test_pairs_are_written_with_a_private_key_mode(tmp_path: Path) -> None:
    cert_path, key_path = TinyCA().issue("x", server=True).write(tmp_path / "dir")
    assert cert_path.read_bytes().startswith(b"-----BEGIN CERTIFICATE-----")
    assert key_path.stat().st_mode & 0o777 == 0o600


def test_signing_key_pair_holds_a_public_and_a_private_key() -> None:
    pair = signing_key_pair()
    public = serialization.load_pem_public_key(pair.cert_pem)
    private = serialization.load_pem_private_key(pair.key_pem, password=None)
    assert isinstance(public, ec.EllipticCurvePublicKey)
    assert isinstance(private, ec.EllipticCurvePrivateKey)
    assert private.public_key().public_numbers() == public.public_numbers()
