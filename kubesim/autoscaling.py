"""The HorizontalPodAutoscaler controller, simulated: autoscaling/v2 HPAs scale their target's `scale`.

Every sync period (15 s, kube-controller-manager's `--horizontal-pod-autoscaler-sync-period`) each HPA reads
its target's scale subresource (a Rollout, a Deployment, any kind kubesim serves with `scale`), measures CPU
utilization, and writes the new size through `/scale` and its own `status`, both as field manager
"kube-controller-manager" (the API server names managers after the client's user agent). It follows
pkg/controller/podautoscaler: the 10 % tolerance, `ceil(usageRatio * readyPods)`, the default behavior
(scale-up by max(100 %, 4 pods) per period, no scale-up stabilization, a 300 s scale-down stabilization
window), min/max clamping, the AbleToScale / ScalingActive / ScalingLimited conditions and their messages,
scaling disabled while the target is at 0 replicas, and `SuccessfulRescale` events.

Utilization comes from the scenario's `load` (CPU demand in pod requests: `pods: 6` on 3 ready pods is
200 %), since kubesim runs no kubelet or metrics-server. Non-goals: metrics other than a CPU `Resource`
utilization target (others are reported as missing), custom `behavior` policies, container metrics.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from kubesim.clock import Clock, rfc3339
from kubesim.controller.common import Enqueue, Key, Obj
from kubesim.controller.events import Recorder
from kubesim.resources import by_kind

HPAS = "autoscaling/horizontalpodautoscalers"
MANAGER = "kube-controller-manager"
COMPONENT = "horizontal-pod-autoscaler"
SYNC_PERIOD = 15.0
TOLERANCE = 0.1
DOWNSCALE_WINDOW = 300.0
CPU_REASON = "cpu resource utilization (percentage of request)"


def utilization_target(hpa: Obj) -> int | None:
    """The CPU averageUtilization target of a Resource metric (80 when no metrics are given)."""
    metrics = (hpa.get("spec") or {}).get("metrics")
    if not metrics:
        return 80  # the API server defaults an HPA without metrics to 80 % CPU
    for metric in metrics:
        resource = metric.get("resource") or {}
        target = resource.get("target") or {}
        if (
            metric.get("type") == "Resource"
            and resource.get("name") == "cpu"
            and target.get("type") == "Utilization"
        ):
            return int(target.get("averageUtilization") or 0) or None
    return None


class AutoscalerController:
    def __init__(
        self,
        store: Any,
        clock: Clock,
        enqueue: Enqueue,
        load: dict[Key, list[tuple[float, float]]],
        sim_elapsed: Callable[[], float],
    ) -> None:
        self.store = store
        self.clock = clock
        self.enqueue = enqueue
        self.load = load  # (namespace, HPA name) -> [(from simulated second, CPU demand in pod requests)]
        self.sim_elapsed = sim_elapsed
        self.events = Recorder(store, clock, COMPONENT)
        self._recommendations: dict[Key, list[tuple[datetime, int]]] = {}

    def demand(self, key: Key) -> float:
        """The CPU demand (in pod requests) the scenario's load gives for this HPA now."""
        elapsed = self.sim_elapsed()
        value = 0.0
        for at, pods in self.load.get(key, []):
            if at <= elapsed:
                value = pods
        return value

    def reconcile(self, key: Key) -> None:
        hpa = self.store.try_get(HPAS, key[0], key[1])
        if hpa is None:
            return
        self.enqueue("hpa", key, SYNC_PERIOD)
        spec: Obj = hpa.get("spec") or {}
        old_status: Obj = hpa.get("status") or {}
        status: Obj = {k: v for k, v in old_status.items() if k != "currentMetrics"}
        conditions: list[Obj] = list(old_status.get("conditions") or [])
        ref = spec.get("scaleTargetRef") or {}
        rt = by_kind(str(ref.get("apiVersion", "")), str(ref.get("kind", "")))
        target = (
            None
            if rt is None or rt.scale is None
            else self.store.try_get(rt.key, key[0], str(ref.get("name")))
        )
        if rt is None or target is None:
            what = rt.group_resource if rt is not None else f"{ref.get('kind')}.{ref.get('apiVersion')}"
            missing = f'{what} "{ref.get("name")}" not found'
            message = f"the HPA controller was unable to get the target's current scale: {missing}"
            self._condition(conditions, "AbleToScale", "False", "FailedGetScale", message)
            self.events.warning(hpa, "FailedGetScale", missing)
            self._write_status(hpa, status, conditions)
            return
        scale = self.store.scale_of(rt, target)
        current = int((scale.get("spec") or {}).get("replicas") or 0)
        ready = int((scale.get("status") or {}).get("replicas") or 0)
        minimum, maximum = int(spec.get("minReplicas") or 1), int(spec["maxReplicas"])
        status["currentReplicas"] = ready
        self._condition(
            conditions,
            "AbleToScale",
            "True",
            "SucceededGetScale",
            "the HPA controller was able to get the target's current scale",
        )
        if current == 0 and minimum != 0:
            status["desiredReplicas"] = 0
            self._condition(
                conditions,
                "ScalingActive",
                "False",
                "ScalingDisabled",
                "scaling is disabled since the replica count of the target is zero",
            )
            self._write_status(hpa, status, conditions)
            return
        wanted_utilization = utilization_target(hpa)
        if wanted_utilization is None or ready == 0:
            reason = "FailedGetResourceMetric"
            message = (
                "the HPA was unable to compute the replica count: failed to get cpu utilization: "
                "did not receive metrics for targeted pods (pods might be unready)"
                if wanted_utilization is not None
                else "the HPA was unable to compute the replica count: kubesim measures cpu utilization only"
            )
            self._condition(conditions, "ScalingActive", "False", reason, message)
            self.events.warning(hpa, reason, message.split(": ", 1)[1])
            self._write_status(hpa, status, conditions)
            return
        utilization = round(100 * self.demand(key) / ready)
        status["currentMetrics"] = [
            {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": utilization}}}
        ]
        self._condition(
            conditions,
            "ScalingActive",
            "True",
            "ValidMetricFound",
            f"the HPA was able to successfully calculate a replica count from {CPU_REASON}",
        )
        ratio = utilization / wanted_utilization
        proposed = current if abs(ratio - 1.0) <= TOLERANCE else math.ceil(ratio * ready)
        desired = self._normalize(key, hpa, conditions, current, proposed, minimum, maximum)
        status["desiredReplicas"] = desired
        if desired != current:
            self.store.patch(
                rt.key,
                key[0],
                str(ref["name"]),
                {"spec": {"replicas": desired}},
                subresource="scale",
                manager=MANAGER,
            )
            status["lastScaleTime"] = rfc3339(self.clock.now())
            reason = f"{CPU_REASON} above target" if desired > current else "All metrics below target"
            self.events.normal(hpa, "SuccessfulRescale", f"New size: {desired}; reason: {reason}")
            self._condition(
                conditions,
                "AbleToScale",
                "True",
                "SucceededRescale",
                f"the HPA controller was able to update the target scale to {desired}",
            )
        self._write_status(hpa, status, conditions)

    def _normalize(
        self,
        key: Key,
        hpa: Obj,
        conditions: list[Obj],
        current: int,
        proposed: int,
        minimum: int,
        maximum: int,
    ) -> int:
        """normalizeDesiredReplicasWithBehaviors with the default behavior."""
        now = self.clock.now()
        history = [
            (t, r)
            for t, r in self._recommendations.get(key, [])
            if now - t < timedelta(seconds=DOWNSCALE_WINDOW)
        ]
        history.append((now, proposed))
        self._recommendations[key] = history
        stabilized = current
        if stabilized < proposed:  # no scale-up window: the newest recommendation
            stabilized = proposed
        down = max(r for _, r in history)
        if stabilized > down:
            stabilized = down
        if stabilized != proposed:
            self._condition(
                conditions,
                "AbleToScale",
                "True",
                "ScaleDownStabilized",
                "recent recommendations were higher than current one, "
                "applying the highest recent recommendation",
            )
        else:
            self._condition(
                conditions, "AbleToScale", "True", "ReadyForNewScale", "recommended size matches current size"
            )
        # convertDesiredReplicasWithBehaviorRate, default policies: up by max(100 %, 4 pods), down by 100 %.
        up_limit = max(current * 2, current + 4)
        desired = stabilized
        limited = ("False", "DesiredWithinRange", "the desired count is within the acceptable range")
        if desired > current and desired > min(maximum, up_limit):
            if up_limit < maximum:
                limited = (
                    "True",
                    "ScaleUpLimit",
                    "the desired replica count is increasing faster than the maximum scale rate",
                )
            else:
                limited = (
                    "True",
                    "TooManyReplicas",
                    "the desired replica count is more than the maximum replica count",
                )
            desired = min(maximum, up_limit)
        elif desired < minimum:
            limited = (
                "True",
                "TooFewReplicas",
                "the desired replica count is less than the minimum replica count",
            )
            desired = minimum
        elif desired > maximum:
            limited = (
                "True",
                "TooManyReplicas",
                "the desired replica count is more than the maximum replica count",
            )
            desired = maximum
        self._condition(conditions, "ScalingLimited", *limited)
        return desired

    def _condition(self, conditions: list[Obj], kind: str, status: str, reason: str, message: str) -> None:
        """setCondition: the transition time moves only when the status does."""
        for condition in conditions:
            if condition.get("type") == kind:
                if condition.get("status") != status:
                    condition["lastTransitionTime"] = rfc3339(self.clock.now())
                condition.update(status=status, reason=reason, message=message)
                return
        conditions.append(
            {
                "type": kind,
                "status": status,
                "lastTransitionTime": rfc3339(self.clock.now()),
                "reason": reason,
                "message": message,
            }
        )

    def _write_status(self, hpa: Obj, status: Obj, conditions: list[Obj]) -> None:
        status["conditions"] = conditions
        if status != (hpa.get("status") or {}):
            self.store.replace(HPAS, {**hpa, "status": status}, subresource="status", manager=MANAGER)
