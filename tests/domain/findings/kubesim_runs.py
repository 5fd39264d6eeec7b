"""Run a kubesim scenario on a ManualClock, observing it the way the watcher does (not a test module).

``run(scenario, seconds)`` returns the run: the store, the per-rollout ``Observations`` fed from every
Rollout event, and the events as DESIGN §3 recording lines, so tests can diagnose the live history, the
final objects (a dump) and the recording.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from dashboard.domain.findings import Finding, Thresholds, detect_findings
from dashboard.domain.observations import Observations, RolloutObjects, observe
from dashboard.domain.timeline import format_time
from kubesim.clock import ManualClock
from kubesim.simulation import Simulation, load_scenarios
from kubesim.store import Store

RECORDED = {
    "argoproj.io/rollouts": "Rollout",
    "apps/replicasets": "ReplicaSet",
    "argoproj.io/analysisruns": "AnalysisRun",
    "argoproj.io/applications": "Application",
    "networking.istio.io/virtualservices": "VirtualService",
    "networking.istio.io/destinationrules": "DestinationRule",
    "networking.k8s.io/ingresses": "Ingress",
    "gateway.networking.k8s.io/httproutes": "HTTPRoute",
    "split.smi-spec.io/trafficsplits": "TrafficSplit",
    "autoscaling/horizontalpodautoscalers": "HorizontalPodAutoscaler",
}
# Their managedFields name who wrote the weight.
WRITERS_MATTER = ("Rollout", "VirtualService", "Ingress", "HTTPRoute", "TrafficSplit")
CLUSTER = "kubesim"
DEFAULTS = Thresholds()


@dataclass
class Run:
    sim: Simulation
    store: Store
    clock: ManualClock
    history: dict[tuple[str, str], Observations] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)

    def now(self) -> datetime:
        return self.clock.now()

    def objects(self, namespace: str, name: str) -> RolloutObjects:
        store = self.store
        return RolloutObjects(
            rollout=store.get("argoproj.io/rollouts", namespace, name),
            replicasets=store.list("apps/replicasets", namespace)[0],
            analysisruns=store.list("argoproj.io/analysisruns", namespace)[0],
            pods=store.list("pods", namespace)[0],
            applications=store.list("argoproj.io/applications")[0],
        )

    def dump(self) -> list[dict[str, Any]]:
        objects: list[dict[str, Any]] = []
        for resource in (*RECORDED, "pods"):
            objects += self.store.list(resource)[0]
        return objects

    def findings(
        self, namespace: str, name: str, *, live: bool = True, thresholds: Thresholds = DEFAULTS
    ) -> list[Finding]:
        return detect_findings(
            {"cluster": CLUSTER},
            objects=self.objects(namespace, name),
            history=self.history.get((namespace, name)) if live else None,
            now=self.now(),
            thresholds=thresholds,
        )

    def write_recording(self, path: Path) -> Path:
        path.write_text("".join(line + "\n" for line in self.lines))
        return path


def run(scenario: str, seconds: float = 0.0, *, seed: int = 0) -> Run:
    clock = ManualClock()
    store = Store(now=clock.now, seed=seed)
    sim = Simulation(store, load_scenarios([scenario]), clock=clock, seed=seed)
    result = Run(sim, store, clock)

    def on_event(event_type: str, resource: str, obj: dict[str, Any]) -> None:
        kind = RECORDED.get(resource)
        if kind is None:
            return
        obj = copy.deepcopy(obj)
        obj.setdefault("kind", kind)
        if kind not in WRITERS_MATTER:  # keep recordings small: only the weight's writers matter
            obj["metadata"].pop("managedFields", None)
        result.lines.append(
            json.dumps(
                {"at": format_time(clock.now()), "cluster": CLUSTER, "type": event_type, "object": obj}
            )
        )
        if kind == "Rollout" and event_type != "DELETED":
            key = (obj["metadata"]["namespace"], obj["metadata"]["name"])
            result.history[key] = observe(result.history.get(key), None, RolloutObjects(obj), clock.now())

    store.subscribe(on_event)
    if seconds:
        sim.advance(seconds)
    return result
