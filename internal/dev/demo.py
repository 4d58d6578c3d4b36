"""`make dev`: the operator running for real on a local control plane, shown as it works.

In order:

1. **control plane** — etcd + kube-apiserver from the cached envtest binaries, on loopback (your shell reaches it);
2. **preset** — the CRDs (rendered from the API models) and the `local-testing` preset objects from
   `config/samples/local-testing/`, validated by the models, as they are: no speed-ups;
3. **metrics** — a synthetic metrics.k8s.io backend (`metrics`, `usage`) behind a real APIService, so the
   operator reads usage through the aggregation layer as it reads metrics-server in a cluster;
4. **ballastd** — the operator as a child process (SQLite store, webhook on loopback with a certificate from the
   control plane's CA, the webhook configurations installed), ready when a dry-run pod CREATE comes back mutated;
5. **workloads** — the demo pods in three namespaces (`scenario`), marked Running through the status
   subresource, since this mode has no kubelet;
6. **profiles** — the WorkloadProfiles accrue samples every poll until they are Sufficient;
7. **cold start** — a known app in a namespace that never ran it is admitted with the recommended requests;
8. **resize** — a `resize` pod is stepped toward its recommendation in place.

Then `kubectl get workloadprofiles`, the demo pods' requests and limits and the commands to look further, and
the demo keeps running until Ctrl-C (or `--exit-after`), which stops ballastd, the backend and the control plane
and removes their directory. The operator namespace is `ballast-system`. Memory reads with binary suffixes
throughout (`progress.shown`); the objects keep the exact values.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import json
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal, TextIO, TypeVar

import urllib3

from ballast.api.ballast.v1 import MetricsSource
from ballast.internal.enrollment import KILL_SWITCH_CONFIGMAP, invalid_mode_message
from ballast.internal.manifests.ballast_crds import all_crds
from ballast.internal.manifests.webhooks import webhook_configurations
from ballast.internal.quantity import parse_quantity
from ballast.internal.resize import exceeds_drift
from ballast.runtime import rfc3339
from ballast.runtime.envtest import Backend, Environment, EnvtestError
from ballast.runtime.envtest.errors import APIError
from ballast.runtime.envtest.rest import RESTClient

from .metrics import PodMetricsSource, metrics_handler, rest_pod_lister
from .operator import DevOperator
from .preset import LOCAL_TESTING, SAMPLES_DIR, Preset, load_preset, object_path
from .progress import (
    NONE,
    Frame,
    ProfileRow,
    ResizeTrail,
    Step,
    StepState,
    View,
    choose_view,
    command_lines,
    history,
    pod_table,
    profile_row,
    resize_step,
    shown,
)
from .scenario import (
    CHECKOUT,
    COLD_START_POD,
    DEMO_LABEL,
    NAMESPACES,
    OPERATOR_NAMESPACE,
    RESIZE_POD,
    WORKLOADS,
    DemoPod,
    actuated_status,
    namespace_manifest,
    running_status,
)
from .usage import SyntheticUsage, Timeline

ExitAfter = Literal["cold-start", "resized", "never"]
T = TypeVar("T")

PROFILES_PATH = "/apis/ballast.tightlinesoftware.com/v1/workloadprofiles"
METRICS_SERVICE = "ballast-dev-metrics"
POLL_SECONDS = 0.5
COLD_START_ATTEMPTS = 3
MAX_POLL_FAILURES = 20
STEPS = ("control plane", "preset", "metrics", "ballastd", "workloads", "profiles", "cold start", "resize")


class DemoError(Exception):
    """The demo could not go on; the message says what it waited for and what it saw."""


@dataclass(frozen=True, slots=True)
class DemoOptions:
    """How the demo runs. `interactive`: a live view on a terminal (plain lines otherwise); `exit_after`: stop
    after the cold-start admission, after the resize converged, or never (until Ctrl-C); `report_path`: a JSON
    record of the run (pids, directories, the cold-start pod and profile) for tests and benchmarks."""

    interactive: bool = True
    exit_after: ExitAfter = "never"
    kubernetes_version: str | None = None
    seed: int = 7
    timeline: Timeline = field(default_factory=Timeline)
    report_path: Path | None = None
    preset_dir: Path = SAMPLES_DIR / LOCAL_TESTING
    sufficient_timeout: float = 300.0
    resize_timeout: float = 600.0


def recommendations_of(profile: Mapping[str, Any], container: str) -> dict[str, dict[str, str]]:
    """{resource: {request|limit: quantity}} of `container` in a WorkloadProfile's status ({} when none)."""
    for entry in (profile.get("status") or {}).get("containers") or ():
        if entry.get("name") == container:
            return {res: dict(values) for res, values in (entry.get("recommendations") or {}).items()}
    return {}


