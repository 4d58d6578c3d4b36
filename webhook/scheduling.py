"""Scheduling-policy admission (kupid): `/mutate-kupid` merges the matching PodSchedulingPolicies and
ClusterPodSchedulingPolicies into Pods and workload pod templates (`ballast.internal.scheduling`).

    scheduling.register(server, reader=manager.client, recorder=manager.get_event_recorder("scheduling"),
                        cache=manager.cache)

What is mutated, and when (`internal/scheduling/targets.py`): Pods on CREATE only, except those a DaemonSet
controls and mirror pods; workload templates (Deployments, StatefulSets, DaemonSets, ReplicationControllers,
CronJobs) on CREATE and on an UPDATE whose template changed; Jobs on CREATE only; never ReplicaSets. Every Pod
a policy matched carries `ballast.tightlinesoftware.com/scheduling-policies`. An enforced policy
(`ballast.tightlinesoftware.com/enforce: "true"`) that cannot be applied whole denies the object, naming the
policy and the field. A failure to read the policies is answered 500, so the configuration's failurePolicy
decides (docs/design.md, difference 32).

With `availability` (kupid's CRDs watched, `ballast.internal.scheduling.availability`): a kind whose CRD is not
installed has no policies — the object is admitted without them, with a log line; a kind whose CRD exists but has
not been listed since it (re)appeared is waited for up to `PENDING_WAIT` seconds, then answered 500 "not ready",
so the failurePolicy decides (docs/design.md, difference 61).

Cost: the policies of a namespace are compiled and ordered once into a `PolicySet`, not listed again while the
cache's policy informers see no change, and the selection per label set and the merge per scheduling fields are
remembered there; only the scheduling fields are copied, and the patch skips what the object shares with the
request (benchmarks/scheduling_webhook.py).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ballast.api.kupid.v1alpha1 import GROUP, VERSION
from ballast.internal.scheduling import (
    APPLIED,
    CLUSTER_KIND,
    CONFLICT,
    ERROR,
    NAMESPACED_KIND,
    POLICIES_ANNOTATION,
    SCHEDULING_FIELDS,
    CompiledPolicy,
    PolicyOutcome,
    PolicySet,
    PolicySets,
    Target,
    compile_policy,
    denies,
    is_daemonset_pod,
    is_enforced,
    is_mirror_pod,
    pod_template,
    policy_ref,
    sharing_pod_spec,
    target_for,
    template_of,
)
from ballast.internal.scheduling.availability import ABSENT, CRD_NAMES, SchedulingAvailability
from ballast.internal.scheduling.metrics import (
    KUPID_REQUESTS,
    SCHEDULING_ADMISSION_DURATION,
    SCHEDULING_POLICY_APPLICATIONS,
)
from ballast.internal.scheduling.policies import as_wire
from ballast.runtime import (
    AdmissionRequest,
    AdmissionResponse,
    Cache,
    GroupVersionKind,
    NotFoundError,
    WebhookServer,
    allowed,
    denied,
    errored,
    patched,
)
from ballast.runtime.informer import FuncHandler
from ballast.runtime.log import Logger, RateLimitedLog, get_logger
from ballast.runtime.objects import FrozenDict, thaw
from ballast.runtime.recorder import WARNING, EventRecorder

from .reader import Reader

MUTATE_PATH = "/mutate-kupid"

NOT_A_TARGET = "no pod template to schedule"
ONLY_CREATE = "only CREATE is mutated for this kind"
TEMPLATE_UNCHANGED = "pod template unchanged"
DAEMONSET_POD = "DaemonSet pods are placed by their template"
MIRROR_POD = "mirror pods are not mutated"
LEFT_ALONE = "namespace left alone by Ballast"
NO_POLICY = "no scheduling policy matched"
UNCHANGED = "scheduling policies already applied"

DENIED = "denied"
INVALID_POLICY_REASON = "InvalidSchedulingPolicy"
CONFLICT_REASON = "SchedulingPolicyConflict"
SKIPPED_LOG_INTERVAL = 60.0
"""Seconds between two log lines about the same skipped (invalid or conflicting) policy."""
PENDING_WAIT = 5.0
"""Seconds an admission waits for a reappeared CRD's policies to be listed (the API server's default timeout is
10 s) before answering "not ready"."""
ABSENT_LOG_INTERVAL = 60.0
"""Seconds between two log lines about admitting without a kind whose CRD is not installed."""

_log = get_logger("ballast.webhook.scheduling")
_skipped = RateLimitedLog(_log, interval=SKIPPED_LOG_INTERVAL)
_absent = RateLimitedLog(_log, interval=ABSENT_LOG_INTERVAL)


class PoliciesNotReadyError(RuntimeError):
    """A kind's CRD exists but its policies have not been listed since it (re)appeared."""


