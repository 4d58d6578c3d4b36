"""envtest's throw-away CA ("tiny CA", as controller-runtime's envtest calls it): certificates valid one week."""

from __future__ import annotations

import datetime

from ballast.runtime.certs import CertificateAuthority, CertPair, signing_key_pair

ENVTEST_VALIDITY = datetime.timedelta(hours=168)


class TinyCA(CertificateAuthority):
    """A CA for one test run; everything it issues expires after a week."""

    def __init__(self, common_name: str = "ballast-envtest-ca") -> None:
        super().__init__(common_name, ENVTEST_VALIDITY)


__all__ = ["CertPair", "TinyCA", "signing_key_pair"]
