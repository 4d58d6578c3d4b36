"""Pod admission (docs/compatibility.md): `/mutate-v1-pod` applies a WorkloadProfile's recommendations to enrolled
pods at CREATE; `/validate-v1-pod` refuses a pod UPDATE that sets an invalid mode label (docs/design.md, difference 18).

    pods.register(server, reader=manager.client, owner_reader=manager.api_reader,
                  kill_switch=kill_switch, options=options)

The mutation follows the Go operator's Handle step by step — kill switch first (every replica keeps the state,
difference 2), decode, mode, measure-only, policy, profile, readiness, mutate, dry-run — with our differences:
per-container readiness (difference 5) and request ≤ limit (difference 4), see `webhook.recommendations`; dry-run
cascades (`--dry-run-measure` implies apply, difference 3); the owner chain for policy `kinds` (difference 9, see
`webhook.reader`). Every outcome is counted in `ballast_webhook_mutations` and, once apply is requested, in
`ballast_apply_*`. A bad object is answered (400 or a denial), never raised.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

import msgspec

from ballast.api.ballast.v1 import (
    BallastConfig,
    WorkloadProfile,
)
from ballast.api.wire import as_model
from ballast.internal.enrollment import (
    BALLAST_CONFIG_NAME,
    MODE_LABEL,
    MODES,
    POLICY_REF,
    PodProjection,
    invalid_mode_message,
    wants_apply,
)
from ballast.internal.killswitch import KillSwitchState
from ballast.internal.oom import OOM_RAISED_FOR, active_floors, coupled_containers, raised_for, with_floors
from ballast.internal.operator import OperatorOptions
from ballast.internal.policy import OwnerReader, OwnerReferenceError, PolicyCache, Resolution, Resolver, pod_identity
from ballast.internal.quantity import QuantityError, to_units
from ballast.internal.stats.applicable import ready_recommendations
from ballast.internal.telemetry import (
    APPLY_APPLIED,
    APPLY_LIMIT_SCALED,
    APPLY_SKIPPED,
    WEBHOOK_MUTATIONS,
    profile_attributes,
)
from ballast.runtime import (
    AdmissionRequest,
    AdmissionResponse,
    NotFoundError,
    Projection,
    WebhookServer,
    allowed,
    denied,
    errored,
    patched,
)
from ballast.runtime.log import Logger, get_logger

from .reader import Reader
from .recommendations import Mutation, annotate, apply_recommendations

MUTATE_PATH = "/mutate-v1-pod"
VALIDATE_PATH = "/validate-v1-pod"

KILL_SWITCH_ACTIVE = "kill switch active"
APPLY_NOT_REQUESTED = "apply not requested"
LEFT_ALONE = "namespace left alone by Ballast"
"""A pod in the operator's namespace or one of `--leave-alone-namespaces` (docs/design.md, difference 60)."""
POLICY_NOT_AVAILABLE = "policy not available"
PROFILE_NOT_AVAILABLE = "profile not available"
PROFILE_NOT_FOUND = "profile not found"
PROFILE_NOT_READY = "profile not ready"
DRY_RUN_SUPPRESSED = "dry-run: apply suppressed"
ONLY_CREATE = "only pod CREATE is mutated"
MODE_UNCHANGED = "mode label unchanged"

_log = get_logger("ballast.webhook")
P = TypeVar("P", bound=Projection)


# ------------------------------------------------------------------------------------------------ decoding


class PodDecodeError(ValueError):
    """The request's object is not a pod the handlers can read (answered with 400)."""


class _NotAvailableError(Exception):
    """The policy or the profile name cannot be had; the message is the admission's answer."""


class UnnamedPodError(ValueError):
    """The pod's identity label values give no profile name (only invalid label values do: `.`, non-ASCII
    letters), so it has no profile; the API server refuses such a pod after admission anyway."""


def _decode(obj: dict[str, Any] | None, shape: type[P], what: str) -> P:
    if obj is None:
        raise PodDecodeError(f"the request has no {what}")
    try:
        return msgspec.convert(obj, shape)
    except msgspec.ValidationError as exc:
        raise PodDecodeError(f"cannot decode the {what} as a pod: {exc}") from exc


def decode_pod(request: AdmissionRequest) -> PodProjection:
    """The request's pod as the domain reads it (converted once, here; the mutation is written into a copy of the
    request's object). Raises PodDecodeError for a missing object, another kind, or a mistyped field (named by
    its JSON path)."""
    kind = request.kind.get("kind")
    if kind and kind != "Pod":
        raise PodDecodeError(f"expected a Pod, got a {kind}")
    return _decode(request.object, PodProjection, "object")


