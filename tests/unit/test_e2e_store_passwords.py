"""The e2e suite's "no password in any log" check knows every password a store URL can carry (RELIABILITY.md,
Secrets): the data nodes' in any topology, and Sentinel's own."""

from __future__ import annotations

import pytest

from tests.e2e.support import url_passwords


@pytest.mark.parametrize(
    ("url", "passwords"),
    [
        ("redis://:s%40cret@valkey:6379/0", ["s@cret"]),
        (
            "redis+sentinel://app:data-pw@s1:26379,s2:26379/ballast?sentinel_password=sentinel-pw",
            ["data-pw", "sentinel-pw"],
        ),
        ("rediss+cluster://user:cluster-pw@n1:6379,n2:6379", ["cluster-pw"]),
        ("redis+sentinel://s1,s2/ballast", []),
    ],
)
def test_every_password_of_a_store_url_is_looked_for(url: str, passwords: list[str]) -> None:
    assert url_passwords(url) == passwords
