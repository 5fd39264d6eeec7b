"""The rollout page for a Flagger Canary, built from canary views of the constructed Flagger fixtures."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from dashboard.domain.flagger import canary_views
from dashboard.kube.loading import load_paths
from dashboard.web.canary import present_canary, progress_text
from dashboard.web.fleet import fleet_row
from dashboard.web.fleet_index import FIELDS

NOW = datetime(2026, 7, 22, tzinfo=UTC)


def canary(shared: Path, name: str) -> dict[str, Any]:
    base = shared / "flagger" / "constructed"
    loaded = load_paths([base / name, base / "events-podinfo-failed-threshold.yaml"])
    assert not loaded.errors
    (view,) = canary_views([o.object for o in loaded.objects], now=NOW, cluster="prod")
    return view.to_dict()


def _nodes(page: dict[str, Any]) -> dict[str, Any]:
    return {n["id"]: n for n in page["flow"]["nodes"]}


def test_waiting_promotion_shows_flaggers_phase_beside_the_mapped_status(shared_fixtures: Path) -> None:
    page = present_canary(canary(shared_fixtures, "canary-waitingpromotion.yaml"), NOW)
    header = page["header"]
    assert page["kind"] == "canary"
    assert (header["phase"], header["status"]) == ("WaitingPromotion", "Paused")
    assert header["phaseWords"] == "waiting for confirm-promotion"
    assert header["controller"] == "Flagger"


def test_the_notes_panel_says_what_the_status_says_what_is_true_and_the_source(shared_fixtures: Path) -> None:
    view = canary(shared_fixtures, "canary-waitingpromotion.yaml")
    notes = {n["code"]: n for n in present_canary(view, NOW)["notes"]}
    assert len(notes) == len(view["notes"]) > 0
    for note in notes.values():
        assert note["field"] and note["source"] and note["text"]
        assert note["says"] != note["truth"] or note["says"] == "—"


def test_the_waiting_gate_says_what_it_waits_for_and_offers_its_action(shared_fixtures: Path) -> None:
    gates = {
        g["name"]: g
        for g in present_canary(canary(shared_fixtures, "canary-waitingpromotion.yaml"), NOW)["gates"]
    }
    promotion = gates["promotion-gate"]
    assert promotion["state"] == "waiting" and promotion["action"] == "promote"
    assert "confirm-promotion" in promotion["waitingFor"]
    rollback = gates["rollback-gate"]
    assert (rollback["state"], rollback["action"], rollback["destructive"]) == ("armed", "abort", True)


def test_an_idle_gate_offers_no_button(shared_fixtures: Path) -> None:
    gates = present_canary(canary(shared_fixtures, "canary-succeeded.yaml"), NOW)["gates"]
    assert all(g["action"] == "" for g in gates if g["type"] != "confirm-traffic-increase")


def test_the_diagram_has_primary_as_stable_canary_weights_and_progress(shared_fixtures: Path) -> None:
    view = canary(shared_fixtures, "canary-progressing-weight20-config-change.yaml")
    page = present_canary(view, NOW)
    nodes = _nodes(page)
    assert nodes["stable"]["kind"].startswith("Primary")
    assert nodes["canary"]["kind"].startswith("Canary")
    assert nodes["rollout"]["big"] == "Step 2 of 5"
    edges = {(e["from"], e["to"]): e for e in page["flow"]["edges"]}
    assert edges[("canary", "users")]["label"] == "20 %"
    assert edges[("stable", "users")]["label"] == "80 %"
    xs = [nodes[i]["x"] for i in ("target", "rollout", "canary", "users")]
    assert xs == sorted(xs)


def test_ab_and_blue_green_count_iterations() -> None:
    assert progress_text({"step": "3/10", "flaggerStrategy": "blue-green"}) == "iteration 3 of 10"
    assert progress_text({"step": "2/5", "flaggerStrategy": "canary"}) == "step 2 of 5"
    assert progress_text({"step": None}) == ""


def test_failed_canaries_are_critical_and_list_flaggers_events_newest_first(shared_fixtures: Path) -> None:
    page = present_canary(canary(shared_fixtures, "canary-failed-threshold.yaml"), NOW)
    assert _nodes(page)["rollout"]["alert"] == "critical"
    assert page["events"] and page["checks"]
    assert page["events"][0]["at"] >= page["events"][-1]["at"]


@pytest.mark.parametrize(
    "name",
    [
        "canary-failed-during-promotion.yaml",
        "canary-failed-threshold.yaml",
        "canary-progressing-weight20-config-change.yaml",
        "canary-succeeded.yaml",
        "canary-waiting-confirm-rollout.yaml",
        "canary-waitingpromotion.yaml",
    ],
)
def test_every_fixture_presents_without_error(shared_fixtures: Path, name: str) -> None:
    page = present_canary(canary(shared_fixtures, name), NOW)
    assert page["flow"]["nodes"] and page["header"]["phase"]


def test_the_fleet_row_names_the_controller_for_every_row() -> None:
    row = fleet_row({"cluster": "c", "namespace": "n", "name": "podinfo", "controller": "flagger"}, NOW)
    assert (row["controller"], row["controllerLabel"]) == ("flagger", "Flagger")
    plain = fleet_row({"cluster": "c", "namespace": "n", "name": "checkout"}, NOW)
    assert (plain["controller"], plain["controllerLabel"]) == ("argo-rollouts", "Argo Rollouts")
    assert {"controller", "controllerLabel", "gitops"} <= set(FIELDS)


def test_the_fleet_row_shows_argo_cds_words_beside_the_rollouts() -> None:
    row = fleet_row(
        {"name": "x", "status": "Paused", "gitopsHealth": "Suspended", "gitopsSync": "Synced"}, NOW
    )
    assert (row["status"], row["gitops"], row["gitopsIcon"]) == ("Paused", "Suspended · Synced", "paused")
    assert fleet_row({"name": "x"}, NOW)["gitops"] == ""


def test_a_canary_waiting_for_promotion_offers_promote_in_the_rollout_pages_actions_shape() -> None:
    from dashboard.domain.flagger import canary_view
    from tests.flagger.test_simulation import Run

    run = Run("flagger-waiting-approval")
    canary = run.until(120, "backend")
    view = canary_view(canary, events=run.events(), now=run.clock.now()).to_dict()
    buttons = {b["name"]: b for b in present_canary(view, run.clock.now())["actions"]["buttons"]}
    assert buttons["promote"]["applies"] and buttons["promote"]["reason"] == ""
    assert not buttons["pause"]["applies"] and "no Flagger gate" in buttons["pause"]["reason"]


def test_no_argo_cd_badge_for_a_canary_no_application_manages() -> None:
    from dashboard.domain.flagger import canary_view
    from tests.flagger.test_simulation import Run

    run = Run("flagger-waiting-approval")
    canary = run.until(120, "backend")
    view = canary_view(canary, events=run.events(), now=run.clock.now()).to_dict()
    assert view.get("argocdHealth") or view.get("argoCDHealth")  # Argo CD's rules would compute one
    header = present_canary(view, run.clock.now())["header"]
    assert (header["argocd"]["observed"], header["argocd"]["source"]) == (False, "")
    assert header["attention"] == "waiting"


def test_a_failed_canarys_header_and_analysis_node_are_critical_never_the_accent() -> None:
    from dashboard.domain.flagger import canary_view
    from tests.flagger.test_simulation import Run

    run = Run("flagger-failed")
    canary = run.until(140, "frontend")
    page = present_canary(
        canary_view(canary, events=run.events(), now=run.clock.now()).to_dict(), run.clock.now()
    )
    assert page["header"]["tone"] == "critical"
    analysis = next(n for n in page["flow"]["nodes"] if n["id"] == "analysis")
    assert analysis["tone"] == "critical"
    assert "failed checks 5" in analysis["lines"][0]["text"]
