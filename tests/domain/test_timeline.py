from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from dashboard.domain.timeline import format_time, timeline_events

AT = datetime(2026, 11, 29, 10, 0, 0, 123000, tzinfo=UTC)


def view(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "cluster": "prod",
        "namespace": "shop",
        "name": "web",
        "uid": "u1",
        "strategy": "Canary",
        "status": "Healthy",
        "message": "",
        "step": "6/6",
        "setWeight": 100,
        "actualWeight": 100,
        "currentStepIndex": 6,
        "currentPodHash": "aaa",
        "stableRS": "aaa",
        "images": [{"image": "web:1", "tags": ["stable"]}],
        "revisions": [],
        "findings": [],
    }
    base.update(overrides)
    return base


def kinds(events: list[dict[str, Any]]) -> list[str]:
    return [e["kind"] for e in events]


def test_it_formats_time_as_utc_with_milliseconds() -> None:
    assert format_time(AT) == "2026-11-29T10:00:00.123Z"


def test_it_returns_nothing_when_nothing_changed() -> None:
    assert timeline_events(view(), view(), at=AT) == []


def test_it_returns_nothing_for_a_deleted_rollout() -> None:
    assert timeline_events(view(), None, at=AT) == []


def test_a_first_view_already_promoted_only_records_the_release() -> None:
    events = timeline_events(None, view(), at=AT)
    assert kinds(events) == ["release.started", "phase.changed"]
    assert events[0]["podHash"] == "aaa"
    assert events[0]["data"]["observed"] is True
    assert events[0]["at"] == "2026-11-29T10:00:00.123Z"
    assert events[0]["key"] == "prod/shop/web"


def test_a_new_pod_hash_starts_a_release() -> None:
    before = view()
    after = view(
        currentPodHash="bbb",
        status="Progressing",
        step="0/6",
        currentStepIndex=0,
        setWeight=0,
        actualWeight=0,
        message="more replicas need to be updated",
    )
    events = timeline_events(before, after, at=AT)
    assert kinds(events)[0] == "release.started"
    assert events[0]["podHash"] == "bbb"
    assert events[0]["data"]["previousPodHash"] == "aaa"
    assert "release.superseded" not in kinds(events)  # aaa was stable, not in flight


def test_step_changes_are_one_event_per_step_reached_including_missed_ones() -> None:
    before = view(currentPodHash="bbb", currentStepIndex=1, step="1/6", status="Paused")
    after = view(currentPodHash="bbb", currentStepIndex=3, step="3/6", status="Paused")
    steps = [e for e in timeline_events(before, after, at=AT) if e["kind"] == "step.changed"]
    assert [(e["data"]["toIndex"], e["data"]["inferred"]) for e in steps] == [(2, True), (3, False)]
    assert [e["dedupe"] for e in steps] == ["step:2", "step:3"]
    assert steps[1]["title"] == "Step 3/6 reached"


def test_weight_changes_are_reported_with_both_weights() -> None:
    before = view(currentPodHash="bbb", setWeight=10, actualWeight=10, currentStepIndex=2)
    after = view(currentPodHash="bbb", setWeight=50, actualWeight=40, currentStepIndex=2)
    (event,) = [e for e in timeline_events(before, after, at=AT) if e["kind"] == "weight.changed"]
    assert event["data"]["setWeight"] == 50
    assert event["data"]["actualWeight"] == 40
    assert event["data"]["previousSetWeight"] == 10


def test_pause_start_end_and_promotion() -> None:
    running = view(currentPodHash="bbb", stableRS="aaa", status="Progressing", currentStepIndex=1)
    paused = view(
        currentPodHash="bbb", stableRS="aaa", status="Paused", message="CanaryPauseStep", currentStepIndex=1
    )
    assert "pause.started" in kinds(timeline_events(running, paused, at=AT))
    resumed = view(currentPodHash="bbb", stableRS="aaa", status="Progressing", currentStepIndex=2)
    events = kinds(timeline_events(paused, resumed, at=AT))
    assert "pause.ended" in events
    assert "release.promoted" in events


def test_an_abort_is_reported_once() -> None:
    running = view(currentPodHash="bbb", stableRS="aaa", status="Progressing", currentStepIndex=2)
    aborted = view(
        currentPodHash="bbb",
        stableRS="aaa",
        status="Degraded",
        currentStepIndex=2,
        message="RolloutAborted: Rollout aborted update to revision 2",
    )
    assert "release.aborted" in kinds(timeline_events(running, aborted, at=AT))
    assert "release.aborted" not in kinds(timeline_events(aborted, aborted, at=AT))


def test_reaching_stable_is_fully_promoted() -> None:
    before = view(currentPodHash="bbb", stableRS="aaa", status="Progressing", currentStepIndex=5)
    after = view(currentPodHash="bbb", stableRS="bbb", status="Healthy", currentStepIndex=6)
    assert "release.fully_promoted" in kinds(timeline_events(before, after, at=AT))


def test_the_rerender_race_supersedes_and_is_named() -> None:
    before = view(currentPodHash="bbb", stableRS="aaa", status="Paused", currentStepIndex=2, step="2/6")
    after = view(currentPodHash="ccc", stableRS="aaa", status="Progressing", currentStepIndex=0, step="0/6")
    events = timeline_events(before, after, at=AT)
    by_kind = {e["kind"]: e for e in events}
    assert by_kind["release.superseded"]["podHash"] == "bbb"
    assert by_kind["release.rerendered"]["podHash"] == "ccc"
    assert by_kind["release.rerendered"]["data"]["previousStepIndex"] == 2
    assert "step.changed" not in by_kind


