"""Kubernetes Events about a rollout: the view's ``events`` rows and the timeline's ``kube.event`` entries."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from dashboard.domain.kube_events import EVENTS_IN_VIEW, event_rows
from dashboard.domain.timeline import KUBE_EVENT, timeline_basis, timeline_events
from dashboard.web.rollout import event_icon

ROLLOUT = {"kind": "Rollout", "metadata": {"name": "checkout", "namespace": "shop", "uid": "u-1"}}
AT = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)


def event(
    event_name: str, reason: str, message: str, *, at: str, count: int = 1, **involved: Any
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": event_name, "namespace": "shop"},
        "involvedObject": {
            "kind": "Rollout",
            "namespace": "shop",
            "name": "checkout",
            "uid": "u-1",
            **involved,
        },
        "reason": reason,
        "message": message,
        "type": "Warning" if reason == "RolloutAborted" else "Normal",
        "count": count,
        "firstTimestamp": at,
        "lastTimestamp": at,
        "source": {"component": "rollouts-controller"},
    }


def test_rows_are_the_rollouts_own_events_oldest_first() -> None:
    events = [
        event(
            "b",
            "RolloutStepCompleted",
            "Rollout step 1/2 completed (setWeight: 25)",
            at="2026-12-01T10:00:05Z",
        ),
        event("a", "RolloutUpdated", "Rollout updated to revision 2", at="2026-12-01T10:00:00Z"),
        event("other", "RolloutUpdated", "x", at="2026-12-01T10:00:01Z", name="payments"),
        event("old-uid", "RolloutUpdated", "x", at="2026-12-01T10:00:01Z", uid="u-0"),
        {
            **event("rs", "x", "x", at="2026-12-01T10:00:01Z"),
            "involvedObject": {"kind": "ReplicaSet", "name": "checkout"},
        },
    ]
    rows = event_rows(ROLLOUT, events)
    assert [(r["name"], r["reason"], r["at"]) for r in rows] == [
        ("a", "RolloutUpdated", "2026-12-01T10:00:00Z"),
        ("b", "RolloutStepCompleted", "2026-12-01T10:00:05Z"),
    ]
    assert rows[1] == {
        "name": "b",
        "type": "Normal",
        "reason": "RolloutStepCompleted",
        "message": "Rollout step 1/2 completed (setWeight: 25)",
        "count": 1,
        "at": "2026-12-01T10:00:05Z",
        "object": {"kind": "Rollout", "name": "checkout"},
        "source": "rollouts-controller",
    }


def test_only_the_newest_events_are_kept_in_the_view() -> None:
    events = [
        event(f"e{i:03d}", "ScalingReplicaSet", str(i), at=f"2026-12-01T10:{i // 60:02d}:{i % 60:02d}Z")
        for i in range(30)
    ]
    rows = event_rows(ROLLOUT, events)
    assert len(rows) == EVENTS_IN_VIEW and rows[0]["message"] == str(30 - EVENTS_IN_VIEW)


def view(*events: dict[str, Any]) -> dict[str, Any]:
    return {
        "cluster": "c",
        "namespace": "shop",
        "name": "checkout",
        "currentPodHash": "abc",
        "events": list(events),
    }


def test_the_timeline_shows_each_new_event_once_and_each_repeat() -> None:
    first = event_rows(
        ROLLOUT, [event("a", "RolloutUpdated", "Rollout updated to revision 2", at="2026-12-01T10:00:00Z")]
    )
    later = event_rows(
        ROLLOUT,
        [
            event("a", "RolloutUpdated", "Rollout updated to revision 2", at="2026-12-01T10:00:00Z"),
            event("b", "RolloutAborted", "Rollout aborted update to revision 2", at="2026-12-01T10:00:09Z"),
        ],
    )
    got = [e for e in timeline_events(view(*first), view(*later), at=AT) if e["kind"] == KUBE_EVENT]
    assert [(e["title"], e["dedupe"], e["data"]["type"]) for e in got] == [
        ("RolloutAborted: Rollout aborted update to revision 2", "b#1", "Warning")
    ]
    assert event_icon(got[0]) == "warning"
    # Recording the same transition again (a relist, a restart) gives the same dedupe key; the basis a
    # watcher keeps is enough to see nothing new.
    assert [
        e
        for e in timeline_events(timeline_basis(view(*later)), view(*later), at=AT)
        if e["kind"] == KUBE_EVENT
    ] == []
    repeated = event_rows(
        ROLLOUT,
        [
            event(
                "b",
                "RolloutAborted",
                "Rollout aborted update to revision 2",
                at="2026-12-01T10:01:00Z",
                count=2,
            )
        ],
    )
    again = [e for e in timeline_events(view(*later), view(*repeated), at=AT) if e["kind"] == KUBE_EVENT]
    assert [e["dedupe"] for e in again] == ["b#2"]


def test_the_cache_files_rollout_events_under_their_rollout_whichever_kind_they_arrive_as() -> None:
    from dashboard.kube.cache import ClusterCache

    cache = ClusterCache()
    rollout = {**ROLLOUT, "apiVersion": "argoproj.io/v1alpha1", "spec": {}, "status": {}}
    cache.apply("Rollout", "ADDED", rollout)
    watched = {**event("a", "RolloutUpdated", "Rollout updated to revision 2", at="2026-12-01T10:00:00Z")}
    watched["metadata"] = {**watched["metadata"], "uid": "e-1"}
    replayed = {
        **event("b", "RolloutPaused", "Rollout is paused (CanaryPauseStep)", at="2026-12-01T10:00:01Z")
    }
    replayed["metadata"] = {**replayed["metadata"], "uid": "e-2"}
    assert cache.apply("RolloutEvent", "ADDED", watched) == {"u-1"}
    assert cache.apply("Event", "ADDED", replayed) == {"u-1"}  # a recording names the API kind
    inputs = cache.inputs("u-1")
    assert inputs is not None
    assert [e["reason"] for e in inputs.view(now=AT, cluster="c")["events"]] == [
        "RolloutUpdated",
        "RolloutPaused",
    ]
    cache.apply("RolloutEvent", "DELETED", watched)
    inputs = cache.inputs("u-1")
    assert inputs is not None
    assert [e["name"] for e in inputs.view(now=AT, cluster="c")["events"]] == ["b"]


def test_the_cache_reads_each_version_of_an_event_once_and_a_new_version_again() -> None:
    from dashboard.kube import cache as cache_module

    cache = cache_module.ClusterCache()
    rollout = {**ROLLOUT, "apiVersion": "argoproj.io/v1alpha1", "spec": {}, "status": {}}
    cache.apply("Rollout", "ADDED", rollout)
    paused = event("p", "RolloutPaused", "Rollout is paused (CanaryPauseStep)", at="2026-12-01T10:00:01Z")
    paused["metadata"] = {**paused["metadata"], "uid": "e-p"}
    cache.apply("RolloutEvent", "ADDED", paused)

    def messages() -> list[str]:
        inputs = cache.inputs("u-1")
        assert inputs is not None
        return [e["message"] for e in inputs.view(now=AT, cluster="c")["events"]]

    cache_module.event_facts_of_kept.cache_clear()
    refs = cache.input_refs("u-1")
    assert refs is not None
    assert len(cache.read_inputs(refs, remember_events=False).events) == 1  # a first build's reading
    assert cache_module.event_facts_of_kept.cache_info()[:2] == (0, 0)  # ... leaves nothing behind
    assert messages() == ["Rollout is paused (CanaryPauseStep)"]
    assert messages() == ["Rollout is paused (CanaryPauseStep)"]
    assert cache_module.event_facts_of_kept.cache_info()[:2] == (1, 1)  # (hits, misses): read once
    cache.apply("RolloutEvent", "MODIFIED", {**paused, "message": "Rollout is paused (BlueGreenPause)"})
    assert messages() == ["Rollout is paused (BlueGreenPause)"]
    assert cache_module.event_facts_of_kept.cache_info()[:2] == (1, 2)


def _about(kind: str, **fields: Any) -> dict[str, Any]:
    return {"involvedObject": {"kind": kind, **fields}}


ODD_EVENTS: list[Any] = [
    "not an object",
    None,
    {"reason": "NoSubject"},
    {"involvedObject": "not an object", "reason": "Odd"},
    {**_about("Rollout", name="checkout", namespace="shop", uid=7), "reason": "UidNotText"},
    {**_about("Rollout", name="checkout"), "metadata": {"namespace": "shop", "name": "m"}},
    {
        "regarding": {"kind": "Rollout", "name": "checkout", "namespace": "shop", "uid": "u-1"},
        "note": "v1 note",
        "series": {"count": 4, "lastObservedTime": "2026-12-01T10:00:09Z"},
        "reportingController": "argo",
    },
    {**_about("Rollout", name="checkout", namespace="shop", uid="u-2"), "reason": "AnotherRollout"},
    {**_about(5, name="checkout", namespace="shop"), "reason": "KindNotText"},  # type: ignore[arg-type]
    {
        **_about("Pod", uid="pod-1", name="x"),
        "reason": "Started",
        "count": True,
        "eventTime": "2026-12-01T10:00:02.5Z",
        "source": {"component": "kubelet"},
    },
    {**_about("ReplicaSet", uid="pod-1", name="x"), "reason": "NotThatUidsKind"},
    {
        **_about("AnalysisRun", uid="ar-1", name="r"),
        "count": 2.0,
        "type": "Warning",
        "firstTimestamp": "not a time",
        "metadata": {"creationTimestamp": "2026-12-01T09:00:00Z", "name": 3},
    },
]


def test_rows_read_from_events_and_from_their_facts_are_the_same_however_odd_the_events() -> None:
    from dashboard.domain.kube_events import event_facts

    children = {"pod-1": ("Pod", "x"), "ar-1": ("AnalysisRun", "r")}
    from_events = event_rows(ROLLOUT, ODD_EVENTS, children)
    assert [(r["object"]["kind"], r["reason"], r["message"], r["count"], r["at"]) for r in from_events] == [
        ("Rollout", "", "", 1, None),
        ("AnalysisRun", "", "", 2, "2026-12-01T09:00:00Z"),
        ("Pod", "Started", "", 1, "2026-12-01T10:00:02.5Z"),
        ("Rollout", "", "v1 note", 4, "2026-12-01T10:00:09Z"),
    ]
    assert event_rows(ROLLOUT, [event_facts(e) for e in ODD_EVENTS], children) == from_events


def test_the_events_of_its_replicasets_pods_and_analysis_runs_are_merged_naming_their_object() -> None:
    children = {
        "rs-1": ("ReplicaSet", "checkout-7d9f"),
        "pod-1": ("Pod", "checkout-7d9f-x"),
        "ar-1": ("AnalysisRun", "checkout-7d9f-2"),
    }
    rs_source = {"source": {"component": "replicaset-controller"}}
    kubelet = {"source": {"component": "kubelet"}}
    events = [
        event("e1", "RolloutUpdated", "Rollout updated to revision 2", at="2026-12-01T10:00:00Z"),
        event("e2", "SuccessfulCreate", "Created pod: checkout-7d9f-x", at="2026-12-01T10:00:01Z",
              kind="ReplicaSet", name="checkout-7d9f", uid="rs-1") | rs_source,
        event("e3", "Started", "Started container app", at="2026-12-01T10:00:05Z",
              kind="Pod", name="checkout-7d9f-x", uid="pod-1") | kubelet,
        event("e4", "MetricFailed", "Metric 'error-rate' Completed. Result: Failed",
              at="2026-12-01T10:01:00Z", kind="AnalysisRun", name="checkout-7d9f-2", uid="ar-1"),
        event("e5", "Started", "Started container app", at="2026-12-01T10:00:06Z",
              kind="Pod", name="someone-else", uid="pod-9"),
    ]  # fmt: skip
    rows = event_rows(ROLLOUT, events, children)
    assert [(r["object"]["kind"], r["reason"], r["source"]) for r in rows] == [
        ("Rollout", "RolloutUpdated", "rollouts-controller"),
        ("ReplicaSet", "SuccessfulCreate", "replicaset-controller"),
        ("Pod", "Started", "kubelet"),
        ("AnalysisRun", "MetricFailed", "rollouts-controller"),
    ]
    before, after = {"currentPodHash": "h", "name": "checkout"}, {"currentPodHash": "h", "name": "checkout"}
    timeline = timeline_events(before, after | {"events": list(rows)}, at=AT)
    (started,) = [e for e in timeline if e["data"].get("reason") == "Started"]
    assert started["data"]["object"] == {"kind": "Pod", "name": "checkout-7d9f-x"}
    assert started["data"]["source"] == "kubelet"


def test_chatty_pods_cannot_crowd_out_the_controllers_events() -> None:
    children = {"pod-1": ("Pod", "p")}
    own = [
        event(f"r{i}", "RolloutStepCompleted", f"step {i}", at=f"2026-12-01T10:00:{i:02d}Z") for i in range(5)
    ]
    noisy = [
        event(
            f"p{i}",
            "Unhealthy",
            "Readiness probe failed",
            at=f"2026-12-01T10:01:{i:02d}Z",
            kind="Pod",
            name="p",
            uid="pod-1",
        )
        for i in range(50)
    ]
    rows = event_rows(ROLLOUT, own + noisy, children)
    assert sum(r["object"]["kind"] == "Rollout" for r in rows) == 5
    assert sum(r["object"]["kind"] == "Pod" for r in rows) == 20


def test_an_events_time_is_the_first_of_its_times_that_parses() -> None:
    def at_of(**times: Any) -> str | None:
        row = {**event("e", "RolloutUpdated", "x", at=""), "lastTimestamp": None, "firstTimestamp": None}
        row["metadata"] = {**row["metadata"], "creationTimestamp": times.pop("created", None)}
        return event_rows(ROLLOUT, [{**row, **times}])[0]["at"]

    def t(second: int) -> str:
        return f"2026-12-01T10:00:0{second}Z"

    assert at_of(lastTimestamp=t(5), eventTime=t(1)) == t(5)
    assert at_of(lastTimestamp="not a time", series={"lastObservedTime": t(4)}, eventTime=t(1)) == t(4)
    assert at_of(eventTime=t(3), firstTimestamp=t(2)) == t(3)
    assert at_of(firstTimestamp=t(2), created=t(1)) == t(2)
    assert at_of(created=t(1)) == t(1)
    assert at_of() is None
