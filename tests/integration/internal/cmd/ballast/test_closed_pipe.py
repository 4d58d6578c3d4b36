"""`ballast … | head`: a reader that went away before the output was written ends the command quietly (exit 141,
as a tool killed by SIGPIPE), never with a BrokenPipeError traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ballast.internal.cmd.failures import EXIT_BROKEN_PIPE
from ballast.runtime.envtest import Environment

BALLAST = Path(sys.executable).parent / "ballast"


def test_profiles_as_json_into_a_closed_pipe_ends_quietly(envtest: Environment) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # `head` has read its lines and gone
    try:
        result = subprocess.run(
            [str(BALLAST), "--kubeconfig", str(envtest.kubeconfig_path), "profiles", "-o", "json"],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert (result.returncode, result.stderr) == (EXIT_BROKEN_PIPE, "")
