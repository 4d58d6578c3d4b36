"""Store errors: what a caller catches to skip a collection cycle without losing history."""

from __future__ import annotations


class StoreError(Exception):
    """The history store refused an operation; nothing of the failed call was written.

    The collector catches this (or a subclass), skips the cycle and keeps the profile's last status.
    """


class StoreUnavailableError(StoreError):
    """The store could not be reached or did not answer within the client timeout.

    A write that timed out may still be applied by the server later, entirely or not at all (never in part);
    retrying it with the same cycle id is safe, because cycles are idempotent.
    """


class StoreNotReplicatedError(StoreUnavailableError):
    """The primary applied a write but fewer replicas than wanted acknowledged it in time (`WAIT`).

    The write may be lost in a failover, so the caller keeps the cycle and writes it again later: the retry finds
    the cycle's marker, applies nothing twice, and waits for the replicas once more.
    """


class StoreURLError(StoreError, ValueError):
    """A store URL that cannot be opened: unknown scheme, missing path, unparsable options."""
