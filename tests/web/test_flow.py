from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from dashboard.domain import build_rollout_view
from dashboard.web.flow import NOT_OBSERVED, build_flow, hash_change, orphans, pause_ends_at
from tests.domain.routing_objects import (
    HEADER_ROUTE,
    HTTP_FIELDS,
    MIRROR_ROUTE,
    istio_rollout,
    managed,
    virtual_service,
)
from tests.web import samples

NOW = datetime(2026, 11, 29, 10, 14, tzinfo=UTC)


def _nodes(flow: dict) -> dict:
    return {n["id"]: n for n in flow["nodes"]}


def _edge(flow: dict, src: str, dst: str) -> dict:
    return next(e for e in flow["edges"] if e["from"] == src and e["to"] == dst)


def test_the_diagram_has_every_stage_in_order_left_to_right() -> None:
    nodes = _nodes(build_flow(samples.rerender_race(), NOW))
    xs = [nodes[i]["x"] for i in ("merge", "git", "sync", "rollout", "canary", "users")]
    assert xs == sorted(xs)
    assert nodes["analysis"]["y"] < nodes["rollout"]["y"]


def test_stages_without_data_say_not_observed_instead_of_vanishing() -> None:
    nodes = _nodes(build_flow(samples.healthy_canary(), NOW))
    for stage in ("merge", "git", "sync", "metrics"):
        assert nodes[stage]["observed"] is False
        assert nodes[stage]["title"] == NOT_OBSERVED


def test_edges_to_users_carry_actual_weight_with_desired_underneath() -> None:
    flow = build_flow(samples.rerender_race(), NOW)
    canary = _edge(flow, "canary", "users")
    assert canary["label"] == "0 %"
    assert canary["sub"] == "desired 10 %"
    assert _edge(flow, "stable", "users")["label"] == "100 %"


def test_a_replica_ratio_weight_is_labelled_as_such() -> None:
    view = samples.paused_canary() | {"weightSource": "replicas", "actualWeight": 33, "setWeight": 50}
    canary = _edge(build_flow(view, NOW), "canary", "users")
    assert canary["label"] == "33 %"
    assert "replica ratio" in canary["sub"]
    assert canary["width"] > _edge(build_flow(samples.rerender_race(), NOW), "canary", "users")["width"]


def test_the_rollout_node_marks_a_hash_change_with_a_step_reset() -> None:
    rollout = _nodes(build_flow(samples.rerender_race(), NOW))["rollout"]
    assert rollout["alert"] == "critical"
    assert rollout["marker"]["text"] == "Hash changed · step 1 → 0"
    assert rollout["marker"]["sub"] == "5f6b8c9d74 → 86d4b7c5f9"
    assert rollout["big"] == "Step 0/5"


def test_the_step_reset_stands_as_long_as_the_rerender_race_finding_whatever_events_followed() -> None:
    # The page keeps only its last timeline events: a busy release pushed the re-render out of them while
    # the critical finding stayed open, and the red marker vanished beside it.
    view = samples.rerender_race()
    del view["hashChange"]
    change = hash_change(view, [])
    assert change is not None and change["reset"]
    assert (change["from"], change["to"], change["stepFrom"]) == ("5f6b8c9d74", "86d4b7c5f9", 1)
    assert _nodes(build_flow(view, NOW))["rollout"]["marker"]["text"] == "Hash changed · step 1 → 0"


def test_without_the_finding_a_release_is_a_quiet_note_and_never_a_reset() -> None:
    view = samples.rerender_race() | {"findings": []}
    del view["hashChange"]
    at, data = "2026-11-29T10:02:40Z", {"previousPodHash": "5f6b8c9d74", "previousStepIndex": 1}
    rerendered = {"kind": "release.rerendered", "podHash": "86d4b7c5f9", "at": at, "data": data}
    started = rerendered | {"kind": "release.started", "data": {"previousPodHash": "5f6b8c9d74"}}
    assert hash_change(view, [rerendered]) is None
    change = hash_change(view, [started, rerendered])
    assert change is not None and not change["reset"] and change["from"] == "5f6b8c9d74"
    assert hash_change(view, []) is None


