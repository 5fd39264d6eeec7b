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
from dashboard.domain.kube_events import event_rows
from dashboard.domain.objects import dig_str
from dashboard.domain.observations import RolloutObjects, observe, weight_writer
from dashboard.domain.rollout_view import rollout_views
from dashboard.kube.cache import (
    EVENT_KINDS,
    EVENT_SQUEEZE,
    PROJECTIONS,
    ClusterCache,
    Kept,
    Listing,
    Packed,
    _event_subject,
    _event_when,
    _involved_uid,
    project,
)
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

# Every constructed Flagger canary of the upstream fixtures (a new one is checked without editing this file).
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
    assert set(PROJECTIONS) == {
        "Rollout",
        "ReplicaSet",
        "Pod",
        "Event",
        "RolloutEvent",
        "ReplicaSetEvent",
        "PodEvent",
        "AnalysisRunEvent",
    }


def kube_events() -> list[dict[str, Any]]:
    """Events as the API server sends them, in every shape the view reads: core/v1 with timestamps, with
    only an eventTime or a series (events.k8s.io/v1 written through core/v1), about the Rollout and about
    each kind of child, with managedFields and the fields nobody reads."""
    managed = [{"manager": "kubelet", "operation": "Update", "fieldsV1": {"f:reason": {}}}]

    def event(name: str, kind: str, about: str, uid: str, **fields: Any) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {
                "name": name,
                "namespace": "shop",
                "uid": f"e-{name}",
                "resourceVersion": "7",
                "creationTimestamp": "2026-12-01T10:00:00Z",
                "managedFields": managed,
            },
            "involvedObject": {
                "kind": kind,
                "namespace": "shop",
                "name": about,
                "uid": uid,
                "apiVersion": "v1",
                "resourceVersion": "5",
                "fieldPath": "spec.containers{web}",
            },
            "reportingInstance": "node-1",
            "action": "Binding",
            "related": {"kind": "Node", "name": "node-1"},
            **fields,
        }

    return [
        event(
            "a",
            "Rollout",
            "checkout",
            "u-1",
            reason="RolloutUpdated",
            message="updated",
            type="Normal",
            count=2,
            firstTimestamp="2026-12-01T10:00:01Z",
            lastTimestamp="2026-12-01T10:00:02Z",
            source={"component": "rollouts-controller", "host": "node-1"},
        ),
        event(
            "b",
            "Rollout",
            "checkout",
            "",
            reason="RolloutPaused",
            message="paused",
            type="Normal",
            eventTime="2026-12-01T10:00:03.000000Z",
            reportingComponent="rollouts-controller",
        ),
        event(
            "c",
            "ReplicaSet",
            "checkout-abc",
            "rs-1",
            reason="SuccessfulCreate",
            message="created",
            series={"count": 4, "lastObservedTime": "2026-12-01T10:00:04.000000Z"},
            reportingController="replicaset-controller",
        ),
        event(
            "d",
            "Pod",
            "checkout-abc-x",
            "pod-1",
            reason="BackOff",
            note="back-off restarting",
            type="Warning",
            firstTimestamp="2026-12-01T10:00:05Z",
            source={"component": "kubelet"},
        ),
        event(
            "e",
            "AnalysisRun",
            "checkout-abc-2",
            "ar-1",
            reason="MetricFailed",
            message="failed",
            lastTimestamp="2026-12-01T10:00:06Z",
        ),
    ]


def test_events_show_the_same_rows_from_what_the_cache_keeps() -> None:
    rollout = {"kind": "Rollout", "metadata": {"name": "checkout", "namespace": "shop", "uid": "u-1"}}
    children = {
        "rs-1": ("ReplicaSet", "checkout-abc"),
        "pod-1": ("Pod", "checkout-abc-x"),
        "ar-1": ("AnalysisRun", "checkout-abc-2"),
    }
    events = kube_events()
    kept = [project(kind, copy.deepcopy(e)) for e in events for kind in ("RolloutEvent",)]
    rows = event_rows(rollout, events, children)
    assert len(rows) == len(events)
    assert event_rows(rollout, kept, children) == rows
    for kind in ("Event", "RolloutEvent", "ReplicaSetEvent", "PodEvent", "AnalysisRunEvent"):
        assert [project(kind, copy.deepcopy(e)) for e in events] == kept


def test_events_are_indexed_the_same_from_what_the_cache_keeps() -> None:
    for event in kube_events():
        kept = project("PodEvent", copy.deepcopy(event))
        assert _event_when(kept) == _event_when(event) > 0
        for kind in ("Rollout", "ReplicaSet", "Pod", "AnalysisRun"):
            assert _involved_uid(kept, kind) == _involved_uid(event, kind)
            assert _event_subject(kept, kind) == _event_subject(event, kind)


def test_of_an_event_only_what_is_read_is_kept() -> None:
    kept = project("PodEvent", kube_events()[0])
    assert kept["metadata"] == {
        "name": "a",
        "namespace": "shop",
        "uid": "e-a",
        "resourceVersion": "7",
        "creationTimestamp": "2026-12-01T10:00:00Z",
    }
    assert kept["involvedObject"] == {
        "kind": "Rollout",
        "namespace": "shop",
        "name": "checkout",
        "uid": "u-1",
    }
    assert kept["source"] == {"component": "rollouts-controller"}
    assert not {"reportingInstance", "action", "related"} & kept.keys()


