from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from dashboard.web.rollout import autoscaler, measurement_value, parse_threshold, present_rollout, timeline
from tests.web import samples

NOW = datetime(2026, 11, 29, 10, 14, tzinfo=UTC)


def test_the_step_list_highlights_the_current_step_and_explains_a_reset() -> None:
    steps = present_rollout(samples.rerender_race(), NOW)["steps"]
    assert [s["state"] for s in steps["items"]] == ["current", "pending", "pending", "pending", "pending"]
    assert [s["text"] for s in steps["items"]][:2] == ["10 %", "indefinite"]
    assert "restarted at step 0" in steps["note"]


def test_domain_step_views_are_described_too() -> None:
    view = samples.rerender_race() | {
        "steps": [
            {"index": 0, "kind": "setWeight", "weight": 20, "duration": None, "detail": {}},
            {"index": 1, "kind": "pause", "weight": None, "duration": "30s", "detail": {"duration": "30s"}},
        ]
    }
    assert [s["text"] for s in present_rollout(view, NOW)["steps"]["items"]] == ["20 %", "30s"]


def test_argo_cd_health_and_the_rollout_phase_are_shown_side_by_side() -> None:
    header = present_rollout(samples.paused_canary(), NOW)["header"]
    assert header["status"] == "Paused"
    assert header["argocd"]["health"] == "Suspended"
    assert header["argocd"]["note"] == "Suspended in Argo CD · paused by design here"
    unobserved = present_rollout(samples.healthy_canary(), NOW)["header"]["argocd"]
    assert (unobserved["observed"], unobserved["health"], unobserved["note"]) == (False, "not observed", "")


def test_no_argo_cd_badge_without_an_application_that_manages_the_rollout() -> None:
    paused = samples.paused_canary() | {"argoCDHealth": {"status": "Suspended", "message": ""}}
    paused.pop("gitops", None)
    paused.pop("argocd", None)
    argocd = present_rollout(paused, NOW)["header"]["argocd"]
    assert (argocd["observed"], argocd["health"], argocd["note"], argocd["source"]) == (
        False,
        "not observed",
        "",
        "",
    )


def test_thresholds_and_values_are_parsed_from_analysis() -> None:
    assert parse_threshold("result[0] >= 0.99") == {"op": ">=", "value": 0.99, "text": "result[0] >= 0.99"}
    assert parse_threshold("len(result) > 0 && isNaN(result[0])") is None
    assert measurement_value("[0.996]") == 0.996
    assert measurement_value("0.5") == 0.5
    assert measurement_value("[[3]]") == 3.0
    assert measurement_value("NaN-ish") is None
    assert measurement_value(True) is None


def test_a_nan_or_infinite_measurement_has_no_value_so_the_page_stays_valid_json() -> None:
    # Prometheus answers NaN when there is no traffic (the prometheus-no-traffic demo scenario); JSON.parse
    # in the browser refuses NaN, which broke the whole rollout page.
    assert measurement_value("[NaN]") is None
    assert measurement_value("NaN") is None
    assert measurement_value("[Infinity]") is None
    assert measurement_value(float("nan")) is None
    assert measurement_value(float("-inf")) is None
    view = samples.aborted_canary()
    runs = [r for rev in view["revisions"] for r in rev.get("analysisRuns") or []]
    runs[0]["metrics"][0]["measurements"][0]["value"] = "[NaN]"
    page = present_rollout(view, NOW)
    point = page["analysis"][0]["points"][0]
    assert point["value"] is None and point["raw"] == "[NaN]"
    json.dumps(page, allow_nan=False)  # what the browser can parse


def test_every_measurement_is_plotted_against_its_threshold() -> None:
    charts = present_rollout(samples.aborted_canary(), NOW)["analysis"]
    assert len(charts) == 1
    assert [p["value"] for p in charts[0]["points"]] == [0.01, 0.09, 0.12, 0.2]
    assert charts[0]["success"]["value"] == 0.05


def test_a_metric_that_passed_in_a_failed_run_is_charted_as_passed() -> None:
    view = samples.aborted_canary()
    run = next(r for rev in view["revisions"] for r in rev.get("analysisRuns") or [])
    passed = {**run["metrics"][0], "name": "p95-latency", "phase": "Successful"}
    run["metrics"].append(passed)
    charts = {c["metric"]: c for c in present_rollout(view, NOW)["analysis"]}
    assert charts["p95-latency"]["status"] == "Successful" and charts["p95-latency"]["icon"] == "healthy"
    assert charts["p95-latency"]["runStatus"] == run["status"] != "Successful"


def test_findings_put_the_critical_one_first_and_suggest_its_action() -> None:
    page = present_rollout(samples.rerender_race(), NOW)
    assert [f["severity"] for f in page["findings"]] == ["critical", "warning"]
    assert page["actions"]["suggested"] is None  # the view does not say the action applies


def test_the_timeline_is_newest_first_and_bounded() -> None:
    events = [
        {"kind": "step.changed", "at": f"2026-11-29T10:{i:02d}:00.000Z", "title": f"step {i}"}
        for i in range(40)
    ]
    items = timeline(events)
    assert len(items) == 30
    assert items[0]["title"] == "step 39"
    assert items[0]["clock"] == "10:39:00"


