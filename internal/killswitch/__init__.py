"""Kill-switch state, held on every replica (docs/design.md, difference 2)."""

from .state import KillSwitchState

__all__ = ["KillSwitchState"]