POD = {
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "shop", "uid": "u"},
    "spec": {"containers": [{"name": "c"}]},
    "status": {"phase": "Running", "containerStatuses": [{"name": "c", "state": {"running": {}}}]},
}


def test_a_fleets_objects_are_kept_packed_and_each_read_is_a_new_copy() -> None:
    cache = ClusterCache()
    cache.apply("Pod", "ADDED", copy.deepcopy(POD))
    assert type(cache.objects["Pod"]) is Packed and type(cache.objects["Rollout"]) is Packed
    first, second = cache.get("Pod", "u"), cache.get("Pod", "u")
    assert first == second == POD and first is not second
    assert first is not None
    first["status"]["phase"] = "Failed"  # a reader's copy: the cache does not see it
    assert cache.get("Pod", "u") == POD


def test_events_are_kept_compressed_and_read_back_whole() -> None:
    cache = ClusterCache()
    event = project("PodEvent", kube_events()[0])
    text = orjson.dumps(event)
    cache.objects["PodEvent"]["e-1"] = event
    store = cache.objects["PodEvent"]
    assert type(store) is Packed
    kept = store.kept("e-1")
    assert kept is not None and len(kept) < len(text) / 2  # what makes them worth compressing
    assert store["e-1"] == event and store.get("e-1") == event
    assert store.json_of(kept) == text
    again = ClusterCache().objects["PodEvent"]
    again["e-1"] = event
    assert type(again) is Packed and again.kept("e-1") == kept  # the same text, the same bytes


def test_every_kind_of_event_is_compressed_and_nothing_else() -> None:
    cache = ClusterCache()
    for kind, store in cache.objects.items():
        squeezed = type(store) is Packed and store._squeeze is EVENT_SQUEEZE
        assert squeezed == (kind in EVENT_KINDS), kind


def test_a_compressed_event_reads_back_whatever_it_says() -> None:
    odd = {"metadata": {"uid": "x"}, "message": "ünïcode \" quotes\n and " + "a long message " * 200}
    text = orjson.dumps(odd)
    assert EVENT_SQUEEZE.expand(EVENT_SQUEEZE.shrink(text)) == text
    assert EVENT_SQUEEZE.expand(EVENT_SQUEEZE.shrink(b"")) == b""


@pytest.mark.parametrize(
    "damaged",
    [
        (1 << 31).to_bytes(4, "little") + b"x",  # states 2 GiB: refused before anything is allocated
        EVENT_SQUEEZE.shrink(orjson.dumps(project("PodEvent", kube_events()[0])))[:-5],  # cut short
        b"\x01",  # not even its size
    ],
)
def test_bytes_that_are_not_a_compressed_event_are_refused_by_name(damaged: bytes) -> None:
    with pytest.raises(ValueError, match="cannot be decompressed"):
        EVENT_SQUEEZE.expand(damaged)


def test_an_object_orjson_cannot_write_is_kept_as_it_is() -> None:
    cache = ClusterCache()
    pod = {**copy.deepcopy(POD), "spec": {"containers": [{"name": "c"}]}, "status": {"phase": 2**70}}
    cache.apply("Pod", "ADDED", pod)
    assert cache.get("Pod", "u") == pod


def test_an_object_projected_on_arrival_is_not_projected_again() -> None:
    cache = ClusterCache()
    kept = project("Pod", copy.deepcopy(POD))
    assert isinstance(kept, Kept)
    kept["spec"]["nodeName"] = "n"  # as if the projection had kept it
    _, changes, skipped = cache.replace("Pod", None, [kept])
    assert cache.get("Pod", "u") == kept and changes == [("ADDED", kept)] and not skipped
    whole = {**copy.deepcopy(POD), "metadata": {**POD["metadata"], "uid": "v", "generateName": "p-"}}
    cache.replace("Pod", None, [kept, whole])
    assert cache.get("Pod", "v") == project("Pod", whole)


def test_a_list_applied_page_by_page_is_the_list_applied_whole() -> None:
    pods = [
        {
            **copy.deepcopy(POD),
            "metadata": {**POD["metadata"], "uid": f"u{i}", "name": f"p{i}", "resourceVersion": "1"},
        }
        for i in range(5)
    ]
    whole, paged = ClusterCache(), ClusterCache()
    for cache in (whole, paged):
        cache.replace(
            "Pod", None, [*pods[:3], {**pods[4], "metadata": {**pods[4]["metadata"], "uid": "gone"}}]
        )
    whole_affected, whole_changes, _ = whole.replace("Pod", None, pods)
    listing = Listing("Pod", None)
    changes = paged.list_page(listing, pods[:2])[0] + paged.list_page(listing, pods[2:])[0]
    changes += paged.list_done(listing)
    assert dict(paged.objects["Pod"]) == dict(whole.objects["Pod"])
    assert "gone" not in paged.objects["Pod"] and listing.affected == whole_affected
    assert changes == whole_changes and [t for t, _ in changes] == ["ADDED", "ADDED", "DELETED"]
