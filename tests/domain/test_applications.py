"""The Application view and the render ↔ commit ↔ release correlation, on upstream fixtures and kubesim."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from dashboard.domain.applications import (
    CHANGE_NONE,
    CHANGE_REVISION,
    CHANGE_VALUES,
    Render,
    application_view,
    attribute_renders,
    gitops_for_rollout,
    render_for_release,
    render_from_dict,
    split_renders,
    with_changes,
)
from dashboard.domain.objects import parse_time
from tests.kubesim._simhelp import replica_sets, start

T0 = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)


def _fixture(shared_fixtures: Path, name: str) -> dict[str, Any]:
    data = yaml.safe_load((shared_fixtures / "argo-cd" / "applications" / name).read_text())
    assert isinstance(data, dict)
    return data


def _app(store: Any, name: str) -> dict[str, Any]:
    app: dict[str, Any] = store.get("argoproj.io/applications", "argocd", name)
    return app


def _render(at: int, rev: str, inputs: str) -> Render:
    moment = T0 + timedelta(seconds=at)
    return Render(None, (rev,), moment, moment, inputs, "automated", True)


def test_it_reads_a_multi_source_app_with_revisions_aligned_to_sources(shared_fixtures: Path) -> None:
    view = application_view(_fixture(shared_fixtures, "fake-multi-source-app.yaml"))
    assert view.multi_source and len(view.sources) == 3
    assert view.sources[0].values.value_files == ("$values_test/values.yaml",)
    assert view.sources[2].ref == "values_test"
    assert view.values_from == "files"
    assert view.operation is not None and view.operation.revisions == ("a" * 40, "b" * 40, "c" * 40)
    assert view.operation.phase == "Succeeded"
    # `automated: {}` turns auto-sync on; self-heal and prune stay off.
    assert view.auto_sync and not view.self_heal and not view.prune


def test_it_reads_history_operation_and_reconciled_at_of_a_real_app(shared_fixtures: Path) -> None:
    view = application_view(_fixture(shared_fixtures, "diff-cache.yaml"))
    assert (view.namespace, view.name, view.project) == ("argo-cd", "velero-test", "sre")
    assert view.sync_status == "Synced" and view.revision == "rev1" and view.health == "Healthy"
    assert view.operation is not None and view.operation.initiated_by == "foo@example.com"
    assert not view.operation.automated
    assert view.reconciled_at == parse_time("2024-03-05T07:33:04Z")
    assert [r.id for r in view.renders][:3] == [14, 15, 16]
    # The same revision and the same plugin env over and over: re-syncs, not new renders.
    assert {r.changed for r in view.renders[1:]} == {CHANGE_NONE}
    assert view.values_from == "inline"  # the plugin's HELM_VALUES env lives in the Application
    assert view.rollouts == ()  # it manages a Service and a Deployment only
    assert not view.auto_sync


def test_values_object_counts_as_inline_values(shared_fixtures: Path) -> None:
    view = application_view(_fixture(shared_fixtures, "live-child-application.yaml"))
    assert view.sources[0].values.values_object and view.sources[0].chart == "argo-workflows"
    assert view.values_from == "inline"


def test_a_running_operation_is_reported_with_its_phase(shared_fixtures: Path) -> None:
    view = application_view(_fixture(shared_fixtures, "fake-app-operation-running.yaml"))
    assert view.operation is not None and view.operation.phase == "Running"
    assert view.operation.finished_at is None
    assert (view.sync_status, view.health) == ("OutOfSync", "Progressing")


@pytest.mark.parametrize("garbage", [{}, {"status": []}, {"status": {"history": "x", "resources": [1]}}, []])
def test_it_never_raises_on_malformed_objects(garbage: Any) -> None:
    view = application_view(garbage)
    assert view.renders == () and view.rollouts == ()
    assert view.to_dict()["renders"] == 0


def test_the_sync_node_follows_the_application_in_kubesim() -> None:
    sim, store, _ = start("paused-reads-degraded")
    sim.advance(5)
    before = gitops_for_rollout([_app(store, "search")], "search", "search")
    assert (
        before is not None and before["health"] == "Healthy" and before["operation"]["phase"] == "Succeeded"
    )
    sim.advance(20)
    after = gitops_for_rollout([_app(store, "search")], "search", "search")
    assert after is not None
    assert (after["application"], after["rollouts"]) == ("argocd/search", ["search/search"])
    assert after["health"] == "Suspended" and after["operation"]["phase"] == "Running"
    assert after["revision"] != before["revision"]
    # The running sync already applied its manifests: it is the newest render, not yet in the history.
    assert after["history"][-1]["id"] is None and after["history"][-1]["revision"] == after["revision"]
    assert after["autoSync"] and after["selfHeal"] and after["valuesFrom"] == "files"


def test_in_the_rerender_race_both_renders_belong_to_one_commit() -> None:
    sim, store, _ = start("rerender-race")
    sim.advance(90)
    commit = sim.gitops.commit_info("frontend")[-1]["revision"]
    view = application_view(_app(store, "frontend"))
    assert [r.changed for r in view.renders] == ["first", CHANGE_VALUES, CHANGE_REVISION]
    attributions = attribute_renders(view.renders)
    assert [a.commit for a in attributions[1:]] == [commit, commit]
    assert "split render" in attributions[1].reason
    assert list(split_renders(attributions)) == [commit]
    assert view.to_dict()["renders"] == 2

    # Each new ReplicaSet (revisions 2 and 3) is tied to the render that made it.
    by_revision = {
        rs["metadata"]["annotations"]["rollout.argoproj.io/revision"]: parse_time(
            rs["metadata"]["creationTimestamp"]
        )
        for rs in replica_sets(store, "web")
    }
    second = render_for_release(view.renders, by_revision["2"])
    third = render_for_release(view.renders, by_revision["3"])
    assert second is view.renders[1] and third is view.renders[2]


def test_a_values_only_render_belongs_to_a_commit_that_landed_before_it() -> None:
    renders = with_changes([_render(0, "old", "a"), _render(20, "old", "b")])
    commits = [("old", T0 - timedelta(days=1)), ("new", T0 + timedelta(seconds=19))]
    attributions = attribute_renders(renders, commits)
    assert attributions[1].commit == "new" and "not yet synced" in attributions[1].reason
    # Without a known commit it is an edit of the Application itself.
    assert attribute_renders(renders)[1].commit == "old"


def test_renders_far_apart_are_separate_changes() -> None:
    renders = with_changes([_render(0, "a", "x"), _render(3600, "a", "y"), _render(7200, "b", "y")])
    attributions = attribute_renders(renders)
    assert attributions[1].commit == "a" and split_renders(attributions) == {}


def test_a_release_before_any_render_has_no_render() -> None:
    renders = with_changes([_render(100, "a", "x")])
    assert render_for_release(renders, T0) is None
    assert render_for_release(renders, None) is None


def test_renders_survive_the_trip_through_a_published_view() -> None:
    render = with_changes([_render(0, "a", "x"), _render(5, "b", "x")])[1]
    assert render_from_dict(render.to_dict()) == render
