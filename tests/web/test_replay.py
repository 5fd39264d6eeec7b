from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from dashboard.domain.timeline import timeline_events
from dashboard.web.flow import build_flow
from dashboard.web.replay import chart, opening, replay

T0 = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)
FIELDS = ("currentPodHash", "stableRS", "currentStepIndex", "setWeight", "actualWeight", "status")


def _view(**changes: Any) -> dict[str, Any]:
    view: dict[str, Any] = {
        "cluster": "prod",
        "namespace": "shop",
        "name": "checkout",
        "strategy": "Canary",
        "status": "Healthy",
        "message": "",
        "step": "5/5",
        "currentStepIndex": 5,
        "setWeight": 100,
        "actualWeight": 100,
        "currentPodHash": "aaa",
        "stableRS": "aaa",
        "revision": 1,
        "images": [{"image": "shop/checkout:1", "tags": ["stable"]}],
        "revisions": [],
        "findings": [],
    }
    view.update(changes)
    if "currentStepIndex" in changes:
        view["step"] = f"{changes['currentStepIndex']}/5"
    return view


def _story(views: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events the watcher records for a sequence of views, one minute apart."""
    events: list[dict[str, Any]] = []
    for i in range(1, len(views)):
        events += timeline_events(views[i - 1], views[i], at=T0 + timedelta(minutes=i))
    return events


CANARY = [
    _view(),
    _view(currentPodHash="bbb", revision=2, currentStepIndex=0, setWeight=20, actualWeight=0,
          status="Progressing", images=[{"image": "shop/checkout:2", "tags": ["canary"]}]),
    _view(currentPodHash="bbb", revision=2, currentStepIndex=1, setWeight=20, actualWeight=20,
          status="Paused", message="CanaryPauseStep"),
    _view(currentPodHash="bbb", revision=2, currentStepIndex=3, setWeight=60, actualWeight=60,
          status="Progressing"),
    _view(currentPodHash="bbb", revision=2, stableRS="bbb", currentStepIndex=5, setWeight=100,
          actualWeight=100, status="Healthy"),
]


def _release_events(events: list[dict[str, Any]], pod_hash: str) -> list[dict[str, Any]]:
    return [e for e in events if e["podHash"] == pod_hash]


def test_it_rebuilds_every_recorded_moment_of_a_canary_release() -> None:
    events = _release_events(_story(CANARY), "bbb")
    frames = replay({"cluster": "prod", "namespace": "shop", "name": "checkout", "strategy": "Canary",
                     "stepCount": 5}, events, stable="aaa")
    # One opening frame, then one per observed change (views 1..4).
    assert len(frames) == 5
    for frame, view in zip(frames[1:], CANARY[1:], strict=True):
        assert {k: frame["view"][k] for k in FIELDS} == {k: view[k] for k in FIELDS}
    assert frames[2]["view"]["step"] == "1/5"


def test_the_opening_state_comes_from_the_first_events_before_fields() -> None:
    events = _release_events(_story(CANARY), "bbb")
    assert opening(events, "bbb") == {
        "currentStepIndex": 0,
        "setWeight": 20,
        "actualWeight": 0,
        "status": "Progressing",
    }


def test_the_rerender_race_shows_the_hash_change_and_the_step_reset() -> None:
    views = [
        CANARY[0],
        CANARY[1],
        _view(currentPodHash="bbb", revision=2, currentStepIndex=3, setWeight=60, actualWeight=60,
              status="Progressing"),
        _view(currentPodHash="ccc", revision=3, currentStepIndex=0, setWeight=20, actualWeight=0,
              status="Progressing"),
    ]
    events = [e for e in _story(views) if e["podHash"] in ("bbb", "ccc")]
    frames = replay({"cluster": "prod", "namespace": "shop", "name": "checkout", "strategy": "Canary",
                     "stepCount": 5}, events, stable="aaa")
    before, after = frames[-2]["view"], frames[-1]["view"]
    assert (before["currentPodHash"], before["currentStepIndex"]) == ("bbb", 3)
    assert (after["currentPodHash"], after["currentStepIndex"]) == ("ccc", 0)
    assert after["hashChange"]["from"] == "bbb" and after["hashChange"]["stepFrom"] == 3
    rollout = next(n for n in build_flow(after, T0)["nodes"] if n["id"] == "rollout")
    assert rollout["marker"]["reset"] is True
    assert next(n for n in build_flow(before, T0)["nodes"] if n["id"] == "rollout")["marker"] is None


def test_an_abort_replays_as_degraded_with_the_weight_back_to_zero() -> None:
    views = [
        CANARY[0],
        CANARY[1],
        _view(currentPodHash="bbb", currentStepIndex=1, setWeight=20, actualWeight=20, status="Paused",
              message="CanaryPauseStep"),
        _view(currentPodHash="bbb", currentStepIndex=1, setWeight=0, actualWeight=0, status="Degraded",
              message="RolloutAborted: Rollout aborted update to revision 2", aborted=True),
    ]
    frames = replay({"cluster": "prod", "namespace": "shop", "name": "checkout", "stepCount": 5},
                    _release_events(_story(views), "bbb"), stable="aaa")
    last = frames[-1]["view"]
    assert last["status"] == "Degraded" and last["aborted"] is True
    assert (last["setWeight"], last["actualWeight"]) == (0, 0)


def test_a_fully_promoted_release_makes_its_hash_stable() -> None:
    frames = replay({"cluster": "prod", "namespace": "shop", "name": "checkout", "stepCount": 5},
                    _release_events(_story(CANARY), "bbb"), stable="aaa")
    assert frames[-1]["view"]["stableRS"] == "bbb"
    assert frames[-1]["view"]["step"] is None
    assert frames[-2]["view"]["stableRS"] == "aaa"


def test_the_chart_has_weights_and_steps_per_frame_and_markers_for_what_matters() -> None:
    events = _release_events(_story(CANARY), "bbb")
    frames = replay({"cluster": "prod", "namespace": "shop", "name": "checkout", "stepCount": 5},
                    events, stable="aaa")
    drawn = chart(frames, events)
    assert drawn["series"]["actualWeight"] == [0, 0, 20, 60, 100]
    assert drawn["series"]["step"] == [0, 0, 1, 3, 5]
    groups = {m["group"] for m in drawn["markers"]}
    assert {"pause", "hash change", "promoted"} <= groups


def test_user_actions_become_markers_and_do_not_change_the_state() -> None:
    events = _release_events(_story(CANARY), "bbb")
    action = {"kind": "action", "at": events[2]["at"], "title": "alice: promote (done)", "podHash": None,
              "data": {"actor": "alice", "action": "promote", "outcome": "done"}}
    with_action = [*events[:3], action, *events[3:]]
    frames = replay({"cluster": "prod", "namespace": "shop", "name": "checkout", "stepCount": 5},
                    with_action, stable="aaa")
    plain = replay({"cluster": "prod", "namespace": "shop", "name": "checkout", "stepCount": 5},
                   events, stable="aaa")
    assert [f["view"] for f in frames] == [f["view"] for f in plain]
    assert any(m["kind"] == "action" for m in chart(frames, with_action)["markers"])


def test_no_events_means_no_frames() -> None:
    assert replay({"cluster": "c", "namespace": "n", "name": "r"}, []) == []
