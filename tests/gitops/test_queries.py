"""The chain read API on kubesim's Argo CD simulation: merge → commit → pipeline → sync → release."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.test import Client, override_settings

from dashboard.domain.applications import gitops_for_rollout
from dashboard.domain.objects import parse_time
from dashboard.gitops.queries import chain_for_release, latest_chain, pipeline_state, pipeline_states_for
from dashboard.history.models import Release
from tests.gitops import payloads as p
from tests.kubesim._simhelp import replica_sets, start

KUBESIM_REPO = "https://git.example.com/platform/frontend-deploy.git"
REPOS = {KUBESIM_REPO: {"provider": "github", "secret": p.SECRET}}


def _view(store: Any) -> dict[str, Any]:
    app = store.get("argoproj.io/applications", "argocd", "frontend")
    return {
        "cluster": "sim",
        "namespace": "web",
        "name": "frontend",
        "gitops": gitops_for_rollout([app], "web", "frontend"),
    }


def _on_kubesim_repo(payload: dict[str, Any]) -> dict[str, Any]:
    web = KUBESIM_REPO.removesuffix(".git")
    payload["repository"].update(html_url=web, clone_url=KUBESIM_REPO, ssh_url="", url=web)
    return payload


def _post(client: Client, event: str, payload: dict[str, Any]) -> None:
    data = p.body(payload)
    response = client.post(
        "/hooks/github",
        data,
        content_type="application/json",
        headers={
            "X-GitHub-Event": event,
            "X-GitHub-Delivery": str(uuid.uuid4()),
            "X-Hub-Signature-256": "sha256=" + p.sign(data),
        },
    )
    assert response.status_code == 201, response.json()


def _releases(store: Any, git_revisions: dict[str, str]) -> dict[str, str]:
    """Release rows as the recorder writes them: one per pod hash; revision → pod hash."""
    hashes = {}
    for rs in replica_sets(store, "web"):
        meta = rs["metadata"]
        revision = meta["annotations"]["rollout.argoproj.io/revision"]
        pod_hash = meta["labels"]["rollouts-pod-template-hash"]
        started = parse_time(meta["creationTimestamp"])
        assert started is not None
        Release.objects.create(
            cluster="sim",
            namespace="web",
            rollout="frontend",
            pod_hash=pod_hash,
            revision=int(revision),
            started_at=started,
            git_revision=git_revisions.get(revision, ""),
        )
        hashes[revision] = pod_hash
    return hashes


@pytest.fixture
def race(db: Any, redis_prefix: str) -> Any:
    """The rerender-race scenario run to its end, its merge and a red pipeline received by webhook."""
    sim, store, _ = start("rerender-race")
    sim.advance(90)
    initial, release = sim.gitops.commit_info("frontend")
    with override_settings(
        GITOPS_REPOSITORIES=REPOS, LIVE_REDIS_PREFIX=redis_prefix, ROOT_URLCONF="dashboard.gitops.urls"
    ):
        client = Client(REMOTE_ADDR="192.0.2.1")
        merge = p.github_pull_request_merged(release["revision"], number=2400)
        merge["pull_request"]["merged_at"] = release["date"]
        _post(client, "pull_request", _on_kubesim_repo(merge))
        _post(client, "workflow_run", _on_kubesim_repo(p.github_workflow_run(release["revision"])))
        # What the Application reported when each release appeared: the old sha for the half render.
        hashes = _releases(
            store, {"1": initial["revision"], "2": initial["revision"], "3": release["revision"]}
        )
        yield sim, store, hashes, initial["revision"], release["revision"]


def test_in_the_rerender_race_both_releases_are_tied_to_the_same_merge(race: Any) -> None:
    _, store, hashes, _, sha = race
    view = _view(store)
    second = chain_for_release("sim", "web", "frontend", hashes["2"], view)
    third = chain_for_release("sim", "web", "frontend", hashes["3"], view)
    for chain in (second, third):
        assert chain["release"]["commit"] == sha
        assert chain["merge"]["observed"] and chain["merge"]["number"] == "2400"
        assert chain["merge"]["url"].endswith("/pull/2400")
        assert len(chain["sync"]["splitRender"]) == 2
    assert "split render" in second["sync"]["render"]["reason"]
    assert second["sync"]["render"]["revision"] != third["sync"]["render"]["revision"]


def test_the_release_records_its_commit_and_the_red_pipeline(race: Any) -> None:
    _, store, hashes, initial_sha, sha = race
    first = chain_for_release("sim", "web", "frontend", hashes["1"], _view(store))
    assert first["commit"]["sha"] == initial_sha and not first["merge"]["observed"]
    third = chain_for_release("sim", "web", "frontend", hashes["3"], _view(store))
    assert third["commit"] == {**third["commit"], "sha": sha, "source": "webhook", "title": "Release 2.4.0"}
    assert third["pipeline"]["state"] == "failure"
    assert third["pipeline"]["url"].endswith("/actions/runs/30433642")
    assert third["source"]["commit"]["sha"] == sha and third["source"]["merge"]["title"] == "Release 2.4.0"


def test_the_sync_node_follows_the_application(race: Any) -> None:
    sim, store, _, _, sha = race
    chain = latest_chain("sim", "web", "frontend", _view(store))
    app = store.get("argoproj.io/applications", "argocd", "frontend")
    sync = chain["sync"]
    assert sync["observed"] and sync["application"] == "argocd/frontend"
    assert (sync["sync"], sync["health"]) == (
        app["status"]["sync"]["status"],
        app["status"]["health"]["status"],
    )
    assert sync["revision"] == app["status"]["sync"]["revision"] == sha
    assert sync["renders"] == 2 and sync["valuesFrom"] == "inline+files"
    assert chain["merge"]["number"] == "2400"
    # A later self-heal fight or new sync shows up as soon as the Application changes.
    sim.gitops.commit("frontend", {"values": {"config": {"timeout": 60}}, "message": "timeout 60"})
    sim.advance(40)
    moved = latest_chain("sim", "web", "frontend", _view(store))["sync"]
    assert (
        moved["revision"] != sha and moved["revision"] == sim.gitops.commit_info("frontend")[-1]["revision"]
    )


def test_nodes_without_a_configured_source_say_not_observed(db: Any) -> None:
    sim, store, _ = start("rerender-race")
    sim.advance(60)
    with override_settings(GITOPS_REPOSITORIES={}):
        chain = latest_chain("sim", "web", "frontend", _view(store))
    assert chain["sync"]["observed"] and chain["commit"]["observed"] and chain["commit"]["source"] == "argocd"
    assert chain["merge"] == {"observed": False, "reason": chain["merge"]["reason"]}
    assert "GITOPS_REPOSITORIES" in chain["merge"]["reason"]
    assert not chain["pipeline"]["observed"]
    bare = latest_chain("sim", "web", "frontend", {"name": "frontend"})
    assert not bare["sync"]["observed"] and not bare["merge"]["observed"]
    assert chain_for_release("sim", "web", "frontend", "nohash")["release"]["observed"] is False


def test_the_pipeline_state_is_the_worst_latest_run_of_each_pipeline() -> None:
    runs = [
        {"provider": "ci", "pipeline": "build", "state": "failure", "at": "2026-01-01T10:00:00Z"},
        {"provider": "ci", "pipeline": "build", "state": "success", "at": "2026-01-01T10:05:00Z"},
        {"provider": "ci", "pipeline": "e2e", "state": "running", "at": "2026-01-01T10:01:00Z"},
    ]
    assert pipeline_state(runs) == "running"
    assert pipeline_state(runs[:2]) == "success"
    assert pipeline_state([]) is None


def test_pipeline_states_for_findings_map_each_commit_to_its_state(race: Any) -> None:
    _, _, _, initial_sha, sha = race
    assert pipeline_states_for([sha, initial_sha, ""]) == {sha: "failure"}