def _mode(obj: dict[str, Any] | None, what: str) -> str | None:
    if obj is None:
        return None
    return _decode(obj, Projection, what).metadata.labels.get(MODE_LABEL)


def _pod_name(request: AdmissionRequest, pod: PodProjection) -> str:
    return request.name or pod.metadata.name or pod.metadata.generate_name


# --------------------------------------------------------------------------------------------- mutation


class PodMutator:
    """The `/mutate-v1-pod` handler (docs/compatibility.md, in order):

    1. kill switch active → allowed "kill switch active" (`result=kill_switch`), before anything else;
    2. the object does not decode as a pod → errored 400 (failurePolicy Fail rejects the pod);
    3. an invalid mode label → denied with the Go operator's exact message;
    4. mode `measure` (or no label) → allowed "apply not requested" (`skipped`);
    5. the policy cannot be resolved (a read failed) → allowed "policy not available" (`not_available`);
    6. no BallastConfig `ballast`, or no profile name → allowed "profile not available" (`not_available`);
       the profile `profile_name(tuple_labels(pod), identityLabels, discriminator)` cannot be read →
       allowed "profile not found" (`apply.skipped{no_profile}`, `skipped`);
    7. no ready container of the pod has recommendations and `meetsThreshold` is false → allowed "profile not
       ready" (`apply.skipped{not_ready}`, `skipped`);
    8. stamp `policy-ref` (when a policy resolved), write the ready containers' recommendations and the
       `applied-*` annotations (`apply.applied`, or `apply.skipped{no_change}` when no container matched);
       with dry-run → allowed "dry-run: apply suppressed" without a patch (`apply.skipped{dry_run}`,
       `dry_run`); otherwise the JSON patch (`mutated`), and each raised limit counted in
       `ballast_apply_limit_scaled`.

    Other operations (a misconfigured webhook) are allowed untouched, right after the kill switch.
    """

    def __init__(
        self,
        reader: Reader,
        *,
        kill_switch: KillSwitchState,
        options: OperatorOptions,
        owner_reader: Reader | None = None,
        policy_cache: PolicyCache | None = None,
    ) -> None:
        self.reader = reader
        self.kill_switch = kill_switch
        self.options = options
        # The same resolution and naming as enrollment (controllers/enrollment.py).
        owners = OwnerReader(owner_reader if owner_reader is not None else reader)
        self._resolver = Resolver(reader, owners=owners, cache=policy_cache)

    @property
    def dry_run(self) -> bool:
        """Whether apply only logs (dry-run cascades: measure implies apply)."""
        return self.options.dry_run.apply or self.options.dry_run.measure

    def __call__(self, request: AdmissionRequest) -> AdmissionResponse:
        if self.kill_switch.active:
            _mutations("kill_switch", request.namespace)
            return allowed(KILL_SWITCH_ACTIVE)
        if request.operation != "CREATE":
            return allowed(ONLY_CREATE)
        try:
            pod = decode_pod(request)
        except PodDecodeError as exc:
            return errored(400, str(exc))
        namespace = request.namespace or pod.metadata.namespace
        log = _log.with_values(pod=_pod_name(request, pod), namespace=namespace)
        unapplied = self._without_apply(pod.metadata.labels, namespace, log)
        return unapplied if unapplied is not None else self._apply(request, pod, namespace, log)

    def _without_apply(self, labels: Mapping[str, str], namespace: str, log: Logger) -> AdmissionResponse | None:
        """The answer for a pod that gets no recommendations (left alone, an invalid mode, no apply), or None."""
        if self.options.leaves_alone(namespace):  # the configuration's namespaceSelector should not have sent it
            _mutations("skipped", namespace)
            return allowed(LEFT_ALONE)
        mode = labels.get(MODE_LABEL)
        if mode is not None and mode not in MODES:
            log.info("denied: invalid mode label", extra={"mode": mode})
            return denied(invalid_mode_message(mode))
        if not wants_apply(labels):
            _mutations("skipped", namespace)
            return allowed(APPLY_NOT_REQUESTED)
        return None

    def _apply(self, request: AdmissionRequest, pod: PodProjection, namespace: str, log: Logger) -> AdmissionResponse:
        try:
            resolution, name, identity = self._identify(pod, namespace, log)
        except _NotAvailableError as unavailable:
            _mutations("not_available", namespace)
            return allowed(str(unavailable))
        outcome = _Outcome(profile_attributes(name, identity), resolution.name if resolution else "", namespace)
        log = log.with_values(profile=name, policy=outcome.policy)
        profile = self._profile(name, outcome, log)
        if isinstance(profile, AdmissionResponse):
            return profile
        mutated = request.object_copy()
        if resolution is not None:
            annotate(mutated, POLICY_REF, resolution.ref)
        floors = active_floors(profile.status, self.options.clock.now())  # a lapsed floor the lane has not removed
        ready = ready_recommendations(profile.status)
        coupled = coupled_containers(mutated, ready) if floors else set()
        mutation = apply_recommendations(mutated, with_floors(ready, floors, coupled=coupled))
        oom_note = raised_for(floors, _memory_limits(mutation)) if floors else None
        if oom_note:  # which limits an OOM floor set, and after kills where (docs/design.md, difference 62)
            annotate(mutated, OOM_RAISED_FOR, oom_note)
        if not mutation.containers and not (profile.status and profile.status.meets_threshold):
            log.debug("profile not ready; admitting unchanged")
            return outcome.skipped("not_ready", PROFILE_NOT_READY)
        if self.dry_run:
            log.info("dry-run: would apply recommendations", extra=_log_fields(mutation, dry_run=True))
            return outcome.dry_run(mutation)
        log.info("applying recommendations", extra=_log_fields(mutation, dry_run=False))
        return outcome.mutated(mutation, patched(request, mutated))

    def _profile(self, name: str, outcome: _Outcome, log: Logger) -> WorkloadProfile | AdmissionResponse:
        """The profile, or the answer when there is none (a skip) or it cannot be read (not available)."""
        try:
            return as_model(WorkloadProfile, self.reader.get(WorkloadProfile, name))
        except NotFoundError:
            log.debug("no profile; admitting unchanged")
            return outcome.skipped("no_profile", PROFILE_NOT_FOUND)
        except Exception:  # a profile that no longer fits its model, a timeout, a bug: see `_identify`
            log.warning("cannot read the profile; admitting unchanged", exc_info=True)
            return outcome.not_available(PROFILE_NOT_AVAILABLE)

    def _identify(
        self, pod: PodProjection, namespace: str, log: Logger
    ) -> tuple[Resolution | None, str, dict[str, str]]:
        """The pod's policy, profile name and tuple labels; `_NotAvailableError` (logged) when one cannot be had.

        Each broad `except` below: whatever broke (an unreadable owner, a timeout, a stored object that no longer
        fits its model, a bug), the pod is admitted unchanged — never refused for our failure — and the failure
        is a warning with its traceback and `result="not_available"`. A pod that is itself invalid (a controller
        reference without a kind, label values that name no profile; the API server refuses it after admission)
        is admitted unchanged too, logged at info without a traceback: anyone who may create pods can send one.
        """
        try:
            resolution = self._resolve(pod, namespace)
        except OwnerReferenceError as exc:
            log.info("the pod's controller reference has no kind; admitting unchanged", extra={"reason": str(exc)})
            raise _NotAvailableError(POLICY_NOT_AVAILABLE) from exc
        except Exception as exc:  # see above
            log.warning("cannot resolve the policy; admitting unchanged", exc_info=True)
            raise _NotAvailableError(POLICY_NOT_AVAILABLE) from exc
        try:
            name, identity = self._profile_identity(pod.metadata.labels, resolution)
        except UnnamedPodError as exc:
            log.info("the pod's labels name no profile; admitting unchanged", extra={"reason": str(exc)})
            raise _NotAvailableError(PROFILE_NOT_AVAILABLE) from exc
        except Exception as exc:  # see above
            log.warning("cannot name the profile; admitting unchanged", exc_info=True)
            raise _NotAvailableError(PROFILE_NOT_AVAILABLE) from exc
        return resolution, name, identity

    def _resolve(self, pod: PodProjection, namespace: str) -> Resolution | None:
        return self._resolver.resolve(pod, namespace)

    def _profile_identity(self, labels: Mapping[str, str], resolution: Resolution | None) -> tuple[str, dict[str, str]]:
        config = as_model(BallastConfig, self.reader.get(BallastConfig, BALLAST_CONFIG_NAME))
        try:
            identity = pod_identity(labels, config.spec.identity_labels, resolution)
        except ValueError as exc:  # `profile_name`: a label value that sanitizes to no DNS label
            raise UnnamedPodError(str(exc)) from exc
        return identity.profile, identity.tuple_labels