# Listed by GroupVersionKind, not by model: the cache then hands out read-only views of what it stores instead of
# validating a fresh model per policy per request (the same informers: the cache keys them by GVK).
CLUSTER_POLICIES = GroupVersionKind(GROUP, VERSION, "ClusterPodSchedulingPolicy")
NAMESPACED_POLICIES = GroupVersionKind(GROUP, VERSION, "PodSchedulingPolicy")
NAMESPACE = GroupVersionKind("", "v1", "Namespace")


def _labels_of(obj: Any) -> dict[str, str]:
    """The labels of a cached Namespace (a projection) or of a plain dict."""
    metadata = obj.get("metadata") if isinstance(obj, Mapping) else getattr(obj, "metadata", None)
    labels = metadata.get("labels") if isinstance(metadata, Mapping) else getattr(metadata, "labels", None)
    return dict(labels or {})


class _CompiledMemo:
    """Policies as compiled wire dicts, converted and compiled once per resourceVersion (the cache hands out
    read-only views; other readers may hand out models or plain dicts, compiled on every call)."""

    LIMIT = 4096

    def __init__(self) -> None:
        self._compiled: dict[tuple[str, str, str], tuple[str, CompiledPolicy]] = {}

    def __call__(self, policy: Any) -> CompiledPolicy:
        if isinstance(policy, FrozenDict):
            metadata = policy["metadata"]
            key = (str(policy.get("kind")), metadata.get("namespace") or "", metadata.get("name") or "")
            version = metadata.get("resourceVersion") or ""
        elif isinstance(policy, Mapping):
            return compile_policy(policy)
        else:
            key = (policy.KIND, policy.metadata.namespace or "", policy.metadata.name or "")
            version = policy.metadata.resource_version or ""
        cached = self._compiled.get(key)
        if cached is not None and cached[0] == version and version:
            return cached[1]
        if len(self._compiled) >= self.LIMIT:
            self._compiled.clear()
        compiled = compile_policy(thaw(policy) if isinstance(policy, FrozenDict) else as_wire(policy))
        self._compiled[key] = (version, compiled)
        return compiled


class _PolicyChanges:
    """How many changes the cache's policy informers have stored: a policy set built at one count is right while
    the count stays, so nothing is listed (the informers call back after storing each change)."""

    def __init__(self, cache: Cache) -> None:
        self._count = 0
        self._lock = threading.Lock()
        handler = FuncHandler(
            add=lambda obj, initial: self._changed(),
            update=lambda old, new: None if old is new else self._changed(),  # a resync delivers old is new
            delete=lambda obj: self._changed(),
        )
        for kind in (CLUSTER_POLICIES, NAMESPACED_POLICIES):
            cache.get_informer(kind).add_event_handler(handler)

    def _changed(self) -> None:
        with self._lock:
            self._count += 1

    @property
    def count(self) -> int:
        return self._count


@dataclass(frozen=True)
class _Request:
    """What one admission is about: the target kind, the object, its namespace and a logger naming it."""

    target: Target
    obj: dict[str, Any]
    namespace: str
    log: Logger

    @property
    def kind(self) -> str:
        return self.target.kind


