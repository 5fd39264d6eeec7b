from __future__ import annotations

import contextlib
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dashboard.domain.kube_events import EventFacts
from dashboard.kube.cache import ClusterCache, MalformedObject, RolloutInputs


def obj(
    kind: str, name: str, uid: str, owner: str | None = None, rv: str = "1", **extra: Any
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": "shop",
        "uid": uid,
        "resourceVersion": rv,
        "managedFields": [{"manager": "x"}],
    }
    if owner:
        meta["ownerReferences"] = [{"uid": owner, "kind": "Owner", "name": "o"}]
    return {"kind": kind, "metadata": meta, **extra}


def filled() -> ClusterCache:
    cache = ClusterCache()
    cache.apply("Rollout", "ADDED", obj("Rollout", "web", "ro"))
    cache.apply("ReplicaSet", "ADDED", obj("ReplicaSet", "web-a", "rs-a", "ro"))
    cache.apply("Pod", "ADDED", obj("Pod", "web-a-1", "pod-1", "rs-a"))
    cache.apply("Experiment", "ADDED", obj("Experiment", "web-exp", "exp", "ro"))
    cache.apply("AnalysisRun", "ADDED", obj("AnalysisRun", "web-ar", "ar-exp", "exp"))
    return cache


def test_a_change_to_any_child_finds_its_rollout() -> None:
    cache = filled()
    assert cache.apply("Pod", "MODIFIED", obj("Pod", "web-a-1", "pod-1", "rs-a", rv="2")) == {"ro"}
    assert cache.apply("AnalysisRun", "MODIFIED", obj("AnalysisRun", "web-ar", "ar-exp", "exp", "2")) == {
        "ro"
    }
    assert cache.apply("Pod", "DELETED", obj("Pod", "web-a-1", "pod-1", "rs-a")) == {"ro"}


def test_children_that_arrive_before_their_owner_are_found_later() -> None:
    cache = ClusterCache()
    assert cache.apply("Pod", "ADDED", obj("Pod", "p", "pod", "rs")) == set()
    assert cache.apply("ReplicaSet", "ADDED", obj("ReplicaSet", "rs", "rs", "ro")) == set()
    assert cache.apply("Rollout", "ADDED", obj("Rollout", "web", "ro")) == {"ro"}
    inputs = cache.inputs("ro")
    assert inputs is not None
    assert [p["metadata"]["name"] for p in inputs.pods] == ["p"]


def test_inputs_gather_the_rollouts_objects_without_managed_fields() -> None:
    inputs = filled().inputs("ro")
    assert inputs is not None
    assert [r["metadata"]["uid"] for r in inputs.replicasets] == ["rs-a"]
    assert [a["metadata"]["uid"] for a in inputs.analysisruns] == ["ar-exp"]
    assert "managedFields" not in inputs.rollout["metadata"]


def test_a_relist_applies_only_differences_and_deletes_what_is_gone() -> None:
    cache = filled()
    affected, changes, skipped = cache.replace("Pod", None, [obj("Pod", "web-a-2", "pod-2", "rs-a")])
    assert affected == {"ro"}
    assert sorted(t for t, _ in changes) == ["ADDED", "DELETED"]
    assert skipped == []
    again = cache.replace("Pod", None, [obj("Pod", "web-a-2", "pod-2", "rs-a")])
    assert again == (set(), [], [])


def test_applications_link_to_the_rollouts_they_list() -> None:
    cache = filled()
    app = obj(
        "Application",
        "web-app",
        "app",
        status={"resources": [{"kind": "Rollout", "namespace": "shop", "name": "web"}]},
    )
    assert cache.apply("Application", "ADDED", app) == {"ro"}
    inputs = cache.inputs("ro")
    assert inputs is not None and len(inputs.applications) == 1


def test_a_malformed_object_is_a_clear_error() -> None:
    with pytest.raises(MalformedObject, match=r"Rollout shop/web has no valid metadata\.uid"):
        ClusterCache().apply("Rollout", "ADDED", {"metadata": {"name": "web", "namespace": "shop"}})


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=10), children, max_size=3)
    ),
    max_leaves=10,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(["Rollout", "ReplicaSet", "Pod", "AnalysisRun", "Experiment", "Application"]),
    metadata=st.one_of(
        json_values,
        st.fixed_dictionaries(
            {
                "name": st.one_of(st.text(max_size=5), st.integers(), st.just("x" * 100_000)),
                "uid": st.one_of(st.uuids().map(str), st.integers(), st.none()),
                "namespace": st.one_of(st.just("shop"), st.integers()),
                "ownerReferences": st.one_of(st.just([{"uid": "ro"}]), json_values),
            }
        ),
    ),
    spec=json_values,
    status=json_values,
    api_version=st.sampled_from(["argoproj.io/v1alpha1", "argoproj.io/v9", "apps/v1", 42]),
)
def test_malformed_objects_never_escape_as_anything_but_malformed(
    kind: str, metadata: Any, spec: Any, status: Any, api_version: Any
) -> None:
    cache = filled()
    with contextlib.suppress(MalformedObject):
        cache.apply(
            kind,
            "ADDED",
            {"apiVersion": api_version, "kind": kind, "metadata": metadata, "spec": spec, "status": status},
        )
    assert cache.inputs("ro") is not None


T = "2026-12-01T10:00:00Z"


def child_event(name: str, kind: str, about: str, when: str = T) -> dict[str, Any]:
    return obj("Event", name, f"ev-{name}", involvedObject={"kind": kind, "uid": about, "name": "x"},
               lastTimestamp=when)  # fmt: skip


def event_names(inputs: RolloutInputs) -> list[str]:
    """The names of the Events the cache gives a build (each as its facts, read once)."""
    assert all(isinstance(e, EventFacts) for e in inputs.events)
    return [e.name for e in inputs.events if isinstance(e, EventFacts)]


def test_events_about_its_pods_replicasets_and_runs_reach_the_rollout_and_stay_bounded() -> None:
    cache = filled()
    assert cache.apply("PodEvent", "ADDED", child_event("started", "Pod", "pod-1")) == {"ro"}
    # A recording replays them under their API kind; the cache tells them apart by involvedObject.
    assert cache.apply("Event", "ADDED", child_event("made", "ReplicaSet", "rs-a")) == {"ro"}
    assert cache.apply("Event", "ADDED", child_event("m", "AnalysisRun", "ar-exp")) == {"ro"}
    for i in range(15):
        later = f"2026-12-01T10:01:{i:02d}Z"
        cache.apply("PodEvent", "ADDED", child_event(f"probe{i}", "Pod", "pod-1", later))
    inputs = cache.inputs("ro")
    assert inputs is not None
    names = event_names(inputs)
    assert "made" in names and "m" in names and "started" not in names  # the oldest pod event left
    assert sum(n.startswith("probe") for n in names) == 10
    assert cache.apply("PodEvent", "DELETED", child_event("probe14", "Pod", "pod-1", "x")) == {"ro"}


def test_an_event_about_a_pod_not_seen_yet_is_found_when_the_pod_arrives() -> None:
    cache = ClusterCache()
    cache.apply("Rollout", "ADDED", obj("Rollout", "web", "ro"))
    cache.apply("ReplicaSet", "ADDED", obj("ReplicaSet", "web-a", "rs-a", "ro"))
    assert cache.apply("PodEvent", "ADDED", child_event("early", "Pod", "pod-9")) == set()
    assert cache.apply("Pod", "ADDED", obj("Pod", "web-a-9", "pod-9", "rs-a")) == {"ro"}
    inputs = cache.inputs("ro")
    assert inputs is not None and event_names(inputs) == ["early"]