def test_analysis_runs_start_measure_and_finish() -> None:
    def with_run(status: str, successful: int) -> dict[str, Any]:
        run = {
            "name": "web-bbb-2-1",
            "status": status,
            "successful": successful,
            "failed": 0,
            "inconclusive": 0,
            "error": 0,
        }
        return view(
            currentPodHash="bbb",
            stableRS="aaa",
            revisions=[
                {"revision": 2, "replicaSets": [{"name": "web-bbb", "hash": "bbb"}], "analysisRuns": [run]}
            ],
        )

    base = view(currentPodHash="bbb", stableRS="aaa")
    assert kinds(timeline_events(base, with_run("Running", 0), at=AT)) == ["analysis.started"]
    assert kinds(timeline_events(with_run("Running", 0), with_run("Running", 1), at=AT)) == [
        "analysis.measurement"
    ]
    finished = timeline_events(with_run("Running", 1), with_run("Successful", 2), at=AT)
    assert kinds(finished) == ["analysis.measurement", "analysis.finished"]
    assert finished[1]["podHash"] == "bbb"


def test_findings_raised_and_cleared() -> None:
    finding = {"code": "stuck-at-step-zero", "severity": "critical", "title": "Stuck", "since": "t"}
    raised = timeline_events(view(), view(findings=[finding]), at=AT)
    assert kinds(raised) == ["finding.raised"]
    assert kinds(timeline_events(view(findings=[finding]), view(), at=AT)) == ["finding.cleared"]


def test_dedupe_keys_do_not_depend_on_time() -> None:
    before = view(currentPodHash="bbb", stableRS="aaa", currentStepIndex=1, status="Progressing")
    after = view(currentPodHash="bbb", stableRS="aaa", currentStepIndex=2, status="Paused")
    later = datetime(2027, 1, 1, tzinfo=UTC)
    first = [(e["kind"], e["dedupe"]) for e in timeline_events(before, after, at=AT)]
    second = [(e["kind"], e["dedupe"]) for e in timeline_events(before, after, at=later)]
    assert first == second


def test_malformed_views_do_not_raise() -> None:
    weird = view(currentStepIndex="x", revisions="nope", findings=[1, None], images=None, step=3)
    assert isinstance(timeline_events(None, weird, at=AT), list)
    assert timeline_events(None, view(currentPodHash=None), at=AT) == []


def test_the_basis_of_a_view_gives_the_same_events() -> None:
    from dashboard.domain.timeline import timeline_basis

    run = {
        "name": "r1",
        "status": "Running",
        "successful": 1,
        "failed": 0,
        "inconclusive": 0,
        "error": 0,
        "metrics": [{"big": "x" * 1000}],
    }
    before = view(
        currentPodHash="bbb",
        stableRS="aaa",
        currentStepIndex=1,
        status="Paused",
        revisions=[{"revision": 2, "replicaSets": [{"hash": "bbb", "pods": [1, 2]}], "analysisRuns": [run]}],
    )
    after = view(
        currentPodHash="bbb",
        stableRS="aaa",
        currentStepIndex=2,
        status="Progressing",
        revisions=[
            {
                "revision": 2,
                "replicaSets": [{"hash": "bbb"}],
                "analysisRuns": [{**run, "successful": 2, "status": "Successful"}],
            }
        ],
    )
    assert timeline_events(timeline_basis(before), after, at=AT) == timeline_events(before, after, at=AT)


def test_a_timed_pause_running_out_is_not_a_promotion() -> None:
    steps = [
        {"index": 0, "kind": "setWeight"},
        {"index": 1, "kind": "pause", "durationSeconds": 30},
        {"index": 2, "kind": "pause", "durationSeconds": None},
        {"index": 3, "kind": "setWeight"},
    ]
    paused = view(currentPodHash="bbb", stableRS="aaa", status="Paused", currentStepIndex=1, steps=steps)
    resumed = view(
        currentPodHash="bbb", stableRS="aaa", status="Progressing", currentStepIndex=2, steps=steps
    )
    assert "release.promoted" not in kinds(timeline_events(paused, resumed, at=AT))
    held = view(currentPodHash="bbb", stableRS="aaa", status="Paused", currentStepIndex=2, steps=steps)
    moved = view(currentPodHash="bbb", stableRS="aaa", status="Progressing", currentStepIndex=3, steps=steps)
    assert "release.promoted" in kinds(timeline_events(held, moved, at=AT))


def test_an_event_without_a_reason_is_titled_by_its_message_alone() -> None:
    # The Flagger canary view's events carry a message and no reason; the timeline said ": Halt …".
    halt = {"name": "e1", "count": 1, "type": "Warning", "message": "Halt backend.test advancement"}
    synced = {"name": "e2", "count": 1, "reason": "Synced", "message": "Advance backend.test weight 30"}
    events = timeline_events(view(), view(events=[halt, synced]), at=AT)
    titles = [e["title"] for e in events if e["kind"] == "kube.event"]
    assert titles == ["Halt backend.test advancement", "Synced: Advance backend.test weight 30"]
