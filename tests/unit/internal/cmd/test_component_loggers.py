"""`ballastd --log-level-<component>` reaches loggers the code really logs through: with the operator assembled
(every lane on the in-memory API) and the admission handlers imported, each component's loggers exist."""

from __future__ import annotations

import logging
from pathlib import Path

from ballast.api.scheme import add_to_scheme
from ballast.internal.cmd.ballastd import COMPONENT_LOGGERS
from ballast.internal.cmd.wiring import (
    CONTROLLERS,
    Dependencies,
    add_core_lanes,
    add_optional_lanes,
    new_manager,
    register_webhooks,
)
from ballast.internal.history import open_store
from ballast.internal.killswitch import KillSwitchState
from ballast.internal.operator import OperatorOptions
from ballast.runtime import FakeAPI, Scheme, WebhookServer
from tests.unit.support import register_our_kinds


def test_every_component_maps_to_loggers_that_exist(tmp_path: Path) -> None:
    api = FakeAPI()
    register_our_kinds(api)
    manager = new_manager(api.client(scheme=add_to_scheme(Scheme())), namespace="ballast-system")
    store = open_store(f"sqlite:///{tmp_path / 'history.db'}")
    deps = Dependencies(store=store, kill_switch=KillSwitchState(), options=OperatorOptions())
    add_core_lanes(manager, set(CONTROLLERS), deps)
    add_optional_lanes(manager, set(CONTROLLERS), deps)
    register_webhooks(WebhookServer(port=0), manager, deps)
    store.close()
    import ballast.internal.collection.status  # noqa: F401, PLC0415 - the collection domain's logger module

    known = {name for name, logger in logging.Logger.manager.loggerDict.items() if isinstance(logger, logging.Logger)}
    missing = {c: [n for n in names if n not in known] for c, names in COMPONENT_LOGGERS.items()}
    assert {c: names for c, names in missing.items() if names} == {}
