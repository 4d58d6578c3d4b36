"""Kill-switch state, held on every replica (architecture.md §5 item 2)."""

from .state import KillSwitchState

__all__ = ["KillSwitchState"]
