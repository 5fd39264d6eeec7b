"""The simulated HPA controller scales its target through /scale as kube-controller-manager does."""

from __future__ import annotations

from typing import Any

from kubesim.autoscaling import HPAS, AutoscalerController
from kubesim.clock import ManualClock
from kubesim.store import Store

Obj = dict[str, Any]
DEPLOYMENTS = "apps/deployments"


class _Harness:
    def __init__(self, load: list[tuple[float, float]], replicas: int = 4, ready: int | None = None) -> None:
        self.clock = ManualClock()
        self.store = Store(now=self.clock.now)
        self.queued: list[tuple[str, tuple[str, str], float]] = []
        start = self.clock.now()
        self.hpa = AutoscalerController(
            self.store,
            self.clock,
            lambda kind, key, delay=0.0: self.queued.append((kind, key, delay)),
            {("demo", "web"): load},
            lambda: (self.clock.now() - start).total_seconds(),
        )
        self.store.create(
            DEPLOYMENTS,
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "web", "namespace": "demo"},
                "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}}, "template": {}},
            },
            manager="kubectl-client-side-apply",
        )
        self.set_ready(replicas if ready is None else ready)
        self.store.create(
            HPAS,
            {
                "apiVersion": "autoscaling/v2",
                "kind": "HorizontalPodAutoscaler",
                "metadata": {"name": "web", "namespace": "demo"},
                "spec": {
                    "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                    "minReplicas": 2,
                    "maxReplicas": 10,
                    "metrics": [
                        {
                            "type": "Resource",
                            "resource": {
                                "name": "cpu",
                                "target": {"type": "Utilization", "averageUtilization": 50},
                            },
                        }
                    ],
                },
            },
            manager="kubectl-client-side-apply",
        )

    def set_ready(self, replicas: int) -> None:
        self.store.patch(DEPLOYMENTS, "demo", "web", {"status": {"replicas": replicas}}, subresource="status")

    def sync(self, seconds: float = 15.0) -> Obj:
        self.clock.advance(seconds)
        self.hpa.reconcile(("demo", "web"))
        hpa: Obj = self.store.get(HPAS, "demo", "web")
        return hpa

    def replicas(self) -> int:
        return int(self.store.get(DEPLOYMENTS, "demo", "web")["spec"]["replicas"])


def _condition(hpa: Obj, kind: str) -> tuple[str, str]:
    found = next(c for c in hpa["status"]["conditions"] if c["type"] == kind)
    return found["status"], found["reason"]


def test_it_scales_up_through_the_scale_subresource_as_kube_controller_manager() -> None:
    h = _Harness([(0, 3.0)])  # 3 pods' worth on 4 pods: 75 % against a 50 % target
    hpa = h.sync()
    assert h.replicas() == 6  # ceil(1.5 * 4)
    assert hpa["status"]["desiredReplicas"] == 6 and hpa["status"]["currentReplicas"] == 4
    assert hpa["status"]["currentMetrics"][0]["resource"]["current"] == {"averageUtilization": 75}
    assert _condition(hpa, "AbleToScale") == ("True", "SucceededRescale")
    assert _condition(hpa, "ScalingActive") == ("True", "ValidMetricFound")
    assert _condition(hpa, "ScalingLimited") == ("False", "DesiredWithinRange")
    entry = h.store.get(DEPLOYMENTS, "demo", "web")["metadata"]["managedFields"][-1]
    assert (entry["manager"], entry["operation"], entry["subresource"]) == (
        "kube-controller-manager",
        "Update",
        "scale",
    )
    assert entry["fieldsV1"] == {"f:spec": {"f:replicas": {}}}
    assert hpa["metadata"]["managedFields"][-1]["subresource"] == "status"
    events = h.store.list("events", "demo")[0]
    assert [(e["reason"], e["message"]) for e in events] == [
        (
            "SuccessfulRescale",
            "New size: 6; reason: cpu resource utilization (percentage of request) above target",
        )
    ]
    assert h.queued == [("hpa", ("demo", "web"), 15.0)]


def test_within_the_tolerance_it_keeps_the_size() -> None:
    h = _Harness([(0, 2.1)])  # 52.5 %: within 10 % of 50 %
    hpa = h.sync()
    assert h.replicas() == 4
    assert _condition(hpa, "AbleToScale") == ("True", "ReadyForNewScale")


def test_scale_up_is_limited_per_period_then_by_max_replicas() -> None:
    h = _Harness([(0, 20.0)], replicas=2)
    hpa = h.sync()
    assert h.replicas() == 6 and _condition(hpa, "ScalingLimited") == ("True", "ScaleUpLimit")  # 2 + 4
    h.set_ready(6)
    hpa = h.sync()
    assert h.replicas() == 10 and _condition(hpa, "ScalingLimited") == ("True", "TooManyReplicas")


def test_scale_down_waits_for_the_stabilization_window() -> None:
    h = _Harness([(0, 4.0), (20, 1.0)], replicas=8)  # 50 % at first, then 12.5 %
    h.sync()
    hpa = h.sync()  # the 300 s window still holds the recommendation of 8
    assert h.replicas() == 8 and _condition(hpa, "AbleToScale") == ("True", "ScaleDownStabilized")
    hpa = h.sync(300)
    assert h.replicas() == 2 and hpa["status"]["desiredReplicas"] == 2


def test_a_target_at_zero_replicas_disables_scaling() -> None:
    h = _Harness([(0, 6.0)], replicas=0)
    hpa = h.sync()
    assert h.replicas() == 0
    assert hpa["status"]["desiredReplicas"] == 0
    assert _condition(hpa, "ScalingActive") == ("False", "ScalingDisabled")


def test_a_missing_target_is_failed_get_scale() -> None:
    h = _Harness([(0, 1.0)])
    h.store.delete(DEPLOYMENTS, "demo", "web")
    hpa = h.sync()
    assert _condition(hpa, "AbleToScale") == ("False", "FailedGetScale")
    assert 'deployments.apps "web" not found' in hpa["status"]["conditions"][0]["message"]
