"""What the cache keeps of an object (``cache.project``) must show exactly what the whole object shows.

Every view the watcher publishes is built from the kept objects; these tests build the same documents
(view, Argo CD reading, findings with history) from the real fixtures once whole and once projected, and
compare the bytes.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from dashboard.actions.availability import action_availability
from dashboard.domain.applications import gitops_for_rollout
from dashboard.domain.findings import Thresholds, detect_findings
from dashboard.domain.flagger import canary_view
from dashboard.domain.objects import dig_str
from dashboard.domain.observations import RolloutObjects, observe, weight_writer
from dashboard.domain.rollout_view import rollout_views
from dashboard.kube.cache import PROJECTIONS, ClusterCache, project
from dashboard.kube.loading import load_paths
from tests.conftest import SHARED_FIXTURES
from tests.domain.upstream_fixtures import NOW, TESTDATA, load_set

UPSTREAM_SETS = (
    "blue-green",
    "canary",
    "experiment-analysis",
    "experiment-step",
    "rollout-aborted",
    "rollout-invalid",
)
LATER = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)  # long after every fixture: time-based findings fire

# Every constructed Flagger canary of the shared fixtures (a new one is checked without editing this file).
FLAGGER_CANARIES = sorted(p.name for p in (SHARED_FIXTURES / "flagger" / "constructed").glob("canary-*.yaml"))


def projected(objects: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [project(str(obj.get("kind")), copy.deepcopy(obj)) for obj in objects]


def shown(objects: Sequence[Mapping[str, Any]], now: datetime) -> bytes:
    """Every Rollout's view as the watcher publishes it (view, ``gitops``, findings from its history, the
    action bar)."""
    by_namespace: dict[str, dict[str, list[Mapping[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for obj in objects:
        by_namespace[dig_str(obj, "metadata", "namespace")][str(obj.get("kind"))].append(obj)
    rollouts = [obj for obj in objects if obj.get("kind") == "Rollout"]
    documents = []
    for rollout, view in zip(rollouts, rollout_views(objects, now=now, cluster="prod"), strict=True):
        document = view.to_dict()
        near = by_namespace[dig_str(rollout, "metadata", "namespace")]
        applications = [obj for obj in objects if obj.get("kind") == "Application"]
        gitops = gitops_for_rollout(applications, view.namespace, view.name)
        if gitops is not None:
            document["gitops"] = gitops
        around = RolloutObjects(rollout, near["ReplicaSet"], near["AnalysisRun"], near["Pod"], applications)
        history = observe(observe(None, None, around, now), None, around, now)
        findings = detect_findings(
            document, objects=around, history=history, now=now, thresholds=Thresholds(), baselines=None
        )
        document["findings"] = [finding.to_dict() for finding in findings]
        document["availableActions"] = action_availability(rollout, near["ReplicaSet"], now)
        documents.append(document)
    return orjson.dumps(documents, default=str)


def argo_cd_objects(fixtures: Path) -> list[dict[str, Any]]:
    result = load_paths([fixtures / "argo-cd"])
    return [dict(item.object) for item in result.objects if isinstance(item.object, Mapping)]


@pytest.mark.parametrize("name", UPSTREAM_SETS)
@pytest.mark.parametrize("now", [NOW, LATER])
def test_upstream_rollouts_show_the_same_from_what_the_cache_keeps(
    shared_fixtures: Path, name: str, now: datetime
) -> None:
    assert (shared_fixtures / TESTDATA / name).is_dir()
    objects = load_set(shared_fixtures, name)
    assert b'"name"' in shown(objects, now)
    assert shown(projected(objects), now) == shown(objects, now)


@pytest.mark.parametrize("now", [NOW, LATER])
def test_argo_cd_rollouts_and_applications_show_the_same_from_what_the_cache_keeps(
    shared_fixtures: Path, now: datetime
) -> None:
    objects = argo_cd_objects(shared_fixtures)
    assert sum(obj.get("kind") == "Rollout" for obj in objects) > 20
    assert shown(projected(objects), now) == shown(objects, now)


def test_projection_drops_what_nobody_reads_of_the_fleets_kinds(shared_fixtures: Path) -> None:
    objects = load_set(shared_fixtures, "canary") + argo_cd_objects(shared_fixtures)
    kept = projected(objects)
    assert sum(len(orjson.dumps(o)) for o in kept) < 0.9 * sum(len(orjson.dumps(o)) for o in objects)
    pods = [o for o in kept if o.get("kind") == "Pod"]
    assert pods and all(set(p.get("spec", {})) <= {"containers", "initContainers"} for p in pods)


def test_projecting_twice_changes_nothing_more(shared_fixtures: Path) -> None:
    once = projected(load_set(shared_fixtures, "canary") + argo_cd_objects(shared_fixtures))
    assert projected(once) == once


def test_the_canary_weights_writer_survives_projection_and_nothing_else_of_managed_fields() -> None:
    weight = {"f:status": {"f:canary": {"f:weights": {"f:canary": {"f:weight": {}}}}}}
    rollout = {
        "kind": "Rollout",
        "metadata": {
            "name": "web",
            "uid": "ro",
            "managedFields": [
                {"manager": "kubectl", "time": "2026-11-29T10:00:00Z", "fieldsV1": {"f:spec": {}}},
                {"manager": "rollouts-controller", "time": "2026-11-29T10:01:00Z", "fieldsV1": weight},
                {"manager": "argocd-controller", "time": "2026-11-29T10:02:00Z", "fieldsV1": weight},
            ],
        },
    }
    kept = project("Rollout", rollout)
    assert weight_writer(kept) == weight_writer(rollout) == "argocd-controller"
    assert [e["manager"] for e in kept["metadata"]["managedFields"]] == [
        "rollouts-controller",
        "argocd-controller",
    ]


def test_a_rollout_nobody_fought_over_keeps_no_managed_fields() -> None:
    rollout = {
        "kind": "Rollout",
        "metadata": {"name": "web", "uid": "ro", "managedFields": [{"manager": "x"}]},
    }
    assert "managedFields" not in project("Rollout", rollout)["metadata"]


@pytest.mark.parametrize("name", FLAGGER_CANARIES)
def test_flagger_canaries_show_the_same_from_what_the_cache_keeps(shared_fixtures: Path, name: str) -> None:
    constructed = shared_fixtures / "flagger" / "constructed"
    canary = yaml.safe_load((constructed / name).read_text())
    events = yaml.safe_load((constructed / "events-podinfo-failed-threshold.yaml").read_text())["items"]

    def view(canary: Mapping[str, Any], events: list[dict[str, Any]]) -> bytes:
        return orjson.dumps(
            canary_view(canary, events=events, now=NOW, cluster="prod").to_dict(), default=str
        )

    kept = view(project("Canary", canary), [project("Event", e) for e in events])
    assert kept == view(canary, events)


def test_malformed_parts_are_kept_as_they_came_for_the_domain_model_to_judge() -> None:
    pod = {
        "kind": "Pod",
        "metadata": {"name": "p", "uid": "u"},
        "spec": "oops",
        "status": {"containerStatuses": 3},
    }
    assert project("Pod", pod) == pod


def test_the_cache_holds_the_projection() -> None:
    cache = ClusterCache()
    pod = {
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "shop", "uid": "u", "generateName": "p-"},
        "spec": {
            "containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80}]}],
            "nodeName": "n",
        },
        "status": {"phase": "Running", "podIP": "10.0.0.1"},
    }
    cache.apply("Pod", "ADDED", pod)
    assert (
        cache.get("Pod", "u")
        == project("Pod", pod)
        == {
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "shop", "uid": "u"},
            "spec": {"containers": [{"name": "c"}]},
            "status": {"phase": "Running"},
        }
    )
    assert set(PROJECTIONS) == {"Rollout", "ReplicaSet", "Pod"}