class _Outcome:
    """Counts one admission that requested apply, with the profile attributes, policy and namespace."""

    def __init__(self, attributes: dict[str, str], policy: str, namespace: str) -> None:
        self.attributes = attributes
        self.policy = policy
        self.namespace = namespace

    def _apply_labels(self, **extra: str) -> dict[str, str]:
        return {**self.attributes, **extra, "policy": self.policy, "namespace": self.namespace}

    def skipped(self, reason: str, message: str) -> AdmissionResponse:
        APPLY_SKIPPED.inc(self._apply_labels(reason=reason))
        _mutations("skipped", self.namespace, self.attributes)
        return allowed(message)

    def not_available(self, message: str) -> AdmissionResponse:
        """The profile exists, or may, but could not be read: not a skip, a failure to look into."""
        _mutations("not_available", self.namespace, self.attributes)
        return allowed(message)

    def dry_run(self, mutation: Mutation) -> AdmissionResponse:
        APPLY_SKIPPED.inc(self._apply_labels(reason="dry_run" if mutation.containers else "no_change"))
        _mutations("dry_run", self.namespace, self.attributes)
        return allowed(DRY_RUN_SUPPRESSED)

    def mutated(self, mutation: Mutation, response: AdmissionResponse) -> AdmissionResponse:
        if mutation.containers:
            APPLY_APPLIED.inc(self._apply_labels())
        else:
            APPLY_SKIPPED.inc(self._apply_labels(reason="no_change"))
        for scaled in mutation.scaled_limits:
            APPLY_LIMIT_SCALED.inc(self._apply_labels(resource=scaled.resource))
        _mutations("mutated", self.namespace, self.attributes)
        return response


