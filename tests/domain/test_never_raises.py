"""Property tests: malformed, partial and hostile objects never make the model raise."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dashboard.domain import build_rollout_view, rollout_views
from dashboard.domain.argocd_health import analysis_run_health, experiment_health, rollout_health
from dashboard.domain.experiments import experiment_view
from dashboard.domain.render_text import render_experiment, render_rollout

NOW = datetime(2026, 1, 1, tzinfo=UTC)
KEYS = [
    "kind",
    "metadata",
    "spec",
    "status",
    "name",
    "namespace",
    "uid",
    "generation",
    "annotations",
    "labels",
    "ownerReferences",
    "strategy",
    "canary",
    "blueGreen",
    "steps",
    "setWeight",
    "pause",
    "duration",
    "trafficRouting",
    "maxTrafficWeight",
    "replicas",
    "paused",
    "restartAt",
    "template",
    "containers",
    "image",
    "currentStepIndex",
    "observedGeneration",
    "phase",
    "message",
    "conditions",
    "type",
    "reason",
    "pauseConditions",
    "startTime",
    "controllerPause",
    "abort",
    "stableRS",
    "currentPodHash",
    "updatedReplicas",
    "availableReplicas",
    "readyReplicas",
    "weights",
    "weight",
    "activeSelector",
    "previewSelector",
    "metricResults",
    "measurements",
    "metadata",
    "job-name",
    "metrics",
    "count",
    "creationTimestamp",
    "rollouts-pod-template-hash",
    "rollout.argoproj.io/revision",
    "scale-down-deadline",
    "containerStatuses",
    "initContainerStatuses",
    "state",
    "waiting",
    "terminated",
    "running",
    "ready",
    "restartCount",
    "deletionTimestamp",
    "pingPong",
    "stablePingPong",
    "workloadRef",
    "templateStatuses",
]
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True),
    st.sampled_from(
        ["", "0", "-1", "7", "abc", "Running", "Paused", "2026-01-01T00:00:00Z", "1h", "0x10", "u1"]
    ),
    st.text(max_size=20),
)
VALUES = st.recursive(
    SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.sampled_from(KEYS), children, max_size=6),
    ),
    max_leaves=25,
)
OBJECTS = st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=8)


def _rollout_like(obj: dict[str, Any]) -> dict[str, Any]:
    return {**obj, "kind": "Rollout", "metadata": obj.get("metadata", {"uid": "u1"})}


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rollout=OBJECTS, children=st.lists(OBJECTS, max_size=6))
def test_building_and_rendering_a_view_never_raises(
    rollout: dict[str, Any], children: list[dict[str, Any]]
) -> None:
    view = build_rollout_view(
        _rollout_like(rollout),
        replicasets=children,
        pods=children,
        analysisruns=children,
        experiments=children,
        deployment=children[0] if children else None,
        now=NOW,
    )

    json.dumps(view.to_dict(), allow_nan=True)
    render_rollout(view)


@settings(max_examples=80, deadline=None)
@given(objects=st.lists(st.one_of(OBJECTS, VALUES), max_size=8))
def test_grouping_a_bag_of_anything_never_raises(objects: list[Any]) -> None:
    rollout_views(
        [_rollout_like(o) if isinstance(o, dict) and o.get("kind") else o for o in objects], now=NOW
    )


@settings(max_examples=150, deadline=None)
@given(obj=st.one_of(OBJECTS, VALUES))
def test_argocd_health_never_raises(obj: Any) -> None:
    if isinstance(obj, dict):
        rollout_health(obj)
        analysis_run_health(obj)
        experiment_health(obj)


@settings(max_examples=80, deadline=None)
@given(experiment=OBJECTS, children=st.lists(OBJECTS, max_size=4))
def test_experiment_views_never_raise(experiment: dict[str, Any], children: list[dict[str, Any]]) -> None:
    render_experiment(experiment_view(experiment, children, children, children, NOW))


def test_huge_strings_and_numbers_are_fine() -> None:
    big = "x" * 200_000
    rollout = {
        "metadata": {
            "name": big,
            "uid": "u",
            "generation": 2**80,
            "creationTimestamp": "9999-12-31T23:59:59Z",
        },
        "spec": {"replicas": 2**80, "strategy": {"canary": {"steps": [{"setWeight": 2**80}] * 3}}},
        "status": {"currentStepIndex": 2**80, "observedGeneration": "9" * 400, "message": big},
    }

    view = build_rollout_view(rollout, now=NOW)

    assert view.name == big
    render_rollout(view)


def test_numbers_beyond_int64_read_as_absent_so_the_view_encodes_as_the_watcher_does() -> None:
    rollout = {
        "metadata": {"name": "big", "uid": "u", "namespace": "shop"},
        "spec": {"replicas": -(2**63) - 1, "strategy": {"canary": {"steps": [{"setWeight": 2.0**70}]}}},
        "status": {"currentStepIndex": 2**63},
    }

    view = build_rollout_view(rollout, now=NOW).to_dict()

    without_replicas = build_rollout_view({**rollout, "spec": {}}, now=NOW).to_dict()
    assert view["replicas"]["desired"] == without_replicas["replicas"]["desired"]
    assert view["currentStepIndex"] is None
    orjson.dumps(view)
