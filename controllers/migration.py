"""Migration from the Go operator (docs/design.md, difference 17): remove its pod finalizer everywhere, once.

Pods still carrying `ballast.tightlinesoftware.com/workloadwatcher` would hang in Terminating with no operator
to remove it. Some may have lost the mode label (the Go operator's unenroll never ran), so they are found by one
uncached, paged list of all pods at start-up, on the leader. WorkloadProfiles, policies and Redis history are
reused as they are.
"""

from __future__ import annotations

import threading

from ballast.internal.enrollment import LEGACY_POD_FINALIZER
from ballast.internal.enrollment.legacy import remove_legacy_finalizer
from ballast.runtime import Manager, objects
from ballast.runtime.log import get_logger

PAGE_SIZE = 500
_log = get_logger("ballast.migration")


class LegacyFinalizerMigration:
    """A leader-only runnable that does its pass and then waits for shutdown."""

    name = "go-operator-migration"

    def __init__(self, manager: Manager) -> None:
        self.client = manager.api_reader
        self.removed = 0
        self.done = threading.Event()

    def run_once(self) -> int:
        removed = 0
        for pod in self.client.list_all("v1/Pod", page_size=PAGE_SIZE):
            legacy = LEGACY_POD_FINALIZER in (pod["metadata"].get("finalizers") or ())
            if legacy and remove_legacy_finalizer(self.client, objects.namespace(pod), objects.name(pod)):
                removed += 1
        return removed

    def start(self, stop: threading.Event) -> None:
        try:
            self.removed = self.run_once()
            if self.removed:
                _log.info("removed the Go operator's finalizer from %d pods", self.removed)
        except Exception as exc:  # the enrollment lane also removes it from enrolled pods it sees
            _log.warning("migration pass failed: %s", exc)
        finally:
            self.done.set()
        stop.wait()


def setup(manager: Manager) -> LegacyFinalizerMigration:
    migration = LegacyFinalizerMigration(manager)
    manager.add(migration)
    return migration
