"""Webhook payloads shaped like the providers' documented examples (written by hand), and repo settings."""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

GITHUB_URL = "https://github.com/acme/frontend-deploy"
GITLAB_URL = "https://gitlab.example.com/platform/frontend-deploy"
GITEA_URL = "https://gitea.example.com/platform/frontend-deploy"
SECRET = "s3cret-webhook-key-0123456789"
CI_TOKEN = "ci-token-abcdefghijklmnop"

REPOSITORIES = {
    GITHUB_URL: {"provider": "github", "secret": SECRET, "ci_token": CI_TOKEN},
    GITLAB_URL + ".git": {"provider": "gitlab", "secret": SECRET},
    "git@gitea.example.com:platform/frontend-deploy.git": {"provider": "gitea", "secret": SECRET},
}

SHA = "9f3a1c2e4b5d6f708192a3b4c5d6e7f809a1b2c3"
SHA2 = "1b2c3d4e5f60718293a4b5c6d7e8f9012a3b4c5d"


def body(payload: Any) -> bytes:
    return json.dumps(payload).encode()


def sign(data: bytes, secret: str = SECRET) -> str:
    return hmac.new(secret.encode(), data, hashlib.sha256).hexdigest()


def _github_repo(url: str = GITHUB_URL) -> dict[str, Any]:
    name = url.rsplit("/", 1)[1]
    return {
        "id": 1296269,
        "name": name,
        "full_name": f"acme/{name}",
        "private": True,
        "html_url": url,
        "url": f"https://api.github.com/repos/acme/{name}",
        "clone_url": f"{url}.git",
        "ssh_url": f"git@github.com:acme/{name}.git",
        "default_branch": "main",
    }


def github_push(sha: str = SHA, message: str = "release 2.4.0: image green, timeout 45") -> dict[str, Any]:
    return {
        "ref": "refs/heads/main",
        "before": "0" * 39 + "1",
        "after": sha,
        "created": False,
        "deleted": False,
        "forced": False,
        "compare": f"{GITHUB_URL}/compare/000000000001...{sha[:12]}",
        "commits": [
            {
                "id": sha,
                "tree_id": "a" * 40,
                "distinct": True,
                "message": message + "\n\nSigned-off-by: Release Bot <release-bot@example.com>",
                "timestamp": "2026-11-29T10:00:20+00:00",
                "url": f"{GITHUB_URL}/commit/{sha}",
                "author": {
                    "name": "Release Bot",
                    "email": "release-bot@example.com",
                    "username": "release-bot",
                },
                "committer": {"name": "GitHub", "email": "noreply@github.com", "username": "web-flow"},
                "added": [],
                "removed": [],
                "modified": ["values.yaml"],
            }
        ],
        "head_commit": None,
        "repository": _github_repo(),
        "pusher": {"name": "release-bot", "email": "release-bot@example.com"},
        "sender": {"login": "release-bot", "id": 4},
    }


def github_pull_request_merged(sha: str = SHA, number: int = 1347) -> dict[str, Any]:
    return {
        "action": "closed",
        "number": number,
        "pull_request": {
            "url": f"https://api.github.com/repos/acme/frontend-deploy/pulls/{number}",
            "html_url": f"{GITHUB_URL}/pull/{number}",
            "number": number,
            "state": "closed",
            "title": "Release 2.4.0",
            "user": {"login": "octocat", "id": 1},
            "body": "Bumps the image and the timeout.",
            "created_at": "2026-11-29T09:40:00Z",
            "closed_at": "2026-11-29T10:00:19Z",
            "merged_at": "2026-11-29T10:00:19Z",
            "merge_commit_sha": sha,
            "merged": True,
            "merged_by": {"login": "hubot", "id": 2},
            "head": {"ref": "release-2.4.0", "sha": "c" * 40},
            "base": {"ref": "main", "sha": "d" * 40},
        },
        "repository": _github_repo(),
        "sender": {"login": "hubot", "id": 2},
    }


