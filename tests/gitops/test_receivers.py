"""The webhook receivers: real payload shapes from GitHub, GitLab, Gitea and the plain CI form."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.test import Client, override_settings

from dashboard.gitops.models import Commit, Delivery, PipelineRun
from tests.gitops import payloads as p


def _github(client: Client, event: str, payload: Any, *, delivery: str | None = None, **headers: str) -> Any:
    data = p.body(payload)
    all_headers = {
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery or str(uuid.uuid4()),
        "X-Hub-Signature-256": "sha256=" + p.sign(data),
        **headers,
    }
    return client.post("/hooks/github", data, content_type="application/json", headers=all_headers)


def _gitlab(client: Client, event: str, payload: Any, *, token: str = p.SECRET, **headers: str) -> Any:
    return client.post(
        "/hooks/gitlab",
        p.body(payload),
        content_type="application/json",
        headers={"X-Gitlab-Event": event, "X-Gitlab-Token": token, **headers},
    )


def _gitea(client: Client, event: str, payload: Any, *, signature: str | None = None) -> Any:
    data = p.body(payload)
    return client.post(
        "/hooks/gitea",
        data,
        content_type="application/json",
        headers={
            "X-Gitea-Event": event,
            "X-Gitea-Delivery": str(uuid.uuid4()),
            "X-Gitea-Signature": signature or p.sign(data),
        },
    )


def _pipeline(client: Client, payload: Any, *, token: str = p.CI_TOKEN) -> Any:
    return client.post(
        "/hooks/pipeline",
        p.body(payload),
        content_type="application/json",
        headers={"Authorization": f"Bearer {token}"},
    )


def _nothing_stored() -> bool:
    return not (Commit.objects.exists() or PipelineRun.objects.exists() or Delivery.objects.exists())


# ---- GitHub ----------------------------------------------------------------------------------------------


def test_a_github_push_records_the_commit(hooks: Client) -> None:
    response = _github(hooks, "push", p.github_push())
    assert response.status_code == 201, response.json()
    commit = Commit.objects.get()
    assert (commit.sha, commit.author, commit.title) == (
        p.SHA,
        "Release Bot",
        "release 2.4.0: image green, timeout 45",
    )
    assert commit.url == f"{p.GITHUB_URL}/commit/{p.SHA}" and commit.ref == "main"
    assert commit.committed_at is not None and commit.repository.key == "github.com/acme/frontend-deploy"


def test_a_merged_github_pull_request_adds_the_merge_to_the_pushed_commit(hooks: Client) -> None:
    _github(hooks, "push", p.github_push())
    response = _github(hooks, "pull_request", p.github_pull_request_merged())
    assert response.status_code == 201
    commit = Commit.objects.get()
    assert (commit.merge_number, commit.merge_title, commit.merged_by) == ("1347", "Release 2.4.0", "hubot")
    assert commit.merge_url == f"{p.GITHUB_URL}/pull/1347"
    assert commit.title == "release 2.4.0: image green, timeout 45"  # the push's message stays


def test_an_opened_pull_request_is_ignored(hooks: Client) -> None:
    payload = p.github_pull_request_merged()
    payload["action"], payload["pull_request"]["merged"] = "opened", False
    response = _github(hooks, "pull_request", payload)
    assert response.status_code == 202 and "not merged" in response.json()["ignored"]
    assert _nothing_stored()


def test_a_redelivered_github_event_is_recorded_once(hooks: Client) -> None:
    delivery = str(uuid.uuid4())
    assert _github(hooks, "push", p.github_push(), delivery=delivery).status_code == 201
    again = _github(hooks, "push", p.github_push(), delivery=delivery)
    assert again.status_code == 200 and again.json()["duplicate"] is True
    assert Commit.objects.count() == 1 and Delivery.objects.count() == 1


def test_a_wrong_github_signature_is_refused_and_stores_nothing(hooks: Client) -> None:
    response = _github(hooks, "push", p.github_push(), **{"X-Hub-Signature-256": "sha256=" + "0" * 64})
    assert response.status_code == 401 and "signature" in response.json()["error"]
    signed_elsewhere = p.sign(p.body(p.github_push()), secret="another-secret-entirely")
    response = _github(
        hooks, "push", p.github_push(), **{"X-Hub-Signature-256": "sha256=" + signed_elsewhere}
    )
    assert response.status_code == 401
    assert _nothing_stored()


def test_an_unknown_repository_is_refused_by_name(hooks: Client) -> None:
    payload = p.github_push()
    payload["repository"]["html_url"] = "https://github.com/someone/else"
    payload["repository"]["clone_url"] = "https://github.com/someone/else.git"
    payload["repository"]["ssh_url"] = "git@github.com:someone/else.git"
    payload["repository"]["url"] = "https://api.github.com/repos/someone/else"
    response = _github(hooks, "push", payload)
    assert response.status_code == 404 and "github.com/someone/else" in response.json()["error"]
    assert _nothing_stored()


@pytest.mark.parametrize(
    ("data", "content_type", "fragment"),
    [
        (b"{not json", "application/json", "not valid JSON"),
        (b"", "application/json", "empty body"),
        (b'["a list"]', "application/json", "expected an object"),
        (b"payload=%7B%7D", "application/x-www-form-urlencoded", "application/json"),
    ],
)
def test_a_malformed_github_body_gets_a_clear_4xx(
    hooks: Client, data: bytes, content_type: str, fragment: str
) -> None:
    response = hooks.post(
        "/hooks/github",
        data,
        content_type=content_type,
        headers={"X-GitHub-Event": "push", "X-Hub-Signature-256": "sha256=" + p.sign(data)},
    )
    assert 400 <= response.status_code < 500 and fragment in response.json()["error"]
    assert _nothing_stored()


def test_a_signed_push_with_a_bad_sha_is_malformed(hooks: Client) -> None:
    payload = p.github_push()
    payload["commits"][0]["id"] = "not-a-sha"
    response = _github(hooks, "push", payload)
    assert response.status_code == 400 and "commits[0].id" in response.json()["error"]
    assert _nothing_stored()


def test_a_missing_event_header_is_refused(hooks: Client) -> None:
    data = p.body(p.github_push())
    response = hooks.post("/hooks/github", data, content_type="application/json")
    assert response.status_code == 400 and "X-GitHub-Event" in response.json()["error"]


def test_an_oversized_body_is_refused_before_it_is_read(hooks: Client) -> None:
    payload = p.github_push(message="x" * 5000)
    with override_settings(GITOPS_WEBHOOK_MAX_BYTES=4096):
        response = _github(hooks, "push", payload)
    assert response.status_code == 413 and "GITOPS_WEBHOOK_MAX_BYTES" in response.json()["error"]
    assert _nothing_stored()


def test_only_post_is_accepted(hooks: Client) -> None:
    response = hooks.get("/hooks/github")
    assert response.status_code == 405 and response.json()["error"] == "use POST"


def test_a_failed_workflow_run_records_the_pipeline_state(hooks: Client) -> None:
    assert (
        _github(
            hooks, "workflow_run", p.github_workflow_run(status="in_progress", conclusion=None)
        ).status_code
        == 201
    )
    run = PipelineRun.objects.get()
    assert (run.state, run.pipeline, run.provider) == ("running", "Build and deploy", "github-actions")
    _github(hooks, "workflow_run", p.github_workflow_run())
    run = PipelineRun.objects.get()
    assert run.state == "failure" and run.url == f"{p.GITHUB_URL}/actions/runs/30433642"


def test_a_late_in_progress_event_does_not_overwrite_the_final_state(hooks: Client) -> None:
    _github(hooks, "workflow_run", p.github_workflow_run())
    _github(hooks, "workflow_run", p.github_workflow_run(status="in_progress", conclusion=None))
    assert PipelineRun.objects.get().state == "failure"


def test_a_check_suite_links_to_the_commit_checks(hooks: Client) -> None:
    assert _github(hooks, "check_suite", p.github_check_suite()).status_code == 201
    run = PipelineRun.objects.get()
    assert (run.state, run.pipeline) == ("success", "Octocat CI")
    assert run.url == f"{p.GITHUB_URL}/commit/{p.SHA}/checks"


def test_a_ping_is_acknowledged_and_stores_nothing(hooks: Client) -> None:
    payload = {"zen": "Keep it logically awesome.", "hook_id": 1, "repository": p.github_push()["repository"]}
    response = _github(hooks, "ping", payload)
    assert response.status_code == 202 and _nothing_stored()


def test_a_repository_configured_for_another_provider_is_refused(hooks: Client) -> None:
    payload = p.github_push()
    payload["repository"] = p.gitea_push()["repository"]
    response = _github(hooks, "push", payload)
    assert response.status_code == 404 and "configured for gitea" in response.json()["error"]


# ---- GitLab ----------------------------------------------------------------------------------------------


def test_a_gitlab_push_and_merge_request_record_one_commit(hooks: Client) -> None:
    assert _gitlab(hooks, "Push Hook", p.gitlab_push(), **{"Idempotency-Key": "k1"}).status_code == 201
    assert _gitlab(hooks, "Merge Request Hook", p.gitlab_merge_request_merged()).status_code == 201
    commit = Commit.objects.get()
    assert commit.author == "Jane Doe" and commit.title == "release 2.4.0: image green, timeout 45"
    assert (commit.merge_number, commit.merged_by) == ("12", "root")
    assert commit.merge_url == f"{p.GITLAB_URL}/-/merge_requests/12"
    assert commit.repository.key == "gitlab.example.com/platform/frontend-deploy"


def test_a_gitlab_retry_with_the_same_idempotency_key_is_recorded_once(hooks: Client) -> None:
    for _ in range(3):
        _gitlab(
            hooks, "Push Hook", p.gitlab_push(), **{"Idempotency-Key": "908a6d9e-45fd-46c8-97e6-c4f350f219dd"}
        )
    assert Delivery.objects.count() == 1 and Commit.objects.count() == 1


def test_a_gitlab_redelivery_without_an_id_is_recognised_by_its_body(hooks: Client) -> None:
    first = _gitlab(hooks, "Pipeline Hook", p.gitlab_pipeline())
    second = _gitlab(hooks, "Pipeline Hook", p.gitlab_pipeline())
    assert (first.status_code, second.status_code) == (201, 200)
    assert PipelineRun.objects.count() == 1


def test_a_wrong_gitlab_token_is_refused(hooks: Client) -> None:
    response = _gitlab(hooks, "Push Hook", p.gitlab_push(), token="guessed-token")
    assert response.status_code == 401 and _nothing_stored()


def test_gitlab_pipeline_events_record_the_state_per_commit(hooks: Client) -> None:
    _gitlab(hooks, "Pipeline Hook", p.gitlab_pipeline(status="running"))
    _gitlab(hooks, "Pipeline Hook", p.gitlab_pipeline(status="failed"))
    run = PipelineRun.objects.get()
    assert (run.sha, run.state, run.provider) == (p.SHA, "failure", "gitlab-ci")
    assert run.url == f"{p.GITLAB_URL}/-/pipelines/31"


def test_an_unknown_gitlab_pipeline_status_is_malformed(hooks: Client) -> None:
    response = _gitlab(hooks, "Pipeline Hook", p.gitlab_pipeline(status="exploded"))
    assert response.status_code == 400 and "exploded" in response.json()["error"]
    assert _nothing_stored()


# ---- Gitea -----------------------------------------------------------------------------------------------


def test_a_gitea_push_and_merged_pull_request_are_recorded(hooks: Client) -> None:
    assert _gitea(hooks, "push", p.gitea_push()).status_code == 201
    assert _gitea(hooks, "pull_request", p.gitea_pull_request_merged()).status_code == 201
    commit = Commit.objects.get()
    assert (commit.author, commit.merge_number, commit.merged_by) == ("Gitea", "7", "gitea")
    assert commit.repository.key == "gitea.example.com/platform/frontend-deploy"


def test_a_wrong_gitea_signature_is_refused(hooks: Client) -> None:
    response = _gitea(hooks, "push", p.gitea_push(), signature="deadbeef")
    assert response.status_code == 401 and _nothing_stored()


# ---- any CI ----------------------------------------------------------------------------------------------


def test_the_plain_pipeline_form_records_a_state(hooks: Client) -> None:
    response = _pipeline(hooks, p.plain_pipeline(state="failed"))
    assert response.status_code == 201
    run = PipelineRun.objects.get()
    assert (run.state, run.pipeline, run.provider, run.run_id) == (
        "failure",
        "argo-smoke-tests",
        "ci",
        "8812",
    )


def test_the_plain_form_needs_the_repositorys_ci_token(hooks: Client) -> None:
    assert _pipeline(hooks, p.plain_pipeline(), token="wrong-token-wrong-token").status_code == 401
    response = hooks.post("/hooks/pipeline", p.body(p.plain_pipeline()), content_type="application/json")
    assert response.status_code == 401
    assert _nothing_stored()


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ({"state": "green"}, "state"),
        ({"sha": "zzz"}, "sha"),
        ({"at": "yesterday"}, "at"),
        ({"colour": "red"}, "unknown field"),
    ],
)
def test_a_malformed_plain_form_names_the_field(hooks: Client, change: dict[str, Any], fragment: str) -> None:
    response = _pipeline(hooks, {**p.plain_pipeline(), **change})
    assert response.status_code == 400 and fragment in response.json()["error"]
    assert _nothing_stored()


# ---- floods ----------------------------------------------------------------------------------------------


def test_a_flood_is_rate_limited_per_source_and_repository(hooks: Client) -> None:
    with override_settings(GITOPS_WEBHOOK_RATE_PER_MINUTE=5):
        codes = [_github(hooks, "push", p.github_push()).status_code for _ in range(8)]
        assert codes[:5] == [201] * 5  # distinct deliveries of one commit: recorded, the commit once
        assert codes[5:] == [429, 429, 429]
        limited = _github(hooks, "push", p.github_push())
        assert limited["Retry-After"] == "60"
        # Another repository from the same address still gets through.
        assert _gitlab(hooks, "Push Hook", p.gitlab_push()).status_code == 201
        # And so does the same repository from another address.
        other = Client(REMOTE_ADDR="192.0.2.99")
        assert _github(other, "push", p.github_push(p.SHA2)).status_code == 201


def test_a_flood_of_junk_is_rate_limited_too(hooks: Client) -> None:
    with override_settings(GITOPS_WEBHOOK_RATE_PER_MINUTE=3):
        codes = [
            hooks.post(
                "/hooks/github", b"{", content_type="application/json", headers={"X-GitHub-Event": "push"}
            ).status_code
            for _ in range(5)
        ]
    assert codes == [400, 400, 400, 429, 429]
