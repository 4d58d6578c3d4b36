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
    leave_alone: tuple[str, ...] = ()
    """Namespaces besides the operator's that no lane touches (`--leave-alone-namespaces`): see `leaves_alone`."""
    dry_run: DryRun = DryRun()
    webhook_configuration_name: str = "ballast"
    """Ballast's webhook configurations; the scheduling ones are `<this>-scheduling`."""
    scheduling_webhooks: bool = True
    """Whether scheduling policies are served (`/mutate-kupid`, `/validate-kupid`, the `schedulingpolicy` lane)."""
    history_buffer_bytes: int = 64 * 1024 * 1024
    """`--history-buffer-bytes`: collection cycles the store did not acknowledge, held in memory up to this
    estimate and written again (docs/design.md, difference 67)."""
    clock: Clock = field(default_factory=RealClock)

    @property
    def left_alone(self) -> frozenset[str]:
        """The operator's namespace and `leave_alone`: one rule for every lane (docs/design.md, difference 60)."""
        return frozenset((self.operator_namespace, *self.leave_alone))

    def leaves_alone(self, namespace: str | None) -> bool:
        """Whether no lane enrolls, sizes, resizes or schedules anything in `namespace`: its pods are not
        cached, admission skips them and neither webhook configuration sends them."""
        return bool(namespace) and namespace in self.left_alone