def test_a_finished_release_shows_no_hash_change() -> None:
    view = samples.rerender_race() | {"stableRS": "86d4b7c5f9"}
    assert hash_change(view) is None


def test_orphaned_replica_sets_are_drawn_dashed() -> None:
    view = samples.rerender_race()
    assert [rs["hash"] for rs in orphans(view)] == ["5f6b8c9d74"]
    orphan = _nodes(build_flow(view, NOW))["orphan0"]
    assert orphan["dashed"] and orphan["title"] == "5f6b8c9d74"


def test_a_timed_pause_has_an_end_time_for_the_countdown() -> None:
    assert pause_ends_at(samples.paused_canary()) == "2026-11-29T10:17:00+00:00"
    assert pause_ends_at(samples.rerender_race()) is None
    domain_style = samples.rerender_race() | {
        "pauses": [{"reason": "CanaryPauseStep", "startedAt": "2026-11-29T10:00:00Z", "durationSeconds": 60}]
    }
    assert pause_ends_at(domain_style) == "2026-11-29T10:01:00+00:00"
    rollout = _nodes(build_flow(samples.paused_canary(), NOW))["rollout"]
    assert rollout["countdown"] == "2026-11-29T10:17:00+00:00"


def test_blue_green_shows_preview_and_active() -> None:
    nodes = _nodes(build_flow(samples.blue_green_preview(), NOW))
    assert nodes["canary"]["kind"].startswith("Preview")
    assert nodes["stable"]["kind"].startswith("Active")
    assert nodes["canary"]["title"] == "5e9c2b8d41"


def test_an_ordinary_release_gets_a_quiet_note_not_the_red_marker() -> None:
    change = {"from": "7c9d5f8b6d", "to": "86d4b7c5f9", "at": "2026-11-29T10:12:00Z", "stepFrom": None}
    view = samples.rerender_race() | {"hashChange": change}
    view["findings"] = []
    rollout = _nodes(build_flow(view, NOW))["rollout"]
    assert rollout["alert"] == ""
    assert rollout["marker"]["cls"] == "note" and rollout["marker"]["role"] == "release"
    assert rollout["marker"]["text"] == "new release · rev 13 · 2 m ago"


def test_long_node_text_wraps_inside_the_box_and_keeps_the_whole_text() -> None:
    view = samples.rerender_race()
    image = "registry.example.com/platform/team-payments/checkout-service:1.42.0-rc.3"
    view["images"] = [{"image": image, "tags": ["canary"]}]
    nodes = _nodes(build_flow(view, NOW))
    canary = nodes["canary"]
    image = [line for line in canary["lines"] if "mono" in line["cls"]]
    assert image[0]["full"] == "registry.local/checkout:1.42.0"  # the ReplicaSet's own image wins
    orphan = nodes["orphan0"]
    texts = [line["text"] for line in orphan["lines"]]
    assert all(len(t) * 7.0 <= orphan["w"] - 24 for t in texts), texts
    assert orphan["y"] >= nodes["stable"]["y"] + nodes["stable"]["h"]  # stacked, never overlapping
    assert nodes["stable"]["y"] >= canary["y"] + canary["h"]


def test_an_unobserved_stage_says_why_in_full() -> None:
    merge = _nodes(build_flow(samples.rerender_race(), NOW))["merge"]
    reason = " ".join(line["text"] for line in merge["lines"])
    assert "…" not in reason and merge["h"] >= 42 + 18 * len(merge["lines"])


def _workloads(scenario: str, seconds: float, namespace: str, name: str) -> dict[str, dict[str, Any]]:
    from tests.domain.findings.kubesim_runs import run
    from tests.web.scenario_views import scenario_view

    view = scenario_view(run(scenario, seconds), namespace, name)
    flow = build_flow(view, datetime.now(UTC))
    return {n["id"]: n for n in flow["nodes"]}


