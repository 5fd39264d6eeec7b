"""``traffic-ahead-of-capacity``: 100 % of traffic to a canary with 1 of 4 pods available (issue 16 §8)."""

from __future__ import annotations

from typing import Any

from dashboard.domain.findings import detect_findings
from dashboard.domain.observations import RolloutObjects
from tests.domain.findings.builders import T0, UID, at, rollout


def _rs(hash_: str, replicas: int, available: int, revision: int) -> dict[str, Any]:
    return {
        "kind": "ReplicaSet",
        "metadata": {
            "name": f"checkout-{hash_}",
            "namespace": "shop",
            "uid": f"rs-{hash_}",
            "labels": {"rollouts-pod-template-hash": hash_},
            "annotations": {"rollout.argoproj.io/revision": str(revision)},
            "ownerReferences": [{"uid": UID, "kind": "Rollout", "name": "checkout", "controller": True}],
            "creationTimestamp": at(revision),
        },
        "spec": {"replicas": replicas},
        "status": {"replicas": replicas, "availableReplicas": available},
    }


def _codes(weight: int, available: int) -> list[str]:
    status = {
        "currentPodHash": "bbb",
        "stableRS": "aaa",
        "currentStepIndex": 0,
        "phase": "Progressing",
        "canary": {"weights": {"canary": {"weight": weight}, "stable": {"weight": 100 - weight}}},
    }
    objects = RolloutObjects(rollout(status), [_rs("aaa", 4, 4, 1), _rs("bbb", 4, available, 2)])
    return [f.code for f in detect_findings(None, objects=objects, now=T0)]


def test_all_traffic_to_one_of_four_canary_pods_is_flagged() -> None:
    assert "traffic-ahead-of-capacity" in _codes(100, 1)


def test_traffic_the_canary_pods_can_carry_is_not_flagged() -> None:
    assert "traffic-ahead-of-capacity" not in _codes(50, 2)
    assert "traffic-ahead-of-capacity" not in _codes(100, 4)
