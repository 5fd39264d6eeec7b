"""The simulation: seeds a scenario's objects into the store, then runs the controllers until cancelled.

Event-driven and level-triggered, like real controllers: ``store.subscribe`` feeds an informer-like cache
and a de-duplicating work queue keyed by (kind, namespace/name); reconcilers read the cache and write to the
store; anything timed (pause expiry, pod readiness, analysis intervals, scale-down deadlines, scenario
events, another writer's next write, fleet churn) goes on a timer heap in simulated seconds.

Two ways to drive it:
- ``await Simulation(...).run()`` — real time on one asyncio loop (durations divided by ``speed``);
- ``sim.advance(sim_seconds)`` with a ``ManualClock`` — deterministic and instant, for tests.

Non-goals: parallelism (one thread, one loop), persistence across restarts.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import heapq
import itertools
import logging
import random
import time
from collections import OrderedDict
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from kubesim.autoscaling import HPAS, AutoscalerController
from kubesim.clock import Clock, ManualClock
from kubesim.controller import actions
from kubesim.controller.analysis import AnalysisController
from kubesim.controller.common import (
    ANALYSIS_RUNS,
    ANALYSIS_TEMPLATES,
    APPLICATIONS,
    EXPERIMENTS,
    PODS,
    REPLICA_SETS,
    ROLLOUTS,
    SERVICES,
    Cache,
    Key,
    Obj,
)
from kubesim.controller.experiments import ExperimentController
from kubesim.controller.jobs import JOBS, JobController
from kubesim.controller.replicasets import PodBehaviour, ReplicaSetController
from kubesim.controller.rollouts import DEPLOYMENTS, RolloutController
from kubesim.controller.routers import INGRESSES, WATCHED_ROUTING, referenced, stable_ingresses
from kubesim.flagger import FlaggerController
from kubesim.gitops import GitOps, rollout_manifest
from kubesim.metrics import (
    MetricProvider,
    PrometheusProvider,
    RoutingProvider,
    Series,
    SeriesProvider,
    UnavailableProvider,
)
from kubesim.resources import by_kind
from kubesim.scenarios import Scenario, ScenarioError, list_scenarios, load_scenarios
from kubesim.scenarios.schema import Event, RolloutDef, Writer
from kubesim.traffic import TrafficModel

__all__ = ["Scenario", "ScenarioError", "Simulation", "list_scenarios", "load_scenarios"]

SLICE_SECONDS = 0.003  # of reconciling between two turns of the event loop

log = logging.getLogger("kubesim.simulation")

USER_MANAGER = "kubectl-client-side-apply"


def scenario_namespaces(scenario: Scenario) -> list[str]:
    """Every namespace a scenario puts objects in, in order of first use."""
    found = [(t.get("metadata") or {}).get("namespace") or "default" for t in scenario.analysis_templates]
    found += [r.namespace for r in scenario.rollouts]
    found += ["argocd"] if scenario.applications else []
    found += [c.namespace for c in scenario.canaries]
    found += [o["metadata"]["namespace"] for o in scenario.objects if o["metadata"].get("namespace")]
    if scenario.fleet is not None:
        found += [f"fleet-{i:02d}" for i in range(min(scenario.fleet.namespaces, scenario.fleet.rollouts))]
    return list(dict.fromkeys(found))


class Simulation:
    def __init__(
        self,
        store: Any,
        scenarios: list[Scenario],
        *,
        speed: float = 1.0,
        seed: int = 0,
        faults: Any | None = None,
        clock: Clock | None = None,
        provider: MetricProvider | None = None,
    ) -> None:
        self.store = store
        self.scenarios = scenarios
        self.clock = clock or Clock(speed)
        self.faults = faults
        self.rng = random.Random(seed)
        series: dict[str, Series] = {}
        series_by_namespace: dict[str, dict[str, Series]] = {}
        for scenario in scenarios:
            series.update(scenario.metrics)
            for rollout in scenario.rollouts:
                series_by_namespace.setdefault(rollout.namespace, {}).update(scenario.metrics)
        self.cache = Cache(
            [ROLLOUTS, REPLICA_SETS, PODS, ANALYSIS_RUNS, ANALYSIS_TEMPLATES, APPLICATIONS, SERVICES]
        )
        # Traffic scenarios expose real metrics; their analyses go to Prometheus once one is attached.
        profiles = [p for scenario in scenarios for p in scenario.traffic]
        self._started_at = self.clock.now()
        self.traffic = TrafficModel(
            self.cache, profiles, sim_elapsed=lambda: self.clock.sim_elapsed(self._started_at)
        )
        self.routing = RoutingProvider(
            SeriesProvider(series, by_namespace=series_by_namespace),
            UnavailableProvider(
                "live metrics unavailable: kubesim runs without Prometheus "
                "(start it with --prometheus; install: apt-get install -y --no-install-recommends prometheus)"
            ),
            {p.namespace for p in profiles},
        )
        self.provider = provider or self.routing
        # Work to do, in order, each item once: an OrderedDict because taking from the front of a plain dict
        # walks past every entry deleted there before it (5 % of the simulator's samples under churn).
        self._queue: OrderedDict[tuple[str, Key], None] = OrderedDict()
        self._timers: list[tuple[datetime, int, str, Key]] = []
        self._seq = itertools.count()
        self._wake: asyncio.Event | None = None
        self._pods: dict[Key, PodBehaviour] = {}
        self._unpullable: dict[Key, list[str]] = {}
        self._events: list[tuple[Event, int]] = []
        self._writers: list[Writer] = []
        self._fleet: list[Key] = []
        self._churn_interval: float | None = None
        self._versions = itertools.count(2)
        self.seeded = False
        self.reconciles = 0
        self.failed: BaseException | None = None
        self.on_failure: list[Callable[[BaseException], None]] = []
        self.rollouts = RolloutController(store, self.cache, self.clock, self.enqueue)
        self.analysis = AnalysisController(store, self.cache, self.clock, self.provider, self.enqueue)
        self.replicasets = ReplicaSetController(
            store, self.cache, self.clock, self.enqueue, self._pod_policy, random.Random(seed + 1)
        )
        self.gitops = GitOps(store, self.cache, self.clock, self.enqueue, random.Random(seed + 2))
        self.flagger = FlaggerController(store, self.clock, self.enqueue, self.provider)
        self.jobs = JobController(store, self.clock, self.enqueue, random.Random(seed + 3))
        self.experiments = ExperimentController(store, self.clock, self.enqueue)
        self.autoscaler = AutoscalerController(
            store,
            self.clock,
            self.enqueue,
            {key: points for scenario in scenarios for key, points in scenario.load.items()},
            lambda: self.clock.sim_elapsed(self._started_at),
        )
        self._handlers: dict[str, Callable[[Key], None]] = {
            "rollout": self.rollouts.reconcile,
            "replicaset": self.replicasets.reconcile,
            "pod-ready": self.replicasets.make_ready,
            "analysisrun": self.analysis.reconcile,
            "application": lambda key: self.gitops.reconcile(key[1]),
            "event": self._run_event,
            "writer": self._run_writer,
            "churn": self._churn,
            "canary": self.flagger.tick,
            "canary-change": self.flagger.change,
            "deployment-ready": self.flagger.make_ready,
            "job": self.jobs.reconcile,
            "experiment": self.experiments.reconcile,
            "job-added": self.jobs.added,
            "hpa": self.autoscaler.reconcile,
        }
        for resource in self.cache.resources:
            items, _ = store.list(resource)
            for obj in items:
                self.cache.apply("ADDED", resource, obj)
        self._unsubscribe = store.subscribe(self._on_event)

    # ---- queue and timers -------------------------------------------------------------------------------

    def enqueue(self, kind: str, key: Key, delay: float = 0.0) -> None:
        """Run ``kind`` for ``key`` now (delay 0) or after ``delay`` simulated seconds."""
        if delay <= 0:
            self._queue[(kind, key)] = None
        else:
            due = self.clock.now() + self.clock.wall(delay)
            heapq.heappush(self._timers, (due, next(self._seq), kind, key))
        if self._wake is not None:
            self._wake.set()

    def _on_event(self, event_type: str, resource: str, obj: Obj) -> None:
        self.cache.apply(event_type, resource, obj)
        meta = obj.get("metadata") or {}
        key = (meta.get("namespace", ""), meta.get("name", ""))
        queue = self._queue
        if resource == ROLLOUTS:
            queue[("rollout", key)] = None
            app = self.gitops.by_rollout.get(key)
            if app is not None:
                queue[("application", ("argocd", app))] = None
        elif resource == PODS:
            for ref in meta.get("ownerReferences") or []:
                if ref.get("kind") == "ReplicaSet":
                    queue[("replicaset", (key[0], ref["name"]))] = None
        elif resource == REPLICA_SETS:
            if event_type != "DELETED":
                queue[("replicaset", key)] = None
            self._queue_owner(meta, key[0])
        elif resource == ANALYSIS_RUNS:
            if event_type != "DELETED":
                queue[("analysisrun", key)] = None
            self._queue_owner(meta, key[0])
        elif resource == APPLICATIONS:
            queue[("application", key)] = None
        elif resource == DEPLOYMENTS:
            # argo-rollouts watches the Deployments workloadRefs name: a change requeues their rollouts.
            for ro in self.cache.all(ROLLOUTS):
                ref = (ro.get("spec") or {}).get("workloadRef") or {}
                if (
                    ro["metadata"]["namespace"] == key[0]
                    and ref.get("kind") == "Deployment"
                    and ref.get("name") == key[1]
                ):
                    queue[("rollout", (key[0], ro["metadata"]["name"]))] = None
        elif resource == HPAS and event_type == "ADDED":
            queue[("hpa", key)] = None  # its reconcile schedules the next sync period itself
        elif resource in WATCHED_ROUTING:
            # As argo-rollouts' router controllers do: a change to a routing object requeues its rollouts.
            for ro in self.cache.all(ROLLOUTS):
                if key in referenced(ro, resource):
                    queue[("rollout", (ro["metadata"]["namespace"], ro["metadata"]["name"]))] = None
        elif resource == JOBS and event_type == "ADDED":
            queue[("job-added", key)] = None
        elif resource == EXPERIMENTS:
            if event_type != "DELETED":
                queue[("experiment", key)] = None
            self._queue_owner(meta, key[0])
        if self._wake is not None:
            self._wake.set()

    def _queue_owner(self, meta: Obj, namespace: str) -> None:
        for ref in meta.get("ownerReferences") or []:
            if ref.get("kind") == "Rollout":
                self._queue[("rollout", (namespace, ref["name"]))] = None
            elif ref.get("kind") == "Experiment":
                self._queue[("experiment", (namespace, ref["name"]))] = None

    def _fire_due(self) -> None:
        now = self.clock.now()
        while self._timers and self._timers[0][0] <= now:
            _, _, kind, key = heapq.heappop(self._timers)
            self._queue[(kind, key)] = None

    def process(self, limit: int | None = None, until: float | None = None) -> int:
        """Run queued work until the queue is empty (or ``limit`` items, or ``time.perf_counter()`` passes
        ``until``); returns how many ran."""
        done = 0
        while self._queue and (limit is None or done < limit):
            if until is not None and time.perf_counter() >= until:
                break
            (kind, key), _ = self._queue.popitem(last=False)
            try:
                self._handlers[kind](key)
            except Exception as error:  # one bad reconcile must not stop the cluster
                log.warning(
                    "%s %s/%s failed: %s", kind, key[0], key[1], error, exc_info=not hasattr(error, "status")
                )
                if kind in ("rollout", "replicaset", "analysisrun", "application", "experiment"):
                    self.enqueue(kind, key, 1.0)
            done += 1
        self.reconciles += done
        return done

    def advance(self, sim_seconds: float) -> None:
        """With a ManualClock: move simulated time forward, running everything that falls due, in order."""
        if not isinstance(self.clock, ManualClock):
            raise TypeError("advance() needs a ManualClock; use run() with a real clock")
        if not self.seeded:
            self.seed()
        target = self.clock.now() + timedelta(seconds=sim_seconds)
        self.process()
        while self._timers and self._timers[0][0] <= target:
            due = self._timers[0][0]
            if due > self.clock.now():
                self.clock.set(due)
            self._fire_due()
            self.process()
        self.clock.set(target)
        self._fire_due()
        self.process()

    async def run(self) -> None:
        """Seed the scenarios, then reconcile until cancelled.

        A failure that stops the simulation (one reconcile failing is only logged and retried) is logged
        at once with its cause and handed to every ``on_failure`` hook before it propagates: whoever runs
        the simulation in the background would otherwise hear of it only when stopping it.
        """
        try:
            await self._run()
        except asyncio.CancelledError:
            raise
        except Exception as error:
            self.failed = error
            log.error("the simulation stopped: %s", _cause(error), exc_info=error)
            for hook in list(self.on_failure):
                try:
                    hook(error)
                except Exception:  # a hook must not hide the failure it reports
                    log.exception("a simulation failure hook failed")
            raise

    async def _run(self) -> None:
        self._wake = asyncio.Event()
        if not self.seeded:
            self.seed()
        while True:
            self._fire_due()
            # Between slices the API server answers: a real one is apart from its controllers, and a write
            # waiting behind 20 reconciles (several loop turns each) was answered after 80-150 ms at p99.
            if self.process(limit=20, until=time.perf_counter() + SLICE_SECONDS):
                await asyncio.sleep(0)
                continue
            timeout = 1.0
            if self._timers:
                timeout = max(0.0, min(timeout, (self._timers[0][0] - self.clock.now()).total_seconds()))
            self._wake.clear()
            if timeout > 0 and not self._queue:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(timeout):
                        await self._wake.wait()

    # ---- seeding ----------------------------------------------------------------------------------------

    def use_prometheus(self, url: str) -> None:
        """Answer the traffic scenarios' analyses from the real Prometheus at ``url``."""
        self.routing.prometheus = PrometheusProvider(url, speed=self.clock.speed)

    def seed(self) -> None:
        """Create the scenarios' objects and schedule their events."""
        self.seeded = True
        self._started_at = self.clock.now()
        for scenario in self.scenarios:
            # A real cluster refuses objects in a namespace that does not exist: create them first.
            for ns in scenario_namespaces(scenario):
                if self.store.try_get("namespaces", None, ns) is None:
                    self.store.create("namespaces", {"metadata": {"name": ns}}, manager=USER_MANAGER)
            for template in scenario.analysis_templates:
                self.store.create(ANALYSIS_TEMPLATES, template, manager=USER_MANAGER)
            for manifest in scenario.objects:
                rt = by_kind(manifest["apiVersion"], manifest["kind"])
                assert rt is not None  # the scenario loader checked it
                self.store.create(rt.key, copy.deepcopy(manifest), manager=USER_MANAGER)
            apps = {(a.namespace, a.rollout): a for a in scenario.applications}
            for defn in scenario.rollouts:
                self._register_pods(defn)
                self.store.log_error_rates[(defn.namespace, defn.name)] = canary_error_rate(scenario, defn)
                self._create_services(defn)
                self._create_stable_ingresses(defn)
                app = apps.get((defn.namespace, defn.name))
                if app is not None:
                    self.gitops.add(app, defn)
                else:
                    self.store.create(ROLLOUTS, rollout_manifest(defn), manager=USER_MANAGER)
            for event in scenario.events:
                self._events.append((event, 0))
                self.enqueue("event", ("", str(len(self._events) - 1)), event.at)
            for writer in scenario.writers:
                self._writers.append(writer)
                self.enqueue("writer", ("", str(len(self._writers) - 1)), writer.every)
            if scenario.fleet is not None:
                self._seed_fleet(scenario)
            self.flagger.seed(scenario.canaries)

    def _register_pods(self, defn: RolloutDef) -> None:
        self._pods[(defn.namespace, defn.name)] = PodBehaviour(ready_seconds=defn.pod_ready_seconds)
        self._unpullable[(defn.namespace, defn.name)] = list(defn.unpullable_images)

    def _pod_policy(self, rs: Obj) -> PodBehaviour:
        ns = rs["metadata"]["namespace"]
        owner = next(
            (r["name"] for r in rs["metadata"].get("ownerReferences") or [] if r.get("kind") == "Rollout"), ""
        )
        behaviour = self._pods.get((ns, owner), PodBehaviour())
        images = [
            c.get("image", "")
            for c in (rs.get("spec") or {}).get("template", {}).get("spec", {}).get("containers") or []
        ]
        if any(image in self._unpullable.get((ns, owner), []) for image in images):
            return PodBehaviour(ready_seconds=behaviour.ready_seconds, pull_fails=True)
        return behaviour

    def _create_services(self, defn: RolloutDef) -> None:
        canary = defn.strategy.get("canary") or {}
        bg = defn.strategy.get("blueGreen") or {}
        names = [
            canary.get("canaryService"),
            canary.get("stableService"),
            bg.get("activeService"),
            bg.get("previewService"),
        ]
        for name in [n for n in names if n]:
            if self.store.try_get(SERVICES, defn.namespace, name) is not None:
                continue
            self.store.create(
                SERVICES,
                {
                    "apiVersion": "v1",
                    "kind": "Service",
                    "metadata": {"name": name, "namespace": defn.namespace, "labels": {"app": defn.name}},
                    "spec": {
                        "type": "ClusterIP",
                        "selector": {"app": defn.name},
                        "clusterIP": f"10.96.{self.rng.randint(0, 255)}.{self.rng.randint(1, 254)}",
                        "ports": [{"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"}],
                    },
                },
                manager=USER_MANAGER,
            )

    def _create_stable_ingresses(self, defn: RolloutDef) -> None:
        """The stable Ingress an NGINX-routed canary names, unless the scenario gives its own: all paths to
        the stable Service (a real cluster would have it from the application's manifests)."""
        canary = defn.strategy.get("canary") or {}
        nginx = (canary.get("trafficRouting") or {}).get("nginx") or {}
        for name in stable_ingresses(nginx):
            if self.store.try_get(INGRESSES, defn.namespace, name) is not None:
                continue
            backend = {"service": {"name": canary.get("stableService", ""), "port": {"number": 80}}}
            self.store.create(
                INGRESSES,
                {
                    "apiVersion": "networking.k8s.io/v1",
                    "kind": "Ingress",
                    "metadata": {"name": name, "namespace": defn.namespace, "labels": {"app": defn.name}},
                    "spec": {
                        "ingressClassName": "nginx",
                        "rules": [
                            {
                                "host": f"{name}.{defn.namespace}.example.com",
                                "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": backend}]},
                            }
                        ],
                    },
                },
                manager=USER_MANAGER,
            )

    def _seed_fleet(self, scenario: Scenario) -> None:
        fleet = scenario.fleet
        assert fleet is not None
        for i in range(fleet.rollouts):
            ns = f"fleet-{i % fleet.namespaces:02d}"
            defn = RolloutDef(
                name=f"svc-{i:05d}",
                namespace=ns,
                replicas=fleet.replicas,
                image="registry.example.com/svc:1.0.1",
                strategy={"canary": {"steps": [{"setWeight": 50}, {"pause": {"duration": "10s"}}]}},
                spec={"revisionHistoryLimit": 2},
                pod_ready_seconds=scenario.pod_ready_seconds,
                unpullable_images=[],
            )
            self._register_pods(defn)
            self.store.create(ROLLOUTS, rollout_manifest(defn), manager=USER_MANAGER)
            self._fleet.append((ns, defn.name))
        if fleet.churn_per_second > 0:
            self._churn_interval = 1.0 / fleet.churn_per_second
            self.enqueue("churn", ("", "fleet"), self._churn_interval)

    # ---- scenario events, writers, churn ----------------------------------------------------------------

    def _run_event(self, key: Key) -> None:
        index = int(key[1])
        event, count = self._events[index]
        self._events[index] = (event, count + 1)
        if event.every:
            self.enqueue("event", key, event.every)
        params = event.params
        scenario_ns = {r.name: r.namespace for s in self.scenarios for r in s.rollouts}
        if event.kind == "set_image":
            images = params.get("images") or [params["image"]]
            image = str(images[count % len(images)])
            actions.set_image(
                self.store,
                str(params.get("namespace") or scenario_ns[params["rollout"]]),
                params["rollout"],
                str(params.get("container", "*")),
                image,
            )
        elif event.kind == "commit":
            self.gitops.commit(str(params["app"]), params)
        elif event.kind == "action":
            extra = {k: v for k, v in params.items() if k not in ("rollout", "name")}
            actions.run_action(
                self.store,
                scenario_ns[params["rollout"]],
                params["rollout"],
                str(params["name"]),
                self.clock.now(),
                **extra,
            )
        elif event.kind == "fault":
            self._fault(params)

    def _fault(self, params: Obj) -> None:
        if self.faults is None:
            log.info("fault %s skipped: no server faults attached", params.get("name"))
            return
        name = params["name"]
        if name == "hang":
            self.faults.hang(float(params.get("seconds", 5)))
        elif name == "fail":
            self.faults.fail(count=params.get("count"), seconds=params.get("seconds"))
        else:
            getattr(self.faults, name)()

    def _run_writer(self, key: Key) -> None:
        writer = self._writers[int(key[1])]
        self.enqueue("writer", key, writer.every)
        if writer.resource:
            if self.store.try_get(writer.resource, writer.namespace or None, writer.name) is not None:
                body = {"spec": writer.spec} if writer.spec is not None else {"status": writer.status}
                self.store.patch(
                    writer.resource,
                    writer.namespace or None,
                    writer.name,
                    body,
                    subresource=None if writer.spec is not None else "status",
                    manager=writer.manager,
                )
            return
        if self.cache.get(ROLLOUTS, writer.namespace, writer.rollout) is None:
            return
        if writer.status is not None:
            self.store.patch(
                ROLLOUTS,
                writer.namespace,
                writer.rollout,
                {"status": writer.status},
                subresource="status",
                manager=writer.manager,
            )
        else:
            self.store.patch(
                ROLLOUTS, writer.namespace, writer.rollout, {"spec": writer.spec}, manager=writer.manager
            )

    def _churn(self, key: Key) -> None:
        """Fleet churn: a new image version on a random rollout."""
        if self._churn_interval is not None:
            self.enqueue("churn", key, self._churn_interval)
        if not self._fleet:
            return
        ns, name = self._fleet[self.rng.randrange(len(self._fleet))]
        version = next(self._versions)
        self.store.patch(
            ROLLOUTS,
            ns,
            name,
            [
                {
                    "op": "replace",
                    "path": "/spec/template/spec/containers/0/image",
                    "value": f"registry.example.com/svc:1.0.{version}",
                }
            ],
            patch_type="json",
            manager=USER_MANAGER,
        )

    def set_churn(self, per_second: float) -> None:
        """Change the fleet's churn rate (the benchmark raises it until the simulator saturates)."""
        first = self._churn_interval is None
        self._churn_interval = 1.0 / per_second if per_second > 0 else None
        if first and self._churn_interval is not None:
            self.enqueue("churn", ("", "fleet"), self._churn_interval)

    def close(self) -> None:
        self._unsubscribe()
        self.flagger.close()


def canary_error_rate(scenario: Scenario, defn: RolloutDef) -> float:
    """How often a canary pod of ``defn`` logs an error (``kubesim.podlogs``): the worst canary error rate
    its traffic profile reaches, else the worst value of the scenario's error-rate series."""
    for profile in scenario.traffic:
        if (profile.namespace, profile.rollout) == (defn.namespace, defn.name):
            rates = [profile.canary.error_rate]
            rates += [c.canary["error_rate"] for c in profile.changes if "error_rate" in c.canary]
            return max(rates)
    values = [v for name, series in scenario.metrics.items() if "error" in name for v in series.values]
    return max((v for v in values if 0 <= v <= 1), default=0.0)


def _cause(error: BaseException) -> str:
    """One line: the error's type and message (a store error's message names the object)."""
    return f"{type(error).__name__}: {error}"
