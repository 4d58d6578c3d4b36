"""The bulk enroller (`ballast enroll`): reads workloads, asks the plan (`ballast.internal.enroll`) what to do
with each, and does it. `ballast.internal.cmd.enroll` parses the flags and runs an `Enroller`.

Output is the enroll script's: a header, one record line per decision (`PLAN`, `OK`, `WARN`, `SKIP`, `FAIL`,
`NOTE`), then `Summary: N enrolled, N failed, N warning(s), N skipped.`; exit 2 when a workload failed. On a
terminal a progress bar (rich) runs below the records and disappears at the end; otherwise only the lines are
printed, so logs and pipes get the same text.

Every change is a JSON merge patch through the runtime client. Each in-place route keeps a recovery breadcrumb
while the workload is half-changed (paused, partition raised, strategy swapped): Ctrl-C prints it.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Mapping
from typing import IO, Any, Protocol

import orjson
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ballast.api.ballast.v1 import BallastConfig
from ballast.internal.enroll import (
    API_KINDS,
    KINDS,
    Converged,
    Identity,
    Options,
    Record,
    Route,
    Status,
    Step,
    Tally,
    Workload,
    counts_pods_updated,
    is_ignored,
    messages,
    newest_revision_hash,
    patches,
    plan_daemonset,
    plan_deployment,
    plan_statefulset,
    pods_missing_mode,
    rollout_status,
    running_pod_uids,
    scan,
)
from ballast.internal.enroll.report import converged_note, found_line, header, options_lines
from ballast.internal.enrollment import BALLAST_CONFIG_NAME
from ballast.runtime import APIStatusError, Clock, NotFoundError, RealClock
from ballast.runtime.client import APIServerClient
from ballast.runtime.restmapper import NoKindMatchError

API_FAILURES = (APIStatusError, OSError, NoKindMatchError)
"""What a call to the API server can raise: an error status, a connection or timeout error, an unserved kind."""
EXIT_INTERRUPTED = 130
POLL_SECONDS = 1.0


# ------------------------------------------------------------------------------------------------ output


class Reporter(Protocol):
    """Where records go: lines on stdout, warnings on stderr, and the progress of the workloads."""

    def line(self, text: str) -> None: ...

    def warn(self, text: str) -> None: ...

    def start(self, total: int) -> None: ...

    def working_on(self, subject: str) -> None: ...

    def advance(self) -> None: ...

    def close(self) -> None: ...


class PlainReporter:
    """Lines only: for pipes, files and CI logs (no control characters)."""

    def __init__(self, out: IO[str] | None = None, err: IO[str] | None = None) -> None:
        self._out = out
        self._err = err

    def line(self, text: str) -> None:
        print(text, file=self._out or sys.stdout, flush=True)

    def warn(self, text: str) -> None:
        print(f"WARNING: {text}", file=self._err or sys.stderr, flush=True)

    def start(self, total: int) -> None:
        """Nothing to draw."""

    def working_on(self, subject: str) -> None:
        """Nothing to draw."""

    def advance(self) -> None:
        """Nothing to draw."""

    def close(self) -> None:
        """Nothing to tear down."""


class ProgressReporter:
    """Records printed above a progress bar over the target workloads (rich; the bar is removed at the end).

    rich rather than tqdm: it ships type information (mypy --strict without stubs), prints lines above a live
    bar without tearing it, and knows when its stream is not a terminal.
    """

    def __init__(self, console: Console) -> None:
        self._console = console
        self._progress = Progress(
            TextColumn("[progress.description]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        )
        self._task: Any = None

    def line(self, text: str) -> None:
        # Record text holds brackets (`[source: …]`, `[mode=…]`): print it verbatim, never as rich markup.
        self._console.print(text, markup=False, highlight=False, soft_wrap=True)

    def warn(self, text: str) -> None:
        print(f"WARNING: {text}", file=sys.stderr, flush=True)  # the live display shows it above the bar

    def start(self, total: int) -> None:
        self._progress.start()
        self._task = self._progress.add_task("workloads", total=total)

    def working_on(self, subject: str) -> None:
        if self._task is not None:
            self._progress.update(self._task, description=subject)

    def advance(self) -> None:
        if self._task is not None:
            self._progress.advance(self._task)

    def close(self) -> None:
        self._progress.stop()


def make_reporter(out: IO[str] | None = None) -> Reporter:
    """A progress bar when `out` (default stdout) is an interactive terminal, plain lines otherwise."""
    console = Console(file=out or sys.stdout)
    if console.is_terminal and not console.is_dumb_terminal:
        return ProgressReporter(console)
    return PlainReporter(out)


# ------------------------------------------------------------------------------------------------ runner


class Enroller:
    """One `ballast enroll` run against a cluster.

    `apply=False` reads only. `settle` is the pause before checking that an in-place route restarted no pod;
    `clock` stamps the restart time and paces the waits; `poll` is the interval of rollout and controller waits.
    Raises `re.error` for an `ignore` pattern that does not compile.
    """

    def __init__(
        self,
        client: APIServerClient,
        identity: Identity,
        options: Options,
        *,
        apply: bool,
        namespace: str | None = None,
        ignore: str | None = None,
        settle: float = 8.0,
        reporter: Reporter | None = None,
        clock: Clock | None = None,
        poll: float = POLL_SECONDS,
    ) -> None:
        self.client = client
        self.identity = identity
        self.options = options
        self.apply = apply
        self.namespace = namespace or None
        self.ignore_text = ignore
        self.ignore = re.compile(ignore) if ignore else None
        self.settle = settle
        self.reporter = reporter or PlainReporter()
        self.clock = clock or RealClock()
        self.poll = poll
        self.records: list[Record] = []
        self.inflight = ""
        """Recovery instructions while a workload is half-changed (printed if the run is interrupted)."""
        self._converged = 0
        self._replica_sets: dict[str, list[Any]] = {}
        self._stamp = patches.restart_stamp(self.clock.now())

    # ------------------------------------------------------------------------------------- the run

    def run(self) -> Tally:
        """Scan, decide and act on every workload; returns the tally (its `exit_code()` is the CLI's)."""
        mode = self.options.mode
        say = self.reporter.line
        say(header(mode, apply=self.apply, namespace=self.namespace))
        say(self.identity.describe())
        for text in options_lines(
            mode, ignore=self.ignore_text, no_restart=self.options.no_restart, remode=self.options.remode
        ):
            say(text)
        say("")
        say("Scanning for qualifying workloads ...")
        listed = [
            Workload.from_object(obj) for kind in KINDS for obj in self.client.list_all(API_KINDS[kind], self.namespace)
        ]
        found = scan(listed, self.identity, self.options, self.ignore)
        say(found_line(*found.found))
        say("")
        for record in found.records:
            self.record(record)
        self.reporter.start(len(found.targets))
        try:
            for workload in found.targets:
                self.reporter.working_on(workload.subject)
                self.process(workload)
                self.reporter.advance()
        finally:
            self.reporter.close()
        if self._converged:
            self.record(converged_note(self._converged, mode))
        tally = Tally.of(self.records)
        say("")
        say(tally.summary())
        return tally

    def record(self, record: Record) -> None:
        """Keep `record` for the summary and print it at once (a silent apply run looks hung)."""
        self.records.append(record)
        self.reporter.line(record.line())

    def process(self, workload: Workload) -> None:
        """Decide for one target and carry the decision out (apply mode) or print the plan (dry-run)."""
        if is_ignored(workload, self.ignore):
            self.record(Record(Status.SKIP, workload.subject, messages.ignored(self.ignore_text or "")))
            return
        try:
            live = self._reread(workload)
            if live.kind == "deployment":
                decision = plan_deployment(
                    live, self._replica_sets_of(live.namespace), self._pods(live), self.identity, self.options
                )
            elif live.kind == "statefulset":
                decision = plan_statefulset(live, self.identity, self.options)
            else:
                decision = plan_daemonset(live, self.identity, self.options)
        except NotFoundError:  # deleted since the scan: nothing to enroll
            self.record(Record(Status.SKIP, workload.subject, "no longer exists"))
            return
        except API_FAILURES as exc:
            self.record(Record(Status.FAIL, workload.subject, f"could not read it: {exc}"))
            return
        if isinstance(decision, Record):
            self.record(decision)
        elif isinstance(decision, Converged):
            self._converged += 1
        elif not self.apply:
            self.record(decision.record())
        else:
            try:
                self._carry_out(decision)
            except API_FAILURES as exc:  # an unexpected read failure mid-route: this workload fails, the run goes on
                recovery = f"; {self.inflight}" if self.inflight else ""
                self._fail(workload, f"API error: {exc}{recovery}")

    def _carry_out(self, step: Step) -> None:
        workload = step.workload
        if workload.kind == "deployment":
            # Pods first: labeled, they are visible to the operator's label-scoped cache before anything
            # replaces them, so their finalizers can run.
            self._label_pods(workload)
        routes: dict[Route, Callable[[Step], None]] = {
            Route.RESTART: self._restart,
            Route.ADOPT: self._adopt,
            Route.PARTITION: self._partition,
            Route.ON_DELETE_SWAP: self._swap,
            Route.ON_DELETE: self._on_delete,
            Route.PODS_ONLY: self._pods_only,
        }
        routes[step.route](step)

    # ------------------------------------------------------------------------------------- reading

    def _reread(self, workload: Workload) -> Workload:
        """The live object in apply mode (paused and settled checks must be fresh); the scanned one otherwise."""
        if not self.apply:
            return workload
        return Workload.from_object(self.client.get(API_KINDS[workload.kind], workload.name, workload.namespace))

    def _replica_sets_of(self, namespace: str) -> list[Any]:
        if not self.apply and namespace in self._replica_sets:
            return self._replica_sets[namespace]  # a dry-run reads each namespace once
        replica_sets = list(self.client.list_all("apps/v1/ReplicaSet", namespace))
        self._replica_sets[namespace] = replica_sets
        return replica_sets

    def _pods(self, workload: Workload) -> list[Any]:
        """The pods the workload's selector matches, in every phase (none when its selector is unusable)."""
        if not workload.selector:
            return []
        return list(self.client.list_all("v1/Pod", workload.namespace, label_selector=workload.selector))

    def _running(self, workload: Workload) -> frozenset[str]:
        return running_pod_uids(self._pods(workload))

    # ------------------------------------------------------------------------------------- writing

    def _patch(self, kind: str, name: str, namespace: str, body: Mapping[str, Any]) -> Any:
        return self.client.patch(kind, body, name=name, namespace=namespace)

    def _patch_workload(self, workload: Workload, body: Mapping[str, Any]) -> Any:
        return self._patch(API_KINDS[workload.kind], workload.name, workload.namespace, body)

    def _label_pods(self, workload: Workload) -> None:
        """Give every pod of the workload the mode label (pods already at it are left alone). Labeling is pure
        metadata — the label is in no selector — so nothing restarts. Failures are warned about, not fatal."""
        mode = self.options.mode
        if not workload.selector:
            self.record(Record(Status.WARN, workload.subject, messages.no_selector()))
            return
        try:
            missing = pods_missing_mode(self._pods(workload), mode)
        except API_FAILURES:
            self.reporter.warn(messages.pods_unlabeled(workload.subject, 0, mode))
            return
        failed = 0
        for name in missing:
            try:
                self._patch("v1/Pod", name, workload.namespace, patches.pod_mode_patch(mode))
            except API_FAILURES:
                failed += 1
        if failed:
            self.reporter.warn(messages.pods_unlabeled(workload.subject, failed, mode))

    def _relabel_revision(self, workload: Workload, revision: str) -> None:
        """Relabel every pod of the workload to controller revision `revision`; raises on the first failure."""
        for pod in self._pods(workload):
            self._patch(
                "v1/Pod", str(pod["metadata"]["name"]), workload.namespace, patches.revision_hash_patch(revision)
            )

    def _wait(self, condition: Callable[[], bool], timeout: float) -> bool:
        """Poll `condition` until it holds (True) or `timeout` seconds pass (False); API errors count as "not yet"."""
        deadline = self.clock.monotonic() + timeout
        while True:
            try:
                if condition():
                    return True
            except API_FAILURES:
                pass
            if self.clock.monotonic() >= deadline:
                return False
            self.clock.sleep(self.poll)

    def _caught_up(self, workload: Workload, revision: str = "") -> bool:
        """Wait until the workload's controller counts every pod as updated (`counts_pods_updated`): only then
        has it seen the writes an in-place route made, so the resume or restore that follows rolls nothing."""
        return self._wait(lambda: counts_pods_updated(self._reread_live(workload), revision), self.options.timeout)

    def _restore_once_counted(
        self, workload: Workload, revision: str, restore: Mapping[str, Any], uncounted: str, restore_failed: str
    ) -> bool:
        """Put back the partition or update strategy of a workload whose pods were relabeled to `revision`, once
        its controller counts them as updated; FAIL with `uncounted` (nothing restored, so nothing restarts) when it
        does not within the timeout, with `restore_failed` when the write fails. Whether it was restored."""
        if not self._caught_up(workload, revision):
            self._fail(workload, uncounted)
            return False
        try:
            self._patch_workload(workload, restore)
        except API_FAILURES:
            self._fail(workload, restore_failed)
            return False
        return True

    def _verify(self, workload: Workload, before: frozenset[str], done: str) -> None:
        """After `settle` seconds, OK when the running-pod set is the one from before the change, WARN otherwise."""
        self.clock.sleep(self.settle)
        try:
            after = self._running(workload)
        except API_FAILURES:
            after = frozenset()
        if after == before:
            self.record(Record(Status.OK, workload.subject, messages.verified(done)))
        else:
            self.record(Record(Status.WARN, workload.subject, messages.pod_set_changed(done)))

    def _fail(self, workload: Workload, detail: str) -> None:
        self.inflight = ""
        self.record(Record(Status.FAIL, workload.subject, detail))

    # -------------------------------------------------------------------------------------- routes

    def _restart(self, step: Step) -> None:
        """Label the template with a restart stamp: one rolling update enrolls every pod; wait on the rollout."""
        workload, timeout = step.workload, self.options.timeout
        try:
            self._patch_workload(workload, patches.template_patch(self.options.mode, self._stamp))
        except API_FAILURES:
            self._fail(workload, messages.PATCH_TEMPLATE_FAILED)
            return
        failed = False

        def complete() -> bool:
            nonlocal failed
            status = rollout_status(self._reread_live(workload))
            failed = status.failed
            return status.done or status.failed

        if self._wait(complete, timeout) and not failed:
            self.record(Record(Status.OK, workload.subject, messages.restarted(step.action)))
            return
        detail = messages.rollout_timed_out(step.action, timeout, workload.kind, workload.namespace, workload.name)
        self.record(Record(Status.WARN, workload.subject, detail))

    def _adopt(self, step: Step) -> None:
        """Deployment without a restart: while it is paused, label its current ReplicaSet's template and its own,
        so on resume the controller re-adopts the ReplicaSet (same template) instead of rolling out."""
        workload, mode = step.workload, self.options.mode
        ns, name, rs = workload.namespace, workload.name, step.replica_set
        deployment = API_KINDS["deployment"]
        before = self._running(workload)
        self.inflight = messages.inflight_paused(workload.subject, ns, name)
        try:
            self._patch_workload(workload, patches.paused_patch(True))
        except API_FAILURES:
            self._fail(workload, messages.PAUSE_FAILED)
            return
        try:
            self._patch("apps/v1/ReplicaSet", rs, ns, patches.template_patch(mode))
        except API_FAILURES:
            self._try(lambda: self._patch(deployment, name, ns, patches.paused_patch(False)))
            self._fail(workload, messages.replica_set_patch_failed(rs))
            return
        self.inflight = messages.inflight_replica_set_patched(workload.subject, ns, name, rs)
        try:
            self._patch_workload(workload, patches.template_patch(mode))
        except API_FAILURES:
            # A template mismatch on resume would start the very rollout this route avoids: revert first.
            if not self._try(
                lambda: self._patch("apps/v1/ReplicaSet", rs, ns, patches.template_mode_revert(step.replica_set_mode))
            ):
                self.reporter.warn(messages.revert_failed_warning(workload.subject, rs))
                self._fail(workload, messages.REVERT_FAILED)
                return
            self._try(lambda: self._patch(deployment, name, ns, patches.paused_patch(False)))
            self._fail(workload, messages.DEPLOYMENT_PATCH_FAILED)
            return
        self.inflight = messages.inflight_patched_paused(workload.subject, ns, name)
        # Resumed before its controller has the patched ReplicaSet in its cache, the Deployment would find no
        # ReplicaSet with its template and roll out a new one: resume once its status counts the pods as updated.
        if not self._caught_up(workload):
            self._fail(workload, messages.replica_set_unmatched(ns, name, rs, self.options.timeout))
            return
        try:
            self._patch_workload(workload, patches.paused_patch(False))
        except API_FAILURES:
            self._fail(workload, messages.resume_failed(ns, name))
            return
        self.inflight = ""
        self._verify(workload, before, messages.adopted(step.action, rs))

    def _partition(self, step: Step) -> None:
        """StatefulSet without a restart: with the partition above every ordinal, change the template, relabel the
        pods to the new revision (so they count as updated), then restore the partition."""
        workload, mode = step.workload, self.options.mode
        ns, name, replicas, partition = workload.namespace, workload.name, workload.replicas, workload.partition
        restore = patches.partition_patch(partition)
        restore_text = _compact(restore)
        before = self._running(workload)
        self.inflight = messages.inflight_partition(workload.subject, replicas, ns, name, restore_text)
        try:
            self._patch_workload(workload, patches.partition_patch(replicas))
        except API_FAILURES:
            self._fail(workload, messages.PARTITION_RAISE_FAILED)
            return
        try:
            self._patch_workload(workload, patches.template_patch(mode))
        except API_FAILURES:
            self._try(lambda: self._patch_workload(workload, restore))
            self._fail(workload, messages.PARTITION_PATCH_FAILED)
            return
        old_revision = str(workload.status.get("updateRevision") or "")
        latest: list[Workload] = []

        def new_revision() -> bool:
            current = self._reread_live(workload)
            latest[:] = [current]
            return current.observed and str(current.status.get("updateRevision") or "") != old_revision

        if not self._wait(new_revision, self.options.timeout):
            self._fail(workload, messages.revision_timeout(replicas))
            return
        revision = str(latest[0].status.get("updateRevision") or "")
        try:
            self._relabel_revision(workload, revision)
        except API_FAILURES:
            self._fail(workload, messages.partition_relabel_failed(replicas, revision, partition))
            return
        # With the partition restored before the controller's pod cache has the relabels, it would replace the
        # pods it still sees at the old revision (the highest ordinal first).
        uncounted = messages.partition_uncounted(replicas, revision, self.options.timeout, ns, name, restore_text)
        if not self._restore_once_counted(
            workload, revision, restore, uncounted, messages.partition_restore_failed(ns, name, restore_text)
        ):
            return
        self.inflight = ""
        self._label_pods(workload)
        self._verify(workload, before, messages.partition_done(step.action, revision))

    def _swap(self, step: Step) -> None:
        """DaemonSet without a restart: switched to OnDelete, change the template, relabel the pods to the new
        revision hash, then restore the update strategy."""
        workload, mode = step.workload, self.options.mode
        ns, name = workload.namespace, workload.name
        restore = patches.strategy_restore_patch(workload.update_strategy)
        restore_text = _compact(restore)
        before = self._running(workload)
        self.inflight = messages.inflight_swap(workload.subject, ns, name, restore_text)
        try:
            self._patch_workload(workload, patches.on_delete_patch())
        except API_FAILURES:
            self._fail(workload, messages.SWAP_FAILED)
            return
        try:
            self._patch_workload(workload, patches.template_patch(mode))
        except API_FAILURES:
            self._try(lambda: self._patch_workload(workload, restore))
            self._fail(workload, messages.SWAP_PATCH_FAILED)
            return
        if not self._wait(lambda: self._reread_live(workload).observed, self.options.timeout):
            self._fail(workload, messages.GENERATION_TIMEOUT)
            return
        try:
            revisions = self.client.list_all("apps/v1/ControllerRevision", ns)
            revision_hash = newest_revision_hash(revisions, workload.uid)
        except API_FAILURES:
            revision_hash = ""
        if not revision_hash:
            self._fail(workload, messages.NO_REVISION_HASH)
            return
        try:
            self._relabel_revision(workload, revision_hash)
        except API_FAILURES:
            self._fail(workload, messages.swap_relabel_failed(revision_hash, restore_text))
            return
        # With the rolling strategy restored before the controller's pod cache has the relabels, it would replace
        # the pods it still sees with the old hash.
        uncounted = messages.swap_uncounted(revision_hash, self.options.timeout, ns, name, restore_text)
        if not self._restore_once_counted(
            workload, "", restore, uncounted, messages.strategy_restore_failed(ns, name, restore_text)
        ):
            return
        self.inflight = ""
        self._label_pods(workload)
        self._verify(workload, before, messages.swap_done(step.action, revision_hash))

    def _on_delete(self, step: Step) -> None:
        """OnDelete workload: a template change replaces no pod, so label the template and the live pods."""
        workload = step.workload
        try:
            self._patch_workload(workload, patches.template_patch(self.options.mode))
        except API_FAILURES:
            self._fail(workload, messages.PATCH_TEMPLATE_FAILED)
            return
        self._label_pods(workload)
        self.record(Record(Status.OK, workload.subject, messages.on_delete_enrolled(step.action)))

    def _pods_only(self, step: Step) -> None:
        """Templates already at the mode: the pods were labeled first; nothing restarts, nothing to verify."""
        detail = messages.repaired(step.action, step.unlabeled_pods, self.options.mode)
        self.record(Record(Status.OK, step.workload.subject, detail))

    # ------------------------------------------------------------------------------------- helpers

    def _reread_live(self, workload: Workload) -> Workload:
        return Workload.from_object(self.client.get(API_KINDS[workload.kind], workload.name, workload.namespace))

    @staticmethod
    def _try(action: Callable[[], object]) -> bool:
        """Run a best-effort rollback; whether it worked."""
        try:
            action()
        except API_FAILURES:
            return False
        return True


def _compact(patch: Mapping[str, Any]) -> str:
    """A patch as one line of JSON, to paste into `kubectl patch --type merge -p '…'`."""
    return orjson.dumps(patch).decode()


def configured_identity_labels(client: APIServerClient) -> list[str] | None:
    """The live BallastConfig `ballast`'s identityLabels; None when it cannot be read (absent, no CRD, no access)."""
    try:
        config = client.get(BallastConfig, BALLAST_CONFIG_NAME)
    except (*API_FAILURES, ValueError):  # ValueError: an object the model rejects, which the operator ignores too
        return None
    return list(config.spec.identity_labels)