def admitted_as_recommended(pod: Mapping[str, Any], recommendations: Mapping[str, Mapping[str, str]]) -> bool:
    """Whether the pod's first container carries every recommended value (compared as quantities)."""
    if not recommendations:
        return False
    resources = pod["spec"]["containers"][0].get("resources") or {}
    for resource, fields in recommendations.items():
        for name, value in fields.items():
            actual = (resources.get(f"{name}s") or {}).get(resource)
            if actual is None or parse_quantity(actual) != parse_quantity(value):
                return False
    return True


def ballast_command() -> str:
    """The `ballast` CLI next to this interpreter (`.venv/bin/ballast` from the repository), else plain `ballast`."""
    beside = Path(sys.executable).with_name("ballast")
    if not beside.exists():
        return "ballast"
    with contextlib.suppress(ValueError):
        relative = beside.relative_to(Path.cwd())
        if len(relative.parts) > 1:  # a bare "ballast" would be looked up on PATH instead
            return str(relative)
    return str(beside)


def describe_objects(preset: Preset) -> str:
    """`BallastConfig ballast, MetricsSource kubernetes-metrics + kubelet-summary, …`: names grouped by kind."""
    names: dict[str, list[str]] = {}
    for obj in preset.objects:
        names.setdefault(obj.KIND, []).append(obj.metadata.name or "")
    return ", ".join(f"{kind} {' + '.join(found)}" for kind, found in names.items())


def describe_resources(pod: Mapping[str, Any]) -> str:
    """`cpu 287m, memory 246.56Mi (limit 1Gi)`: the first container's requests, then its limits in brackets
    (memory with binary suffixes, as the view shows every quantity)."""
    resources = pod["spec"]["containers"][0].get("resources") or {}
    requests = ", ".join(
        f"{name} {shown(str(value), name)}" for name, value in (resources.get("requests") or {}).items()
    )
    limits = ", ".join(f"{name} {shown(str(value), name)}" for name, value in (resources.get("limits") or {}).items())
    return f"{requests} (limit {limits})" if limits else requests


def _rfc3339_now() -> str:
    return rfc3339(datetime.datetime.now(datetime.UTC))


