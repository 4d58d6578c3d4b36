"""Control-plane child processes: started so that they die with us, stopped in order, diagnosed on failure."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO

from .errors import ProcessStartError
from .wait import WaitTimeoutError, poll_until

_PR_SET_PDEATHSIG = 1
STDERR_TAIL_LINES = 20


def _die_with_parent() -> None:
    """Runs in the child between fork and exec: ask the kernel for SIGKILL when our parent exits."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def attach_output() -> bool:
    """Whether control-plane output goes to our terminal (envtest's KUBEBUILDER_ATTACH_CONTROL_PLANE_OUTPUT)."""
    for name in ("BALLAST_ENVTEST_ATTACH_OUTPUT", "KUBEBUILDER_ATTACH_CONTROL_PLANE_OUTPUT"):
        if os.environ.get(name, "").lower() in ("1", "true", "yes"):
            return True
    return False


class Reaper:
    """Handle to the watchdog process (reaper.py) that cleans up if this process is killed."""

    def __init__(self) -> None:
        script = Path(__file__).with_name("reaper.py")
        self._process = subprocess.Popen(
            [sys.executable, "-I", str(script)],
            stdin=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        self._lock = threading.Lock()

    def _say(self, line: str) -> None:
        stdin = self._process.stdin
        if stdin is None or stdin.closed:
            return
        with self._lock, contextlib.suppress(BrokenPipeError):
            stdin.write(line + "\n")
            stdin.flush()

    def own_process(self, pid: int) -> None:
        self._say(f"pid {pid}")

    def release_process(self, pid: int) -> None:
        self._say(f"done pid {pid}")

    def own_dir(self, path: Path) -> None:
        self._say(f"dir {path}")

    def release_dir(self, path: Path) -> None:
        self._say(f"done dir {path}")

    def close(self) -> None:
        """Let the watchdog exit: everything it was told about has been released."""
        if self._process.stdin and not self._process.stdin.closed:
            with contextlib.suppress(BrokenPipeError):
                self._process.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._process.wait(timeout=10)


class ControlPlaneProcess:
    """One running binary (etcd, kube-apiserver, ...) with its output kept in a log file."""

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        log_path: Path,
        reaper: Reaper | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.name = name
        self.argv = list(argv)
        self.log_path = log_path
        self._reaper = reaper
        self._env = env
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    def start(self) -> None:
        """Start the binary in its own process group; it is SIGKILLed by the kernel if we die."""
        binary = Path(self.argv[0])
        if not binary.is_file():
            raise ProcessStartError(f"{self.name}: binary {binary} does not exist")
        if not os.access(binary, os.X_OK):
            raise ProcessStartError(f"{self.name}: binary {binary} is not executable")
        output: IO[bytes] | None = None
        if not attach_output():
            self._log = output = self.log_path.open("wb")
        try:
            self._process = subprocess.Popen(
                self.argv,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT if output else None,
                preexec_fn=_die_with_parent,  # noqa: PLW1509 - only prctl, no locks taken
                start_new_session=True,
                env=self._env,
            )
        except OSError as exc:
            raise ProcessStartError(
                f"{self.name}: cannot run {binary}: {exc.strerror} (is it a binary for this machine?)"
            ) from exc
        if self._reaper:
            self._reaper.own_process(self._process.pid)

    def exit_code(self) -> int | None:
        return self._process.poll() if self._process else None

    def output_tail(self, lines: int = STDERR_TAIL_LINES) -> str:
        """The last lines the process wrote, for error messages."""
        try:
            text = self.log_path.read_bytes()[-64 * 1024 :].decode("utf-8", "replace")
        except FileNotFoundError:
            return "(no output captured)"
        return "\n".join(text.splitlines()[-lines:]) or "(no output)"

    def wait_ready(self, probe: Callable[[], bool], timeout: float) -> None:
        """Poll `probe` until it passes; fail fast, with the process's last output, if it exits first."""

        def ready() -> bool:
            code = self.exit_code()
            if code is not None:
                raise ProcessStartError(
                    f"{self.name} ({self.argv[0]}) exited with code {code} before becoming ready; "
                    f"last output:\n{self.output_tail()}"
                )
            return probe()

        try:
            poll_until(ready, timeout=timeout, what=f"{self.name} to become ready")
        except WaitTimeoutError as exc:
            raise ProcessStartError(f"{exc}; last output of {self.name}:\n{self.output_tail()}") from exc

    def stop(self, timeout: float = 20.0) -> None:
        """SIGTERM the process group, then SIGKILL it after `timeout` seconds."""
        process = self._process
        if process is None:
            return
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        # Children of the binary (none expected) share its group; make sure none outlives it.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        if self._reaper:
            self._reaper.release_process(process.pid)
        if self._log:
            self._log.close()
            self._log = None
        self._process = None


__all__ = [
    "STDERR_TAIL_LINES",
    "ControlPlaneProcess",
    "Reaper",
    "attach_output",
]
