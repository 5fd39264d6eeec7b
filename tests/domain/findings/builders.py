"""Small hand-made objects for detector tests (not a test module)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

T0 = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)
UID = "ro-uid"


def at(seconds: float) -> str:
    return (T0 + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def rollout(status: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Rollout",
        "metadata": {"name": "checkout", "namespace": "shop", "uid": UID, "creationTimestamp": at(0)},
        "spec": {
            "replicas": 4,
            "selector": {"matchLabels": {"app": "checkout"}},
            "strategy": {
                "canary": {
                    "trafficRouting": {"nginx": {"stableIngress": "checkout"}},
                    "steps": [{"setWeight": 50}],
                }
            },
            **spec,
        },
        "status": status or {"currentPodHash": "aaa", "stableRS": "aaa", "phase": "Healthy"},
    }


def analysis_run(name: str, phase: str, values: list[float], *, condition: str = "result[0] < 0.05") -> dict:
    return {
        "kind": "AnalysisRun",
        "metadata": {
            "name": name,
            "namespace": "shop",
            "uid": f"uid-{name}",
            "ownerReferences": [{"uid": UID, "kind": "Rollout", "name": "checkout"}],
            "labels": {"rollouts-pod-template-hash": "aaa", "rollout-type": "Step", "step-index": "1"},
            "creationTimestamp": at(len(name)),
        },
        "spec": {"metrics": [{"name": "error-rate", "successCondition": condition}]},
        "status": {
            "phase": phase,
            "completedAt": at(100 + len(name)),
            "metricResults": [
                {
                    "name": "error-rate",
                    "phase": phase,
                    "measurements": [{"phase": "Successful", "value": f"[{v}]"} for v in values],
                }
            ],
        },
    }
