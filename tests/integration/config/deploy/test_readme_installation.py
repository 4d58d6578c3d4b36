"""docs/install.md works as written, up to the step that needs a real cluster: its first bash
block (build or find helm, lint, render) runs from the repository root as a user would paste it."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from tests.integration.config.deploy.conftest import REPO


def installation_blocks(page: str) -> list[str] | None:
    """The bash blocks of the `# Installation` page before its first section, in order (None without that title)."""
    match = re.search(r"^# Installation\n(.*?)(?=^## |\Z)", page, flags=re.DOTALL | re.MULTILINE)
    return None if match is None else re.findall(r"```bash\n(.*?)```", match[1], flags=re.DOTALL)


def test_the_first_installation_block_runs_without_a_cluster(helm: Path, tmp_path: Path) -> None:
    blocks = installation_blocks((REPO / "docs" / "install.md").read_text())
    assert blocks is not None, "docs/install.md has no '# Installation' title"
    assert len(blocks) >= 2, "a block that runs anywhere, then the one for the cluster"
    local, cluster = blocks[0], blocks[1]
    assert "upgrade --install" in cluster
    assert "upgrade --install" not in local
    env = {key: value for key, value in os.environ.items() if key != "KUBECONFIG"}
    env["KUBECONFIG"] = str(tmp_path / "no-cluster")  # nothing in the block may reach a cluster
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", local], cwd=REPO, env=env, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, f"{local}\n--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"
    assert "0 chart(s) failed" in result.stdout
