"""The one error of the consolidation package: input it cannot plan from, named by where it is wrong."""

from __future__ import annotations


class ConsolidationInputError(ValueError):
    """Nodes, pods, pools, PDBs or what-if requests that `plan` refuses to guess about.

    `path` names the offending value the way a caller wrote it (`nodes[2].status.allocatable.cpu`,
    `pods['shop/web-0'].spec.priority`, `pools['general'].consolidationPolicy`), `message` says what is wrong
    with it. A malformed catalogue entry is not an error: it is reported by name in `Catalogue.problems` and
    skipped, because one bad price must not hide the rest of the advice.
    """

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path
        self.message = message
