"""How one operator process is configured: options shared by its controllers and webhook handlers.

Both import it, so it imports neither; `ballast.internal.cmd.wiring` assembles them.
"""

from .options import DryRun, OperatorOptions

__all__ = ["DryRun", "OperatorOptions"]
