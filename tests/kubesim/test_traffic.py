"""kubesim's traffic exposition: exact ratios, versions from stableRS, weights, stale pods, knobs."""

from __future__ import annotations

import re

import pytest

from kubesim.controller.common import PODS, REPLICA_SETS, ROLLOUTS, Cache
from kubesim.traffic import TrafficError, TrafficModel, latency_cdf, parse_traffic


def _cache(canary_pods: int = 1, stable_pods: int = 3) -> Cache:
    cache = Cache([PODS, REPLICA_SETS, ROLLOUTS])
    cache.apply(
        "ADDED",
        ROLLOUTS,
        {
            "metadata": {"namespace": "ns", "name": "web", "uid": "r"},
            "spec": {"strategy": {"canary": {}}},
            "status": {"stableRS": "s1"},
        },
    )
    for h in ("s1", "c2"):
        cache.apply(
            "ADDED",
            REPLICA_SETS,
            {
                "metadata": {
                    "namespace": "ns",
                    "name": f"web-{h}",
                    "uid": h,
                    "ownerReferences": [{"kind": "Rollout", "name": "web", "uid": "r", "controller": True}],
                }
            },
        )
    for h, n in (("s1", stable_pods), ("c2", canary_pods)):
        for i in range(n):
            cache.apply(
                "ADDED",
                PODS,
                {
                    "metadata": {
                        "namespace": "ns",
                        "name": f"web-{h}-{i}",
                        "labels": {"rollouts-pod-template-hash": h},
                        "ownerReferences": [
                            {"kind": "ReplicaSet", "name": f"web-{h}", "uid": h, "controller": True}
                        ],
                    },
                    "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
                },
            )
    return cache


def _sum(text: str, **labels: str) -> float:
    total = 0.0
    for line in text.splitlines():
        if line.startswith("http_requests_total{") and all(f'{k}="{v}"' in line for k, v in labels.items()):
            total += float(line.rsplit(" ", 1)[1])
    return total


def test_counters_integrate_the_scenario_rates_exactly() -> None:
    clock = [100.0]
    profile = parse_traffic({"rollout": "web", "rps": 40, "canary": {"error_rate": 0.3}}, "t", {"web": "ns"})
    model = TrafficModel(_cache(), [profile], sim_elapsed=lambda: 0.0, wall=lambda: clock[0])
    assert _sum(model.exposition()) == 0  # pods are born with zeroed counters
    clock[0] += 10
    text = model.exposition()
    assert _sum(text, version="canary") == pytest.approx(100)  # 1 of 4 pods: 10 rps for 10 s
    assert _sum(text, version="stable") == pytest.approx(300)
    errors = _sum(text, version="canary", status="500") + _sum(text, version="canary", status="503")
    assert errors / _sum(text, version="canary") == pytest.approx(0.3)
    assert 'rollouts_pod_template_hash="c2"' in text and "http_request_duration_seconds_bucket" in text


def test_changes_apply_at_scenario_time_and_knobs_override() -> None:
    now = [0.0]
    profile = parse_traffic(
        {"rollout": "web", "rps": 10, "changes": [{"at": 20, "rps": 0}]}, "t", {"web": "ns"}
    )
    model = TrafficModel(_cache(), [profile], sim_elapsed=lambda: now[0], wall=lambda: now[0])
    assert profile.at(25)[0] == 0 and profile.at(5)[0] == 10
    model.set_knobs("ns", "web", canary_error_rate=0.5)
    with pytest.raises(TrafficError, match="unknown knob"):
        model.set_knobs("ns", "web", canary_colour=1)


def test_bad_traffic_entries_name_the_field() -> None:
    with pytest.raises(TrafficError, match=r"t\.canary\.error_rate: expected a number in \[0, 1\]"):
        parse_traffic({"rollout": "web", "canary": {"error_rate": 3}}, "t", {"web": "ns"})
    with pytest.raises(TrafficError, match="no rollout named 'nope'"):
        parse_traffic({"rollout": "nope"}, "t", {"web": "ns"})


def test_the_latency_histogram_is_a_lognormal_around_the_median() -> None:
    assert latency_cdf(0.05, 0.05) == pytest.approx(0.5)
    assert re.match(r"^\d", str(latency_cdf(0.1, 0.05)))