class SchedulingMutator:
    """The `/mutate-kupid` handler:

    1. a kind without a pod template, or no object → 400 (`error`); a Pod UPDATE, a Job UPDATE, a workload
       UPDATE whose template is unchanged, a DaemonSet-controlled or mirror Pod → allowed untouched;
    2. the policies (and, for cluster policies, the Namespace's labels) are read from the cache; a read that
       fails → 500 (`error`), so the failurePolicy decides;
    3. `select_policies` and `merge_detailed`; an invalid policy is skipped (`result="error"`, a Warning event on
       it); a policy in conflict is skipped (`conflict`, a Warning event);
    4. an enforced policy with a conflict (a field the object already holds otherwise, or every affinity term
       contradictory) → denied naming the policy and the field (`denied`);
    5. the merged spec, and on Pods the annotation naming the matched policies, as a JSON patch — none when
       nothing changed.
    """

    def __init__(
        self,
        reader: Reader,
        *,
        recorder: EventRecorder | None = None,
        availability: SchedulingAvailability | None = None,
        left_alone: frozenset[str] = frozenset(),
        cache: Cache | None = None,
    ) -> None:
        self.reader = reader
        self.recorder = recorder
        self.availability = availability
        self.left_alone = left_alone
        self._compile = _CompiledMemo()
        self._sets = PolicySets(self._compile)
        self._changes = None if cache is None else _PolicyChanges(cache)

    def __call__(self, request: AdmissionRequest) -> AdmissionResponse:
        started = time.perf_counter()
        KUPID_REQUESTS.labels("processed").inc()
        kind = str(request.kind.get("kind") or "")
        try:
            return self._handle(request)
        finally:
            SCHEDULING_ADMISSION_DURATION.labels(kind).observe(time.perf_counter() - started)

    def _handle(self, request: AdmissionRequest) -> AdmissionResponse:
        target = target_for(str(request.kind.get("group") or ""), str(request.kind.get("kind") or ""))
        if target is None or request.object is None:
            KUPID_REQUESTS.labels("error").inc()
            what = "no object" if target is not None else f"kind {request.kind.get('kind')!r}"
            return errored(400, f"{NOT_A_TARGET}: {what}")
        skipped = _skip_reason(request, target)
        if skipped:
            return allowed(skipped)
        namespace = request.namespace or str((request.object.get("metadata") or {}).get("namespace") or "")
        if namespace in self.left_alone:  # the configuration's namespaceSelector should not have sent it
            return allowed(LEFT_ALONE)
        name = request.name or str((request.object.get("metadata") or {}).get("name") or "")
        log = _log.with_values(kind=target.kind, namespace=namespace, name=name or "(generated)")
        return self._mutate(request, _Request(target, request.object, namespace, log))

    def _served(self, kind: str, namespace: str) -> bool:
        """Whether `kind`'s policies are to be read: False while its CRD is not installed (none can exist);
        raises PoliciesNotReadyError when its CRD is back but its policies were not listed within PENDING_WAIT."""
        availability = self.availability
        if availability is None:
            return True
        if not availability.wait_ready(kind, PENDING_WAIT):
            raise PoliciesNotReadyError(f"not ready: {CRD_NAMES[kind]} exists but its policies have not been "
                                        f"listed since it appeared")  # fmt: skip
        if availability.state(kind) == ABSENT:
            _absent.warning(f"admitted without {kind}s: {CRD_NAMES[kind]} is not installed", key=kind,
                            extra={"namespace": namespace})  # fmt: skip
            return False
        return True

    def _policy_set(self, namespace: str) -> PolicySet:
        """The namespace's policy set: as built while the cache's policy informers saw no change, else listed. A
        kind whose CRD is not installed contributes none, and a set built without it is never reused."""
        generation = None if self._changes is None else self._changes.count  # read before listing
        cluster_served = self._served(CLUSTER_KIND, namespace)
        namespaced_served = self._served(NAMESPACED_KIND, namespace)
        if not (cluster_served and namespaced_served):
            generation = None
        if generation is not None and (built := self._sets.current(namespace, generation)) is not None:
            return built
        cluster = self.reader.list(CLUSTER_POLICIES) if cluster_served else []
        namespaced = self.reader.list(NAMESPACED_POLICIES, namespace=namespace) if namespaced_served else []
        return self._sets.get(namespace, [*cluster, *namespaced], generation)

    def _policies(self, namespace: str) -> tuple[PolicySet, dict[str, str]]:
        policies = self._policy_set(namespace)
        labels: dict[str, str] = {}
        if policies.reads_namespace:  # only cluster policies read the namespace's labels
            try:
                labels = _labels_of(self.reader.get(NAMESPACE, namespace))
            except NotFoundError:
                labels = {}
        return policies, labels

    def _mutate(self, request: AdmissionRequest, about: _Request) -> AdmissionResponse:
        # A broad `except`: whatever made the read fail (cache not synced, a timeout, a bug), the failurePolicy
        # of the configuration decides — Ignore admits unchanged, Fail refuses.
        try:
            policies, namespace_labels = self._policies(about.namespace)
        except PoliciesNotReadyError as error:
            about.log.warning("the scheduling policies are not ready; the failurePolicy decides",
                              extra={"reason": str(error)})  # fmt: skip
            KUPID_REQUESTS.labels("error").inc()
            return errored(500, str(error))
        except Exception as error:  # see above
            about.log.warning("cannot read the scheduling policies", exc_info=True)
            KUPID_REQUESTS.labels("error").inc()
            return errored(500, f"cannot read the scheduling policies: {error}")
        labels, spec = pod_template(about.obj, about.target)
        selection = policies.select(namespace_labels, labels)
        for outcome in selection.errors:
            self._report(outcome, about, [compiled.policy for compiled in policies.invalid])
        if not selection.matched:
            KUPID_REQUESTS.labels("allowed").inc()
            return allowed(NO_POLICY)
        # Only the scheduling fields are merged and copied; the rest of the object is shared with the request's
        # (the patch is computed against it and skips what is shared), and the merge with the policy set's.
        result = policies.merge({k: spec[k] for k in SCHEDULING_FIELDS if k in spec}, selection)
        refusal = self._enforce(result.outcomes, selection.matched, about)
        if refusal is not None:
            return refusal
        for outcome in result.outcomes:
            self._report(outcome, about, selection.matched)
        # The policies merged into the pod: one skipped as contradictory gave it nothing, so it is not named.
        if any(outcome.result == CONFLICT for outcome in result.outcomes):
            refs = ",".join(outcome.ref for outcome in result.outcomes if outcome.result != CONFLICT)
        else:
            refs = policies.refs(selection)
        annotations = {POLICIES_ANNOTATION: refs} if about.target.is_pod and refs else None
        fields = result.spec if result.changed else {}
        assert request.object is not None  # checked by _handle
        mutated = sharing_pod_spec(request.object, about.target, fields, annotations)
        response = patched(request, mutated)
        if not response.patch:
            return allowed(UNCHANGED)
        KUPID_REQUESTS.labels("allowed").inc()
        KUPID_REQUESTS.labels("mutated").inc()
        about.log.info("Mutated request", extra=_changes(result.outcomes))
        return response

    def _enforce(
        self, outcomes: Sequence[PolicyOutcome], matched: Sequence[Mapping[str, Any]], about: _Request
    ) -> AdmissionResponse | None:
        """The denial for the first enforced policy that could not be applied whole, or None."""
        prefix = ".".join(about.target.spec_path)
        for outcome, policy in zip(outcomes, matched, strict=True):
            if is_enforced(policy) and denies(outcome):
                fields = "; ".join(f"{prefix}.{c.path}: {c.message}" for c in outcome.conflicts)
                message = f"{outcome.ref} is enforced and cannot be applied: {fields or outcome.message}"
                about.log.info("denied: an enforced scheduling policy cannot be applied", extra={"policy": outcome.ref})
                SCHEDULING_POLICY_APPLICATIONS.labels(outcome.ref, about.kind, DENIED).inc()
                KUPID_REQUESTS.labels("denied").inc()
                return denied(message)
        return None

    def _report(self, outcome: PolicyOutcome, about: _Request, policies: Sequence[Mapping[str, Any]]) -> None:
        SCHEDULING_POLICY_APPLICATIONS.labels(outcome.ref, about.kind, outcome.result).inc()
        if outcome.result not in (ERROR, CONFLICT):
            return
        # One line per policy and result a minute: a broken policy is seen on every request it could select.
        _skipped.warning(f"skipped scheduling policy: {outcome.result}", key=f"{outcome.ref}:{outcome.result}",
                         extra={"policy": outcome.ref, "reason": outcome.message, "kind": about.kind})  # fmt: skip
        policy = next((p for p in policies if _safe_ref(p) == outcome.ref), None)
        if self.recorder is None or policy is None:
            return
        if outcome.result == ERROR:
            reason, message = INVALID_POLICY_REASON, f"Policy is invalid and was skipped: {outcome.message}"
        else:
            name = (about.obj.get("metadata") or {}).get("name") or "(generated)"
            subject = f"{about.kind} {about.namespace}/{name}"
            reason, message = CONFLICT_REASON, f"Policy was not applied to {subject}: {outcome.message}"
        self.recorder.event(policy, WARNING, reason, message)