def _with_buttons(view: dict[str, Any], **applies: bool) -> dict[str, Any]:
    buttons = [
        {"name": n, "label": n, "destructive": n == "unwedge", "applies": ok, "reason": "" if ok else "no",
         "params": {"replicaSet": "checkout-lost"} if n == "unwedge" else None, "choices": [],
         "confirm": "", "summary": f"{n} it", "warnings": []}
        for n, ok in applies.items()
    ]  # fmt: skip
    return {**view, "availableActions": {"buttons": buttons, "seen": {"podHash": "x", "stepIndex": 0}}}


def test_promote_past_an_open_critical_finding_asks_first_and_names_it() -> None:
    view = _with_buttons(samples.rerender_race(), promote=True, abort=True)
    buttons = {b["name"]: b for b in present_rollout(view, NOW)["actions"]["buttons"]}
    assert [w["code"] for w in buttons["promote"]["warnings"]] == ["rerender-race"]
    assert "Re-render race" in buttons["promote"]["confirm"]
    assert buttons["abort"]["warnings"] == []


def test_the_suggested_remedy_carries_the_findings_parameters() -> None:
    view = _with_buttons(samples.rerender_race(), unwedge=True)
    view["findings"][0]["actionParams"] = {"replicaSet": "checkout-lost"}
    suggested = present_rollout(view, NOW)["actions"]["suggested"]
    assert suggested == {
        "action": "unwedge",
        "title": "Re-render race",
        "params": {"replicaSet": "checkout-lost"},
    }


def test_each_button_says_whether_this_user_may_run_it_and_why_not() -> None:
    from dashboard.web.rollout import with_permissions

    document = present_rollout(_with_buttons(samples.rerender_race(), unwedge=True), NOW)["actions"]
    permitted = with_permissions(
        document, {"unwedge": {"allowed": False, "deniedReason": "your role viewer may not unwedge"}}
    )
    assert permitted["buttons"][0]["allowed"] is False
    assert permitted["buttons"][0]["deniedReason"] == "your role viewer may not unwedge"
    assert permitted["seen"] == {"podHash": "x", "stepIndex": 0}


def test_a_raised_finding_is_drawn_at_its_own_severity_on_the_timeline() -> None:
    events = [
        {
            "kind": "finding.raised",
            "at": "2026-11-29T10:00:00Z",
            "title": "a",
            "data": {"severity": "critical"},
        },
        {"kind": "finding.raised", "at": "2026-11-29T10:01:00Z", "title": "b", "data": {"severity": "info"}},
    ]
    items = timeline(events)
    assert [(i["icon"], i["tone"], i["critical"]) for i in items] == [
        ("info", "info", False),
        ("critical", "critical", True),
    ]


def test_every_icon_on_the_page_carries_its_tone() -> None:
    page = present_rollout(samples.aborted_canary(), NOW)
    assert page["header"]["icon"] == "degraded"
    assert page["header"]["tone"] == "critical"


def test_in_the_rerender_race_the_sync_node_and_the_finding_tell_one_story() -> None:
    from tests.domain.findings.kubesim_runs import run
    from tests.web.scenario_views import scenario_view

    result = run("rerender-race", 300)
    view = scenario_view(result, "web", "frontend")
    page = present_rollout(view, result.now())
    sync = next(n for n in page["flow"]["nodes"] if n["id"] == "sync")
    finding = next(f for f in page["findings"] if f["code"] == "rerender-race")
    commit = view["gitops"]["revision"][:7]
    assert sync["marker"]["text"] == "2 renders of this commit"
    assert finding["tiles"][0]["label"] == f"Renders of {commit}"
    assert finding["tiles"][0]["value"].startswith("2 ×")
    assert [s["text"].split(" · ")[0] for s in finding["syncs"]] == [
        f"render 1 of {commit}",
        f"render 2 of {commit}",
    ]
    assert "new commit" not in " ".join(s["text"] for s in finding["syncs"])
    # What to do now, runnable from the page, and what fixes it for good.
    assert (finding["action"], finding["actionParams"]) == ("promote", {})
    assert "Now:" in finding["explanation"] and "For good:" in finding["explanation"]
    assert page["actions"]["suggested"]["action"] == "promote"
    promote = next(b for b in page["actions"]["buttons"] if b["name"] == "promote")
    assert promote["applies"] and promote["warnings"] == []


def test_an_aborted_rollouts_step_is_aborted_not_now() -> None:
    items = present_rollout(samples.aborted_canary(), NOW)["steps"]["items"]
    assert "current" not in [i["state"] for i in items]
    assert "aborted" in [i["state"] for i in items]


def test_the_autoscaler_card_has_bounds_counts_metrics_and_what_it_scales() -> None:
    view = {
        "autoscaler": {
            "name": "cart",
            "targetKind": "Rollout",
            "targetName": "cart",
            "targetsWorkloadRef": False,
            "minReplicas": 2,
            "maxReplicas": 10,
            "currentReplicas": 8,
            "desiredReplicas": 8,
            "atMax": False,
            "metrics": [{"type": "Resource", "name": "cpu", "target": "60 %", "current": "75 %"}],
        },
        "revisions": [{"replicaSets": [{"role": "stable", "replicas": 8}]}],
    }
    card = autoscaler(view)
    assert card is not None and card["target"] == "Rollout cart"
    assert [(r["label"], r["value"]) for r in card["rows"]] == [
        ("min", "2"), ("max", "10"), ("current", "8"), ("desired", "8")
    ]
    assert card["metrics"] == ["cpu: 75 % (target 60 %)"] and card["follow"] == "stable 8"
    assert autoscaler({}) is None
