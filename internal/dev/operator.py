"""`ballastd` as a child process of `make dev`: the real operator, wired to the local control plane.

It runs as `python -m ballast.internal.cmd.ballastd` with the embedded SQLite store and its log under a
directory of the demo, serves its webhook on loopback with a certificate from the control plane's CA, and its
probes and Prometheus metrics on free loopback ports. The process is started like the control-plane binaries
(its own process group, killed by the kernel if the demo dies), and stopped with SIGTERM, then SIGKILL.
"""

from __future__ import annotations

import sys
from pathlib import Path

import urllib3

from ballast.runtime.envtest import Environment
from ballast.runtime.envtest.ports import suggest_port
from ballast.runtime.envtest.process import ControlPlaneProcess

from .scenario import OPERATOR_NAMESPACE

READY_TIMEOUT = 90.0
SHUTDOWN_GRACE = 5.0
"""ballastd's --graceful-shutdown-timeout here: nothing in a throw-away cluster is worth waiting longer for."""


class DevOperator:
    """One `ballastd` against `env`; state (store, log) under `directory`."""

    def __init__(self, env: Environment, directory: Path) -> None:
        self.env = env
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self.store_url = f"sqlite:///{directory / 'history.db'}"
        self.log_path = directory / "ballastd.log"
        self.cert_dir = env.webhook_cert_dir()
        self.webhook_port = suggest_port()
        self.health_port = suggest_port()
        self.metrics_port = suggest_port()
        self._process = ControlPlaneProcess("ballastd", self.argv(), self.log_path)

    def argv(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "ballast.internal.cmd.ballastd",
            f"--kubeconfig={self.env.kubeconfig_path}",
            f"--operator-namespace={OPERATOR_NAMESPACE}",
            f"--store={self.store_url}",
            f"--webhook-bind-address=127.0.0.1:{self.webhook_port}",
            f"--webhook-cert-path={self.cert_dir}",
            f"--health-probe-bind-address=127.0.0.1:{self.health_port}",
            f"--metrics-bind-address=127.0.0.1:{self.metrics_port}",
            f"--graceful-shutdown-timeout={SHUTDOWN_GRACE:g}",
            "--log-format=text",
        ]

    @property
    def pid(self) -> int | None:
        return self._process.pid

    @property
    def metrics_url(self) -> str:
        return f"http://127.0.0.1:{self.metrics_port}/metrics"

    def start(self) -> None:
        """Start ballastd and wait for /readyz (raises ProcessStartError with its last output if it exits)."""
        self._process.start()
        http = urllib3.PoolManager(retries=False, timeout=2.0)
        self._process.wait_ready(
            lambda: http.request("GET", f"http://127.0.0.1:{self.health_port}/readyz").status == 200, READY_TIMEOUT
        )

    def exit_code(self) -> int | None:
        """None while running; the exit code once it has exited."""
        return self._process.exit_code()

    def output_tail(self, lines: int = 20) -> str:
        return self._process.output_tail(lines)

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after ballastd's own shutdown grace and a margin."""
        self._process.stop(timeout=SHUTDOWN_GRACE + 10.0)