def _safe_ref(policy: Mapping[str, Any]) -> str:
    try:
        return policy_ref(policy)
    except ValueError:
        return ""


def _skip_reason(request: AdmissionRequest, target: Target) -> str:
    """Why this request is admitted untouched, or "" when the policies apply."""
    if request.operation not in ("CREATE", "UPDATE"):
        return ONLY_CREATE
    if request.operation == "UPDATE":
        if not target.on_update:
            return ONLY_CREATE
        if template_of(request.object, target) == template_of(request.old_object, target):
            return TEMPLATE_UNCHANGED
    obj = request.object or {}
    if target.is_pod and is_daemonset_pod(obj):
        return DAEMONSET_POD
    if target.is_pod and is_mirror_pod(obj):
        return MIRROR_POD
    return ""


def _changes(outcomes: Sequence[PolicyOutcome]) -> dict[str, Any]:
    """The mutation log's fields: what each policy added (also into an empty affinity), and what it did not get."""
    return {
        "added": {o.ref: list(o.changed) for o in outcomes if o.result == APPLIED},
        "not_applied": {o.ref: [str(c) for c in o.conflicts] for o in outcomes if o.conflicts},
    }


def register(
    server: WebhookServer,
    *,
    reader: Reader,
    recorder: EventRecorder | None = None,
    availability: SchedulingAvailability | None = None,
    left_alone: frozenset[str] = frozenset(),
    cache: Cache | None = None,
) -> None:
    """Serve `/mutate-kupid` on `server`; `reader` is the manager's cache-backed client (both policy kinds and
    Namespaces cached), `recorder` writes the Warning events on invalid and conflicting policies, `availability`
    says which kinds' CRDs are installed (None: both are assumed to be), `left_alone` the namespaces admitted
    untouched (`OperatorOptions.left_alone`, docs/design.md, difference 60), and `cache` the cache `reader` reads
    the policies from: its informers' events say when they changed, so an unchanged set is not listed again
    (without it, every request lists them)."""
    mutator = SchedulingMutator(reader, recorder=recorder, availability=availability, left_alone=left_alone,
                                 cache=cache)  # fmt: skip
    server.register(MUTATE_PATH, mutator)
