"""The one error of the placement package: input it cannot place from, named by where it is wrong."""

from __future__ import annotations


class PlacementInputError(ValueError):
    """Targets, policy, summaries or pods that `place` or `summarize_pods` refuse to guess about.

    `path` names the offending value the way a caller wrote it (`targets[1].min_replicas`,
    `policy.target_order[2]`, `summaries['zone-a'].not_started`), `message` says what is wrong with it. Upstream
    either crashes on such input (a `targetOrder` entry that names no target) or computes nonsense from it (a
    minimum above the maximum gives a negative free capacity); here nothing is placed at all.
    """

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path
        self.message = message
