"""The resize lane's fixtures (a policy, a profile, pods in the test's namespace; the resize lane on a fake clock)
shared with the OOM watcher's tests."""

from tests.integration.controllers.resize.conftest import crds, lane, world

__all__ = ["crds", "lane", "world"]