def _memory_limits(mutation: Mutation) -> dict[str, int]:
    """The memory limits `mutation` wrote, in bytes, by container."""
    written: dict[str, int] = {}
    for value in mutation.values:
        if value.resource == "memory" and value.field == "limit":
            try:
                written[value.container] = to_units(value.value, "memory")
            except (QuantityError, ValueError):  # written as recommended; just not a floor we can recognise
                continue
    return written


def _mutations(result: str, namespace: str, attributes: Mapping[str, str] | None = None) -> None:
    WEBHOOK_MUTATIONS.inc({**(attributes or {}), "result": result, "namespace": namespace})


def _log_fields(mutation: Mutation, *, dry_run: bool) -> dict[str, Any]:
    return {
        "dry_run": dry_run,
        "containers": list(mutation.containers),
        "resources": [f"{v.container}/{v.resource}/{v.field}={v.value}" for v in mutation.values],
        "limits_scaled": [f"{s.container}/{s.resource}: {s.before} -> {s.limit}" for s in mutation.scaled_limits],
    }


# ------------------------------------------------------------------------------------------- validation


class PodModeValidator:
    """The `/validate-v1-pod` handler (pod UPDATE, docs/design.md, difference 18).

    A mode label changed to a value outside `measure`, `apply`, `resize` is denied with the Go operator's exact
    message; a valid or absent mode is allowed, and so is an update that leaves an (already stored) invalid
    value as it was — so metadata edits and finalizer removal on such a pod are never blocked. While the kill
    switch is active everything is allowed, as in the mutating webhook. The object is decoded as `/mutate-v1-pod`
    decodes it (`decode_pod`), so what one answers 400 the other does too; the old object only for its labels.
    """

    def __init__(self, kill_switch: KillSwitchState) -> None:
        self.kill_switch = kill_switch

    def __call__(self, request: AdmissionRequest) -> AdmissionResponse:
        if self.kill_switch.active:
            return allowed(KILL_SWITCH_ACTIVE)
        try:
            # The whole pod, as `/mutate-v1-pod` decodes it: both handlers accept and refuse the same objects.
            mode = decode_pod(request).metadata.labels.get(MODE_LABEL)
            old_mode = _mode(request.old_object, "oldObject")
        except PodDecodeError as exc:
            return errored(400, str(exc))
        if mode is None or mode in MODES:
            return allowed()
        if mode == old_mode:
            return allowed(MODE_UNCHANGED)
        return denied(invalid_mode_message(mode))


def register(
    server: WebhookServer,
    *,
    reader: Reader,
    kill_switch: KillSwitchState,
    options: OperatorOptions,
    owner_reader: Reader | None = None,
) -> None:
    """Serve `/mutate-v1-pod` (pod CREATE) and `/validate-v1-pod` (pod UPDATE) on `server`.

    `reader` is the manager's cache-backed client (policies, the BallastConfig, WorkloadProfiles);
    `owner_reader` reads pod owners for the policy `kinds` rule — pass `manager.api_reader` (live, see
    `webhook.reader`); it defaults to `reader`. `kill_switch` is this replica's state; `options.dry_run`
    decides whether patches are sent.
    """
    mutator = PodMutator(reader, kill_switch=kill_switch, options=options, owner_reader=owner_reader)
    server.register(MUTATE_PATH, mutator)
    server.register(VALIDATE_PATH, PodModeValidator(kill_switch))