class Demo:
    """One run of the demo; `run()` returns the process exit code (0, or 1 after a failure it explained)."""

    def __init__(self, options: DemoOptions, out: TextIO = sys.stdout) -> None:
        self.options = options
        self.out = out
        self.view: View = choose_view(out, interactive=options.interactive)
        self.started = time.monotonic()
        self.steps = {title: Step(title) for title in STEPS}
        self.preset: Preset | None = None
        self.env: Environment | None = None
        self.backend: Backend | None = None
        self.operator: DevOperator | None = None
        self.profiles: tuple[ProfileRow, ...] = ()
        self.profile_objects: dict[str, dict[str, Any]] = {}
        self.trail = ResizeTrail(RESIZE_POD.key)
        self.min_samples = 0
        self.min_time_span = ""
        self.threshold = Decimal(10)
        self.notes: tuple[str, ...] = ()
        self.following = False
        self.poll_failures = 0
        self.report: dict[str, Any] = {"started_at": time.time(), "steps": {}}

    # --------------------------------------------------------------------------------------------- helpers

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    @property
    def rest(self) -> RESTClient:
        if self.env is None:
            raise DemoError("the control plane is not running")
        return self.env.rest

    def _set(self, title: str, state: StepState, detail: str = "") -> None:
        self.steps[title] = Step(title, state, detail)
        self.report["steps"][title] = {"state": state, "detail": detail, "at": round(self.elapsed(), 2)}
        self._show()

    def _frame(self) -> Frame:
        # After the summary only the resize step is still moving; the others stay printed above.
        steps = (self.steps["resize"],) if self.following else tuple(self.steps.values())
        return Frame(
            elapsed=self.elapsed(),
            steps=steps,
            profiles=self.profiles,
            min_samples=self.min_samples,
            min_time_span=self.min_time_span,
            resize=self.trail if self.steps["workloads"].state == "done" else None,
            notes=self.notes,
        )

    def _show(self) -> None:
        self.view.show(self._frame())

    @contextlib.contextmanager
    def _step(self, title: str, running: str) -> Iterator[None]:
        self._set(title, "running", running)
        try:
            yield
        except BaseException as exc:
            if not isinstance(exc, KeyboardInterrupt):
                self._set(title, "failed", str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
            raise

    def _poll(self) -> None:
        """Refresh profiles and the resize trail from the API server; fail if ballastd has exited, or if the API
        server stays unreachable for MAX_POLL_FAILURES polls in a row (one failed read only skips a redraw)."""
        if self.operator is not None and (code := self.operator.exit_code()) is not None:
            raise DemoError(f"ballastd exited with code {code}; its last output:\n{self.operator.output_tail()}")
        try:
            self._refresh()
        except (APIError, urllib3.exceptions.HTTPError) as exc:
            self.poll_failures += 1
            if self.poll_failures >= MAX_POLL_FAILURES:
                raise DemoError(f"the API server did not answer {self.poll_failures} reads in a row: {exc}") from exc
            return
        self.poll_failures = 0
        self._show()

    def _refresh(self) -> None:
        items = self.rest.get(PROFILES_PATH).get("items", [])
        self.profile_objects = {item["metadata"]["name"]: item for item in items}
        self.profiles = tuple(profile_row(item) for item in sorted(items, key=lambda i: i["metadata"]["name"]))
        if self.steps["workloads"].state == "done":
            self._follow_resize_pod()
        if self.following:
            self._update_resize_step()

    def _update_resize_step(self) -> None:
        """The resize step says what the trail says now (converged, or stepping again after the recommendation
        moved), never what it said when it first converged."""
        state, detail = resize_step(self.trail, CHECKOUT.profile_name())
        if self.steps["resize"] != Step("resize", state, detail):
            self._set("resize", state, detail)

    def _follow_resize_pod(self) -> None:
        try:
            pod = self.rest.get(f"/api/v1/namespaces/{RESIZE_POD.namespace}/pods/{RESIZE_POD.name}")
        except APIError:
            return
        # No kubelet here: play its part and report the resized resources as applied.
        if (actuated := actuated_status(pod)) is not None:
            self.rest.patch_status(f"/api/v1/namespaces/{RESIZE_POD.namespace}/pods/{RESIZE_POD.name}", actuated)
        requests = pod["spec"]["containers"][0].get("resources", {}).get("requests", {})
        cpu, memory = str(requests.get("cpu", "")), str(requests.get("memory", ""))
        recommendations = recommendations_of(self.profile_objects.get(CHECKOUT.profile_name(), {}), "api")
        target_cpu = recommendations.get("cpu", {}).get("request", NONE)
        target_memory = recommendations.get("memory", {}).get("request", NONE)
        converged = (
            NONE not in (target_cpu, target_memory)
            and not exceeds_drift(cpu, target_cpu, self.threshold)
            and not exceeds_drift(memory, target_memory, self.threshold)
        )
        self.trail = dataclasses.replace(
            self.trail.seen(cpu, memory), target_cpu=target_cpu, target_memory=target_memory, converged=converged
        )

    def _wait(self, what: str, condition: Callable[[], T | None], timeout: float | None) -> T:
        """Poll and redraw every POLL_SECONDS until `condition()` is truthy; DemoError after `timeout` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            self._poll()
            result = condition()
            if result:
                return result
            if deadline is not None and time.monotonic() > deadline:
                tail = self.operator.output_tail() if self.operator else ""
                raise DemoError(f"timed out after {timeout:g}s waiting for {what}; ballastd's last output:\n{tail}")
            time.sleep(POLL_SECONDS)

    def _write_report(self) -> None:
        if self.options.report_path is None:
            return
        self.report["steps"] = dict(self.report["steps"])
        temporary = self.options.report_path.with_suffix(".tmp")
        temporary.write_text(json.dumps(self.report, indent=2, default=str))
        temporary.replace(self.options.report_path)

    # ------------------------------------------------------------------------------------------------ run

    def run(self) -> int:
        """The whole demo; returns the exit code. Teardown always runs, also on Ctrl-C and SIGTERM."""
        try:
            self._start_control_plane()
            self._install_preset()
            self._serve_metrics()
            self._start_operator()
            self._create_workloads()
            self._wait_sufficient()
            self._cold_start()
            self._print_tables()
            if self.options.exit_after == "cold-start":
                return 0
            self._print_commands()
            self._follow()
        except KeyboardInterrupt:
            return 0
        except (DemoError, EnvtestError, APIError) as exc:
            self.view.say(f"\nmake dev failed: {exc}")
            self.report["error"] = str(exc)
            return 1
        finally:
            self._teardown()
        return 0

    def _start_control_plane(self) -> None:
        with self._step("control plane", "starting etcd + kube-apiserver on 127.0.0.1"):
            self.env = Environment(kubernetes_version=self.options.kubernetes_version, network_mode="loopback")
            self.env.start()
            self.report |= {
                "work_dir": str(self.env.work_dir),
                "kubeconfig": str(self.env.kubeconfig_path),
                "kubectl": str(self.env.assets.binary("kubectl")),
                "pids": {p.name: p.pid for p in self.env.processes},
            }
            self._write_report()
            version = self.rest.get("/version").get("gitVersion", "?")
        self._set(
            "control plane",
            "done",
            f"kube-apiserver {version} at {self.env.server} (+ etcd) in {self.env.started_seconds:.1f}s",
        )

    def _install_preset(self) -> None:
        with self._step("preset", "installing the CRDs and the local-testing preset"):
            preset = self.preset = load_preset(self.options.preset_dir)
            crds = self.control_plane.install_crds(all_crds())
            with contextlib.suppress(APIError):
                self.rest.create("/api/v1/namespaces", namespace_manifest(OPERATOR_NAMESPACE))
            for obj in preset.objects:
                self.rest.apply(object_path(obj), obj.to_wire(), field_manager="ballast-dev")
            policy = preset.policy().spec.with_defaults()
            readiness, behaviors = policy.readiness, policy.behaviors
            if readiness is None or behaviors is None:  # with_defaults() fills both
                raise DemoError(f"preset {preset.name}: the default policy has no readiness or behaviors")
            self.min_samples = int(readiness.min_data_points or 0)
            self.min_time_span = readiness.min_time_span or ""
            threshold = behaviors.thresholds.default if behaviors.thresholds else None
            self.threshold = Decimal((threshold or "10%").rstrip("%"))
            polls = sorted({s.spec.config.poll_interval for s in preset.of_kind(MetricsSource)})
            interval = behaviors.resize.interval if behaviors.resize else "?"
            day = self.options.timeline.day_seconds / 60
            self.notes = (
                f"preset {preset.name} as written in config/samples/{preset.name}, no speed-ups: samples every "
                f"{'/'.join(polls)},",
                f"  Sufficient at {self.min_samples} samples over {readiness.min_time_span}, resize every {interval}",
                f"usage is synthetic: a day-shaped curve compressed into {day:g} min, plus noise "
                f"(seed {self.options.seed})",
                "no kubelet in this mode: the demo marks its pods Running and reports resizes as applied",
            )
        self._set(
            "preset",
            "done",
            f"{len(crds)} CRDs; {preset.name}: {describe_objects(preset)}",
        )

    @property
    def control_plane(self) -> Environment:
        """The running Environment (DemoError before it started)."""
        if self.env is None:
            raise DemoError("the control plane is not running")
        return self.env

    def _serve_metrics(self) -> None:
        env = self.control_plane
        with self._step("metrics", "serving metrics.k8s.io/v1beta1 and waiting for its APIService"):
            admin = env.admin
            lister_client = RESTClient(
                env.server, str(admin.ca_file), cert_file=str(admin.cert_file), key_file=str(admin.key_file)
            )
            usage = SyntheticUsage(seed=self.options.seed, timeline=self.options.timeline)
            source = PodMetricsSource(rest_pod_lister(lister_client), usage, elapsed=self.elapsed)
            self.backend = env.serve_api_service(
                "metrics.k8s.io", "v1beta1", metrics_handler(source), service=METRICS_SERVICE
            )
        self._set(
            "metrics",
            "done",
            f"v1beta1.metrics.k8s.io Available (APIService → ExternalName Service kube-system/{METRICS_SERVICE} "
            f"→ {self.backend.url})",
        )

    def _start_operator(self) -> None:
        env = self.control_plane
        with self._step("ballastd", "starting the operator and waiting for /readyz"):
            self.operator = DevOperator(env, env.work_dir / "ballastd")
            self.operator.start()
            self.report["pids"]["ballastd"] = self.operator.pid
            self._write_report()
            self._set("ballastd", "running", "installing the webhook configurations and waiting for admission")
            configs = webhook_configurations(service_name="ballast-webhook", service_namespace=OPERATOR_NAMESPACE)
            env.install_webhooks(configs, port=self.operator.webhook_port, ca_bundle=env.ca.cert_pem)
            # A dry-run CREATE with an invalid mode is refused by the webhook, and only by it: once that
            # happens, the API server routes admission to ballastd. Nothing is stored.
            probe = DemoPod("default", "webhook-probe", CHECKOUT, "Apply").manifest()

            def admitting() -> bool:
                try:
                    self.rest.request("POST", "/api/v1/namespaces/default/pods", probe, params={"dryRun": "All"})
                except APIError as exc:
                    return invalid_mode_message("Apply") in exc.message
                return False

            self._wait("the pod webhook to refuse an invalid mode (a dry-run CREATE)", admitting, timeout=60)
        self._set(
            "ballastd",
            "done",
            f"pid {self.operator.pid}, namespace {OPERATOR_NAMESPACE}, "
            f"webhook https://127.0.0.1:{self.operator.webhook_port}, store {self.operator.store_url}",
        )

    def _create_workloads(self) -> None:
        with self._step("workloads", "creating namespaces and pods"):
            for namespace in NAMESPACES:
                with contextlib.suppress(APIError):
                    self.rest.create("/api/v1/namespaces", namespace_manifest(namespace))
            for pod in WORKLOADS:
                self._create_running(pod)
        modes = {mode: sum(p.mode == mode for p in WORKLOADS) for mode in ("measure", "apply", "resize")}
        self._set(
            "workloads",
            "done",
            f"{len(WORKLOADS)} pods in {', '.join(NAMESPACES)} ("
            + ", ".join(f"{count} {mode}" for mode, count in modes.items())
            + ")",
        )

    def _create_running(self, pod: DemoPod) -> dict[str, Any]:
        path = f"/api/v1/namespaces/{pod.namespace}/pods"
        created = self.rest.create(path, pod.manifest())
        self.rest.patch_status(f"{path}/{pod.name}", running_status(created, _rfc3339_now()))
        return created

    def _wait_sufficient(self) -> None:
        names = sorted({p.app.profile_name() for p in WORKLOADS})
        self._set(
            "profiles",
            "running",
            f"accruing: {len(names)} profiles shared across namespaces, waiting for Sufficient",
        )

        def sufficient() -> bool:
            rows = {row.name: row for row in self.profiles}
            return all(name in rows and rows[name].state == "Sufficient" for name in names)

        self._wait(f"profiles {', '.join(names)} to be Sufficient", sufficient, self.options.sufficient_timeout)
        self._set("profiles", "done", f"{len(names)} Sufficient after {self.elapsed():.0f}s")

    def _cold_start(self) -> None:
        pod = COLD_START_POD
        asked = pod.app.requests
        asking = f"cpu {asked['cpu']}, memory {asked['memory']} (limit {pod.app.limits['memory']})"
        with self._step("cold start", f"a new namespace {pod.namespace}: creating {pod.name}, asking {asking}"):
            with contextlib.suppress(APIError):
                self.rest.create("/api/v1/namespaces", namespace_manifest(pod.namespace))
            profile_name = pod.app.profile_name()
            for attempt in range(1, COLD_START_ATTEMPTS + 1):
                before = self.rest.get(f"{PROFILES_PATH}/{profile_name}")
                created = self._create_running(pod)
                admitted_at = time.time()
                after = self.rest.get(f"{PROFILES_PATH}/{profile_name}")
                recommendations = recommendations_of(before, "api")
                steady = recommendations == recommendations_of(after, "api")
                matches = steady and admitted_as_recommended(created, recommendations)
                self.report["cold_start"] = {
                    "attempt": attempt,
                    "admitted_at": admitted_at,
                    "elapsed": admitted_at - self.report["started_at"],
                    "pod": created,
                    "profile": before,
                    "recommendations": recommendations,
                    "matches": matches,
                }
                self._write_report()
                if matches:
                    break
                if steady:
                    raise DemoError(
                        f"{pod.key} was admitted with {created['spec']['containers'][0].get('resources')}, "
                        f"not the recommendation of {profile_name}: {recommendations}"
                    )
                # A collection cycle changed the recommendation while the pod was admitted: after the next one.
                self.rest.delete(f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}")
                self._wait_next_cycle(profile_name)
            else:
                raise DemoError(f"the recommendation of {profile_name} kept moving during {pod.key}'s admission")
        self._set(
            "cold start",
            "done",
            f"{pod.key} admitted with {describe_resources(created)}; its manifest asked {asking}",
        )

    def _samples(self, profile_name: str) -> int:
        return next((row.samples for row in self.profiles if row.name == profile_name), 0)

    def _wait_next_cycle(self, profile_name: str) -> None:
        samples = self._samples(profile_name)
        self._wait("the next collection cycle", lambda: self._samples(profile_name) != samples, timeout=60)

    # ------------------------------------------------------------------------------------------- summary

    def _kubectl(self, *args: str) -> list[str]:
        try:
            return self.control_plane.kubectl(*args).rstrip("\n").splitlines()
        except EnvtestError as exc:
            return [f"(kubectl failed: {exc})"]

    def _print_tables(self) -> None:
        self._poll()
        # Only the steps stay above what follows: the live table and resize line come back, fresh, in the next
        # live block (a frozen copy of them above it would contradict it within a cycle).
        self.view.close(keep=history(self._frame(), color=self.options.interactive))
        say = self.view.say
        say("")
        say("$ kubectl get workloadprofiles")
        for line in self._kubectl("get", "workloadprofiles"):
            say(line)
        say("")
        say(f"The demo pods (-l {DEMO_LABEL}), first container; memory in binary units (the pod spec is exact):")
        pods = self.rest.get("/api/v1/pods", params={"labelSelector": DEMO_LABEL}).get("items", [])
        for line in pod_table(pods):
            say(f"  {line}")

    def _print_commands(self) -> None:
        env, operator = self.control_plane, self.operator
        kubectl_dir = env.assets.binary("kubectl").parent
        say = self.view.say
        say("")
        say("Look further — in another shell:")
        version = self.rest.get("/version").get("gitVersion", "")
        log_path = operator.log_path if operator else ""
        metrics_url = operator.metrics_url if operator else ""
        for line in command_lines(
            [
                (f"export KUBECONFIG={env.kubeconfig_path}", "the admin kubeconfig of this control plane"),
                (f"export PATH={kubectl_dir}:$PATH", f"kubectl {version}, from the envtest cache"),
                ("kubectl get workloadprofiles", ""),
                (f"kubectl get workloadprofile {CHECKOUT.profile_name()} -o yaml", "statistics, recommendations"),
                ("kubectl top pods -A", "the synthetic metrics.k8s.io"),
                (
                    f"{ballast_command()} explain pod/{COLD_START_POD.key}",
                    "where the cold-start pod's values come from",
                ),
                (f"tail -f {log_path}", "the operator's log"),
                (
                    f"kubectl -n {OPERATOR_NAMESPACE} create configmap {KILL_SWITCH_CONFIGMAP}",
                    "the kill switch: admission, enrollment, collection and resize pause (delete it to resume)",
                ),
                (f"curl -s {metrics_url} | grep ^ballast_", "its Prometheus metrics"),
            ]
        ):
            say(f"  {line}")
        say("")
        say("Still running: samples keep coming, the resize pod keeps stepping. Ctrl-C stops everything.")
        say("")

    def _follow(self) -> None:
        """Follow the resize pod (and the profiles) until it converges (`--exit-after resized`) or Ctrl-C."""
        self.view = choose_view(self.out, interactive=self.options.interactive)
        self.following = True
        self._set("resize", "running", f"{RESIZE_POD.key}: stepping toward {CHECKOUT.profile_name()}")
        announced = False

        def done() -> bool:
            nonlocal announced
            if self.trail.converged and not announced:
                announced = True
                self.report["resize"] = {"cpu": self.trail.cpu, "memory": self.trail.memory, "steps": self.trail.steps}
                self._write_report()
            return announced and self.options.exit_after == "resized"

        timeout = self.options.resize_timeout if self.options.exit_after == "resized" else None
        self._wait(f"{RESIZE_POD.key} to converge", done, timeout)

    # ------------------------------------------------------------------------------------------- teardown

    def _teardown(self) -> None:
        """Stop ballastd, the backend and the control plane (which removes the directory); signals wait."""
        previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            self.view.close()
            self.view = choose_view(self.out, interactive=False)
            work_dir = self.report.get("work_dir")
            self.view.say("stopping: ballastd, the metrics backend, the control plane …")
            if self.operator is not None:
                self.operator.stop()
            if self.backend is not None:
                self.backend.stop()
            if self.env is not None:
                self.env.stop()
            self.report["stopped"] = True
            self._write_report()
            self.view.say(f"stopped{f'; removed {work_dir}' if work_dir else ''}")
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def interrupt_on_terminate() -> None:
    """Turn SIGINT, SIGTERM and SIGHUP into KeyboardInterrupt, so they all tear down like Ctrl-C."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(signal.Signals(signum).name)

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, interrupt)
    # Also when started with SIGINT ignored (a background job of a script): Ctrl-C must still tear down.
    signal.signal(signal.SIGINT, signal.default_int_handler)


def default_interactive() -> bool:
    """A live view only on a terminal, and not under CI."""
    return sys.stdout.isatty() and os.environ.get("CI", "").lower() not in ("true", "1", "yes")
