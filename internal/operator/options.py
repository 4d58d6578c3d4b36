"""Operator options shared by controllers and admission handlers (they never import each other).

Dry-run cascades as documented (docs/design.md, difference 3): measure ⇒ apply ⇒ resize — with the collector not
writing, neither admission nor resize act on stale recommendations.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ballast.runtime import Clock, RealClock


@dataclass(frozen=True)
class DryRun:
    """Which lanes only log what they would do. Built with `DryRun.cascade(...)` from the three flags."""

    measure: bool = False
    apply: bool = False
    resize: bool = False

    @classmethod
    def cascade(cls, *, measure: bool = False, apply: bool = False, resize: bool = False) -> DryRun:
        apply = apply or measure
        return cls(measure=measure, apply=apply, resize=resize or apply)


@dataclass(frozen=True)
class OperatorOptions:
    """What every lane needs to know about this process."""

    operator_namespace: str = "ballast-system"
    dry_run: DryRun = DryRun()
    webhook_configuration_name: str = "ballast"
    """Ballast's webhook configurations; the scheduling ones are `<this>-scheduling`."""
    scheduling_webhooks: bool = True
    """Whether scheduling policies are served (`/mutate-kupid`, `/validate-kupid`, the `schedulingpolicy` lane)."""
    history_buffer_bytes: int = 64 * 1024 * 1024
    """`--history-buffer-bytes`: collection cycles the store did not acknowledge, held in memory up to this
    estimate and written again (docs/design.md, difference 67)."""
    clock: Clock = field(default_factory=RealClock)
