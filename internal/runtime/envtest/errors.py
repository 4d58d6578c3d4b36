"""Errors raised by the envtest harness; each names what was wrong and how to fix it."""

from __future__ import annotations


class EnvtestError(Exception):
    """Base class of every harness error."""


class AssetsNotFoundError(EnvtestError):
    """A control-plane binary is missing and could not be built."""


class BuildError(EnvtestError):
    """Building the control-plane binaries from Go modules failed."""


class ProcessStartError(EnvtestError):
    """A control-plane process exited early or never became ready."""


class PortInUseError(EnvtestError):
    """A requested port is already bound by another process."""


class ManifestError(EnvtestError):
    """A CRD or webhook manifest could not be read or is not what was expected."""


class APIError(EnvtestError):
    """The API server answered a harness request with an error status."""

    def __init__(self, method: str, path: str, status: int, reason: str, message: str) -> None:
        super().__init__(f"{method} {path}: {status} {reason}: {message}")
        self.method = method
        self.path = path
        self.status = status
        self.reason = reason
        self.message = message


class NetworkError(EnvtestError):
    """The private test network namespace could not be set up or is not in use."""


__all__ = [
    "APIError",
    "AssetsNotFoundError",
    "BuildError",
    "EnvtestError",
    "ManifestError",
    "NetworkError",
    "PortInUseError",
    "ProcessStartError",
]