def test_the_orphaned_canary_is_drawn_apart_and_the_canary_node_says_aborted() -> None:
    nodes = _workloads("orphaned-canary", 300, "warehouse", "inventory")
    assert nodes["orphan0"]["role"] == "orphaned"
    assert nodes["orphan0"]["dashed"] and nodes["orphan0"]["faded"] and nodes["orphan0"]["apart"]
    assert nodes["canary"]["title"] != nodes["orphan0"]["title"]
    assert "aborted" in nodes["canary"]["lines"][0]["text"]
    assert "role" not in nodes["canary"]  # no ReplicaSet is the canary any more


def test_after_a_successful_release_the_old_stable_is_scaling_down_not_orphaned() -> None:
    from tests.domain.findings.kubesim_runs import run
    from tests.web.scenario_views import scenario_view

    result = run("healthy-canary", 0)
    roles_seen: set[str] = set()
    for _ in range(40):
        result.sim.advance(10)
        flow = build_flow(scenario_view(result, "shop", "checkout"), result.now())
        roles = {n.get("role") for n in flow["nodes"]}
        assert "orphaned" not in roles, result.now()
        roles_seen |= roles
    assert "scaling-down" in roles_seen


def test_with_metrics_down_the_analysis_and_metrics_nodes_are_flagged_at_the_first_error() -> None:
    from tests.domain.findings.kubesim_runs import run
    from tests.web.scenario_views import scenario_view

    result = run("metrics-provider-down", 15)
    view = scenario_view(result, "catalog", "catalog")
    run_view = view["revisions"][0]["analysisRuns"][0]
    assert run_view["status"] == "Running"  # the run itself has not given up yet
    nodes = {n["id"]: n for n in build_flow(view, result.now())["nodes"]}
    assert (nodes["analysis"]["alert"], nodes["analysis"]["status"]) == ("critical", "critical")
    assert (nodes["metrics"]["alert"], nodes["metrics"]["status"]) == ("critical", "critical")
    # It names what the analysis queries, from its template.
    assert nodes["metrics"]["lines"][0]["text"] == "prometheus.monitoring:9090"


def test_the_metrics_node_names_no_provider_when_no_analysis_runs() -> None:
    nodes = {n["id"]: n for n in build_flow(samples.healthy_canary(), NOW)["nodes"]}
    assert nodes["metrics"]["title"] == NOT_OBSERVED
    assert not nodes["metrics"]["alert"]


def test_the_users_node_shows_the_routers_weights_routes_and_source() -> None:
    vs = virtual_service(20, extra_routes=[HEADER_ROUTE, MIRROR_ROUTE])
    view = build_rollout_view(istio_rollout(), routers=[vs], now=NOW).to_dict()
    users = _nodes(build_flow(view, NOW))["users"]
    texts = [line["full"] for line in users["lines"]]
    assert "weights from VirtualService checkout-vsvc (Istio)" in texts
    assert "router: canary 20 / stable 80" in texts
    assert "header route: header-route" in texts and "mirror route: mirror-route" in texts
    assert "written by rollouts-controller" in texts
    assert users["router"]["name"] == "checkout-vsvc"


def test_without_a_routing_object_the_users_node_is_as_before() -> None:
    users = _nodes(build_flow(samples.rerender_race(), NOW))["users"]
    assert not any("router" in str(line.get("full")) for line in users["lines"])
    assert "router" not in users


def test_the_routing_objects_kind_name_and_writer_are_never_broken_mid_word() -> None:
    vs = virtual_service(20, writes=managed(("kube-controller-manager-with-a-long-name", 10, HTTP_FIELDS)))
    view = build_rollout_view(istio_rollout(), routers=[vs], now=NOW).to_dict()
    users = _nodes(build_flow(view, NOW))["users"]
    texts = [line["text"] for line in users["lines"]]
    assert "VirtualService" in texts and "checkout-vsvc" in texts and "router 20 / 80" in texts
    assert "kube-controller-manager-with-a-long-name" in texts  # whole: the browser elides it, with a tooltip
    assert not any(t in ("VirtualServ", "ice", "80") for t in texts)
    assert users["w"] >= 160
