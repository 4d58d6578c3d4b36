"""Certificates: a small certificate authority (ECDSA P-256) issuing serving and client certificates.

Used by the self-managed webhook certificates (`selfsigned`) and, with a one-week validity, by envtest.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

DEFAULT_VALIDITY = datetime.timedelta(days=365)
# Backdate so that a clock a little behind ours still accepts the certificate.
BACKDATE = datetime.timedelta(minutes=5)


@dataclass(frozen=True, slots=True)
class CertPair:
    """A PEM certificate and its PEM (PKCS#8) private key."""

    cert_pem: bytes
    key_pem: bytes

    def write(self, directory: Path, cert_name: str = "tls.crt", key_name: str = "tls.key") -> tuple[Path, Path]:
        """Write both files into `directory` (created if needed; the key is mode 0600)."""
        directory.mkdir(parents=True, exist_ok=True)
        cert_path, key_path = directory / cert_name, directory / key_name
        cert_path.write_bytes(self.cert_pem)
        key_path.write_bytes(self.key_pem)
        os.chmod(key_path, 0o600)
        return cert_path, key_path


def _new_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _name(common_name: str, organizations: tuple[str, ...] = ()) -> x509.Name:
    attributes = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, org) for org in organizations]
    attributes.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name))
    return x509.Name(attributes)


class CertificateAuthority:
    """A self-signed CA that issues serving and client certificates valid for `validity`."""

    def __init__(self, common_name: str = "ballast-ca", validity: datetime.timedelta = DEFAULT_VALIDITY) -> None:
        self.validity = validity
        self._key = _new_key()
        now = datetime.datetime.now(datetime.UTC)
        self._cert = (
            x509.CertificateBuilder()
            .subject_name(_name(common_name))
            .issuer_name(_name(common_name))
            .public_key(self._key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - BACKDATE)
            .not_valid_after(now + validity)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(self._key.public_key()), critical=False)
            .sign(self._key, hashes.SHA256())
        )

    @property
    def cert_pem(self) -> bytes:
        """The CA certificate, what clients put in their trust bundle (`caBundle`, `ca.crt`)."""
        return self._cert.public_bytes(serialization.Encoding.PEM)

    @property
    def pair(self) -> CertPair:
        """The CA's own certificate and key (what kube-apiserver needs to sign with, e.g. for front-proxy)."""
        return CertPair(self.cert_pem, _key_pem(self._key))

    def issue(
        self,
        common_name: str,
        *,
        organizations: tuple[str, ...] = (),
        hosts: tuple[str, ...] = (),
        server: bool = False,
        client: bool = False,
    ) -> CertPair:
        """Issue a certificate for `common_name`.

        `hosts` become subject alternative names (IP addresses where they parse as one, DNS names otherwise);
        `server` / `client` set the extended key usages; `organizations` become the O= entries, which
        kube-apiserver reads as the user's groups.
        """
        if _name(common_name) == self._cert.subject:
            # Verifiers would take a leaf named like its issuer for a self-signed certificate.
            raise ValueError(f"a certificate cannot be named {common_name!r} like the CA that issues it")
        key = _new_key()
        now = datetime.datetime.now(datetime.UTC)
        usages = [ExtendedKeyUsageOID.SERVER_AUTH] if server else []
        if client:
            usages.append(ExtendedKeyUsageOID.CLIENT_AUTH)
        builder = (
            x509.CertificateBuilder()
            .subject_name(_name(common_name, organizations))
            .issuer_name(self._cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - BACKDATE)
            .not_valid_after(now + self.validity)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(self._key.public_key()), critical=False)
        )
        if usages:
            builder = builder.add_extension(x509.ExtendedKeyUsage(usages), critical=False)
        if hosts:
            builder = builder.add_extension(x509.SubjectAlternativeName(_san(hosts)), critical=False)
        cert = builder.sign(self._key, hashes.SHA256())
        return CertPair(cert.public_bytes(serialization.Encoding.PEM), _key_pem(key))


def _san(hosts: tuple[str, ...]) -> list[x509.GeneralName]:
    names: list[x509.GeneralName] = []
    for host in hosts:
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    return names


def signing_key_pair() -> CertPair:
    """A service-account signing key pair: (PEM public key, PEM private key) in a CertPair's two slots."""
    key = _new_key()
    public = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    return CertPair(public, _key_pem(key))


def not_after(cert_pem: bytes) -> datetime.datetime:
    """When the (first) certificate in `cert_pem` expires; raises ValueError when it does not parse."""
    return x509.load_pem_x509_certificate(cert_pem).not_valid_after_utc


__all__ = [
    "BACKDATE",
    "DEFAULT_VALIDITY",
    "CertPair",
    "CertificateAuthority",
    "not_after",
    "signing_key_pair",
]