def github_workflow_run(
    sha: str = SHA, status: str = "completed", conclusion: str | None = "failure"
) -> dict:
    return {
        "action": "completed" if status == "completed" else "in_progress",
        "workflow_run": {
            "id": 30433642,
            "name": "Build and deploy",
            "head_branch": "main",
            "head_sha": sha,
            "run_number": 562,
            "run_attempt": 1,
            "event": "push",
            "status": status,
            "conclusion": conclusion,
            "html_url": f"{GITHUB_URL}/actions/runs/30433642",
            "created_at": "2026-11-29T10:00:25Z",
            "updated_at": "2026-11-29T10:04:10Z" if status == "completed" else "2026-11-29T10:01:00Z",
        },
        "workflow": {"id": 159038, "name": "Build and deploy", "path": ".github/workflows/deploy.yml"},
        "repository": _github_repo(),
        "sender": {"login": "release-bot", "id": 4},
    }


def github_check_suite(sha: str = SHA, conclusion: str = "success") -> dict[str, Any]:
    return {
        "action": "completed",
        "check_suite": {
            "id": 118578147,
            "head_branch": "main",
            "head_sha": sha,
            "status": "completed",
            "conclusion": conclusion,
            "url": "https://api.github.com/repos/acme/frontend-deploy/check-suites/118578147",
            "app": {"id": 29310, "slug": "octoapp", "name": "Octocat CI"},
            "created_at": "2026-11-29T10:00:25Z",
            "updated_at": "2026-11-29T10:03:00Z",
        },
        "repository": _github_repo(),
        "sender": {"login": "octoapp[bot]", "id": 5},
    }


def _gitlab_project() -> dict[str, Any]:
    return {
        "id": 15,
        "name": "frontend-deploy",
        "path_with_namespace": "platform/frontend-deploy",
        "web_url": GITLAB_URL,
        "git_ssh_url": "git@gitlab.example.com:platform/frontend-deploy.git",
        "git_http_url": GITLAB_URL + ".git",
        "default_branch": "main",
    }


def gitlab_push(sha: str = SHA) -> dict[str, Any]:
    return {
        "object_kind": "push",
        "event_name": "push",
        "before": "95790bf891e76fee5e1747ab589903a6a1f80f22",
        "after": sha,
        "ref": "refs/heads/main",
        "checkout_sha": sha,
        "user_name": "Jane Doe",
        "user_username": "jdoe",
        "project_id": 15,
        "project": _gitlab_project(),
        "commits": [
            {
                "id": sha,
                "message": "release 2.4.0: image green, timeout 45\n",
                "title": "release 2.4.0: image green, timeout 45",
                "timestamp": "2026-11-29T11:00:20+01:00",
                "url": f"{GITLAB_URL}/-/commit/{sha}",
                "author": {"name": "Jane Doe", "email": "jane@example.com"},
                "added": [],
                "modified": ["values.yaml"],
                "removed": [],
            }
        ],
        "total_commits_count": 1,
        "repository": {
            "name": "frontend-deploy",
            "url": "git@gitlab.example.com:platform/frontend-deploy.git",
            "homepage": GITLAB_URL,
            "git_http_url": GITLAB_URL + ".git",
            "git_ssh_url": "git@gitlab.example.com:platform/frontend-deploy.git",
        },
    }


def gitlab_merge_request_merged(sha: str = SHA) -> dict[str, Any]:
    return {
        "object_kind": "merge_request",
        "event_type": "merge_request",
        "user": {"id": 1, "name": "Administrator", "username": "root"},
        "project": _gitlab_project(),
        "object_attributes": {
            "id": 99,
            "iid": 12,
            "title": "Release 2.4.0",
            "state": "merged",
            "action": "merge",
            "target_branch": "main",
            "source_branch": "release-2.4.0",
            "merge_commit_sha": sha,
            "url": f"{GITLAB_URL}/-/merge_requests/12",
            "created_at": "2026-11-29 09:40:00 UTC",
            "updated_at": "2026-11-29 10:00:19 UTC",
            "last_commit": {
                "id": "e" * 40,
                "message": "bump",
                "timestamp": "2026-11-29T09:59:00+00:00",
                "author": {"name": "Jane Doe", "email": "jane@example.com"},
            },
        },
        "repository": {"name": "frontend-deploy", "url": GITLAB_URL + ".git", "homepage": GITLAB_URL},
    }


