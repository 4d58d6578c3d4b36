"""How one operator process is configured: options shared by its controllers and webhook handlers."""

from .options import DryRun, OperatorOptions

__all__ = ["DryRun", "OperatorOptions"]