def gitlab_pipeline(sha: str = SHA, status: str = "failed", pipeline_id: int = 31) -> dict[str, Any]:
    return {
        "object_kind": "pipeline",
        "object_attributes": {
            "id": pipeline_id,
            "iid": 3,
            "name": "Deploy pipeline",
            "ref": "main",
            "tag": False,
            "sha": sha,
            "before_sha": "bcbb5ec396a2c0f828686f14fac9b80b780504f2",
            "source": "push",
            "status": status,
            "detailed_status": status,
            "stages": ["build", "test", "deploy"],
            "created_at": "2026-11-29 10:00:25 UTC",
            "finished_at": "2026-11-29 10:05:00 UTC" if status in ("success", "failed") else None,
            "duration": 275,
            "url": f"{GITLAB_URL}/-/pipelines/{pipeline_id}",
        },
        "user": {"id": 1, "name": "Administrator", "username": "root"},
        "project": _gitlab_project(),
        "commit": {"id": sha, "message": "release 2.4.0", "url": f"{GITLAB_URL}/-/commit/{sha}"},
        "builds": [],
    }


def gitea_push(sha: str = SHA) -> dict[str, Any]:
    return {
        "ref": "refs/heads/main",
        "before": "28e1879d029cb852e4844d9c718537df08844e03",
        "after": sha,
        "compare_url": f"{GITEA_URL}/compare/28e1879d029c...{sha[:12]}",
        "commits": [
            {
                "id": sha,
                "message": "release 2.4.0: image green, timeout 45\n",
                "url": f"{GITEA_URL}/commit/{sha}",
                "author": {"name": "Gitea", "email": "someone@gitea.io", "username": "gitea"},
                "committer": {"name": "Gitea", "email": "someone@gitea.io", "username": "gitea"},
                "timestamp": "2026-11-29T05:00:20-05:00",
            }
        ],
        "repository": {
            "id": 140,
            "owner": {"id": 1, "login": "platform", "full_name": "", "username": "platform"},
            "name": "frontend-deploy",
            "full_name": "platform/frontend-deploy",
            "private": False,
            "html_url": GITEA_URL,
            "ssh_url": "git@gitea.example.com:platform/frontend-deploy.git",
            "clone_url": GITEA_URL + ".git",
            "default_branch": "main",
        },
        "pusher": {"id": 1, "login": "gitea", "username": "gitea"},
        "sender": {"id": 1, "login": "gitea", "username": "gitea"},
    }


def gitea_pull_request_merged(sha: str = SHA) -> dict[str, Any]:
    repo = gitea_push()["repository"]
    return {
        "action": "closed",
        "number": 7,
        "pull_request": {
            "id": 70,
            "number": 7,
            "user": {"id": 3, "login": "dev"},
            "title": "Release 2.4.0",
            "state": "closed",
            "html_url": f"{GITEA_URL}/pulls/7",
            "merged": True,
            "merged_at": "2026-11-29T10:00:19Z",
            "merge_commit_sha": sha,
            "merged_by": {"id": 1, "login": "gitea"},
            "base": {"ref": "main"},
            "head": {"ref": "release-2.4.0"},
        },
        "repository": repo,
        "sender": {"id": 1, "login": "gitea"},
    }


def plain_pipeline(sha: str = SHA, state: str = "success", **extra: Any) -> dict[str, Any]:
    return {
        "repository": GITHUB_URL,
        "sha": sha,
        "state": state,
        "pipeline": "argo-smoke-tests",
        "run_id": "8812",
        "url": "https://ci.example.com/runs/8812",
        "ref": "main",
        "at": "2026-11-29T10:06:00Z",
        **extra,
    }
