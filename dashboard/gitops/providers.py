"""Webhook payloads from GitHub, GitLab, Gitea and any CI, verified and read into plain facts (pure).

Each ``parse_*`` turns one decoded payload into a ``Hook``: the repository URLs it names, the commits it
reports (pushed commits and merged pull/merge requests) and the pipeline states (GitHub ``workflow_run`` /
``check_suite``, GitLab pipeline events, the plain JSON form). Events that carry nothing for the chain (a
ping, an opened pull request, a branch deletion) give an empty ``Hook`` with ``ignored`` saying why. A payload
that lacks what its event must have raises ``BadPayload`` naming the field.

Signatures: GitHub signs the raw body with HMAC-SHA256 (``X-Hub-Signature-256: sha256=<hex>``), Gitea too
(``X-Gitea-Signature: <hex>``); GitLab sends the shared secret itself (``X-Gitlab-Token``). All comparisons
are constant-time.

The plain pipeline form, for any CI (``POST /hooks/pipeline`` with ``Authorization: Bearer <ci_token>``)::

    {"repository": "https://github.com/acme/deploy",   # required: the repository URL as configured
     "sha": "3f2a…",                                     # required: the commit the pipeline ran for
     "state": "success",                                 # required: see STATES (synonyms accepted)
     "pipeline": "build-and-test",                       # optional: the pipeline's name
     "run_id": "8812",                                   # optional: stable per run; updates replace its state
     "url": "https://ci.example.com/runs/8812",          # optional: a link to the run
     "ref": "main",                                      # optional
     "at": "2026-11-29T10:00:00Z"}                       # optional: when the state was reached (default: now)

Non-goals: no HTTP, no storage, no provider API calls (payloads are taken as sent).
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from dashboard.domain.objects import parse_time

PENDING, RUNNING, SUCCESS, FAILURE, CANCELED, SKIPPED = (
    "pending",
    "running",
    "success",
    "failure",
    "canceled",
    "skipped",
)
STATES = (PENDING, RUNNING, SUCCESS, FAILURE, CANCELED, SKIPPED)
TERMINAL = frozenset({SUCCESS, FAILURE, CANCELED, SKIPPED})

_SHA = re.compile(r"^[0-9a-fA-F]{7,64}$")
_GITLAB_TIME = re.compile(r"^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}) (UTC|[+-]\d{4})$")
_MAX_TEXT = 10_000


class BadPayload(ValueError):
    """The payload is not what its event must be; the message names the field."""


@dataclass(frozen=True)
class CommitFact:
    sha: str
    author: str = ""
    title: str = ""
    message: str = ""
    url: str = ""
    at: datetime | None = None
    ref: str = ""
    # Set when the commit is the result of a merged pull/merge request:
    merge_number: str = ""
    merge_title: str = ""
    merge_url: str = ""
    merged_by: str = ""
    merged_at: datetime | None = None


@dataclass(frozen=True)
class PipelineFact:
    sha: str
    provider: str
    state: str
    pipeline: str = ""
    run_id: str = ""
    url: str = ""
    ref: str = ""
    at: datetime | None = None


@dataclass(frozen=True)
class Hook:
    event: str
    repo_urls: tuple[str, ...]
    commits: tuple[CommitFact, ...] = ()
    pipelines: tuple[PipelineFact, ...] = ()
    ignored: str = ""  # why nothing is recorded, for the response
    extra: dict[str, Any] = field(default_factory=dict)


# ---- signatures ----------------------------------------------------------------------------------------


def hmac_hex(secret: str, body: bytes) -> str:
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def verify_github(secret: str, body: bytes, header: str | None) -> bool:
    if not header or not header.startswith("sha256="):
        return False
    return hmac.compare_digest(header[len("sha256=") :].strip().lower(), hmac_hex(secret, body))


def verify_gitea(secret: str, body: bytes, header: str | None) -> bool:
    return bool(header) and hmac.compare_digest((header or "").strip().lower(), hmac_hex(secret, body))


def verify_token(expected: str, given: str | None) -> bool:
    """GitLab's ``X-Gitlab-Token`` and the CI bearer token: the secret itself, compared in constant time."""
    return bool(expected) and bool(given) and hmac.compare_digest((given or "").encode(), expected.encode())


# ---- field readers ---------------------------------------------------------------------------------------


def _map(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise BadPayload(f"{where}: expected an object")
    return value


def _opt_map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _text(value: Any) -> str:
    return value[:_MAX_TEXT] if isinstance(value, str) else ""


def _id(value: Any) -> str:
    if isinstance(value, bool):
        return ""
    return str(value)[:128] if isinstance(value, str | int) else ""


def _sha(value: Any, where: str) -> str:
    if not isinstance(value, str) or not _SHA.match(value):
        raise BadPayload(f"{where}: expected a commit sha (7 to 64 hex digits), got {str(value)[:80]!r}")
    return value.lower()


def _time(value: Any) -> datetime | None:
    """RFC 3339, or GitLab's ``2016-08-12 15:23:28 UTC`` form."""
    moment = parse_time(value)
    if moment is not None or not isinstance(value, str):
        return moment
    match = _GITLAB_TIME.match(value.strip())
    if not match:
        return None
    day, clock, zone = match.groups()
    offset = "+00:00" if zone == "UTC" else f"{zone[:3]}:{zone[3:]}"
    return parse_time(f"{day}T{clock}{offset}")


def _title(message: str) -> str:
    return message.strip().splitlines()[0][:500] if message.strip() else ""


def _branch(ref: Any) -> str:
    text = _text(ref)
    return text[len("refs/heads/") :] if text.startswith("refs/heads/") else text


def _urls(*holders: Any, keys: Sequence[str]) -> tuple[str, ...]:
    found: list[str] = []
    for holder in holders:
        if isinstance(holder, Mapping):
            found.extend(holder[k] for k in keys if isinstance(holder.get(k), str) and holder[k])
    return tuple(dict.fromkeys(found))


def _repo_urls_github(payload: Mapping[str, Any]) -> tuple[str, ...]:
    repo = _map(payload.get("repository"), "repository")
    urls = _urls(repo, keys=("html_url", "clone_url", "ssh_url", "git_url", "url"))
    if not urls:
        raise BadPayload("repository: no html_url or clone_url")
    return urls


def _repo_urls_gitlab(payload: Mapping[str, Any]) -> tuple[str, ...]:
    urls = _urls(
        payload.get("project"),
        payload.get("repository"),
        keys=("web_url", "git_http_url", "git_ssh_url", "http_url", "ssh_url", "homepage"),
    )
    if not urls:
        raise BadPayload("project: no web_url or git_http_url")
    return urls


def _pushed_commits(payload: Mapping[str, Any], *, gitlab: bool = False) -> tuple[CommitFact, ...]:
    ref = _branch(payload.get("ref"))
    commits = payload.get("commits")
    if not isinstance(commits, list):
        raise BadPayload("commits: expected a list")
    out = []
    for i, raw in enumerate(commits):
        commit = _map(raw, f"commits[{i}]")
        author = _opt_map(commit.get("author"))
        message = _text(commit.get("message"))
        out.append(
            CommitFact(
                sha=_sha(commit.get("id"), f"commits[{i}].id"),
                author=_text(author.get("name")) or _text(author.get("username")),
                title=_text(commit.get("title")) if gitlab and commit.get("title") else _title(message),
                message=message,
                url=_text(commit.get("url")),
                at=_time(commit.get("timestamp")),
                ref=ref,
            )
        )
    return tuple(out)


def github_repo_urls(payload: Any) -> tuple[str, ...]:
    """The repository URLs a GitHub or Gitea payload names (read before its signature is checked)."""
    return _repo_urls_github(_map(payload, "body"))


def gitlab_repo_urls(payload: Any) -> tuple[str, ...]:
    return _repo_urls_gitlab(_map(payload, "body"))


def plain_repo_urls(payload: Any) -> tuple[str, ...]:
    repository = _map(payload, "body").get("repository")
    if not isinstance(repository, str) or not repository:
        raise BadPayload("repository: expected the repository URL")
    return (repository,)


# ---- GitHub ----------------------------------------------------------------------------------------------


def _github_state(status: Any, conclusion: Any) -> str:
    if status != "completed":
        return RUNNING if status == "in_progress" else PENDING
    return {
        "success": SUCCESS,
        "failure": FAILURE,
        "timed_out": FAILURE,
        "startup_failure": FAILURE,
        "cancelled": CANCELED,
        "stale": CANCELED,
        "skipped": SKIPPED,
        "neutral": SKIPPED,
        "action_required": PENDING,
    }.get(str(conclusion), FAILURE)


def _pull_request_merge(payload: Mapping[str, Any], provider: str) -> Hook:
    urls = _repo_urls_github(payload)
    pr = _map(payload.get("pull_request"), "pull_request")
    if payload.get("action") != "closed" or pr.get("merged") is not True:
        return Hook(
            f"{provider}.pull_request", urls, ignored=f"pull request {payload.get('action')!s}, not merged"
        )
    sha = _sha(pr.get("merge_commit_sha"), "pull_request.merge_commit_sha")
    merged_by = _opt_map(pr.get("merged_by")).get("login") or _opt_map(payload.get("sender")).get("login")
    title = _text(pr.get("title"))
    fact = CommitFact(
        sha=sha,
        author=_text(_opt_map(pr.get("user")).get("login")),
        title=title,
        url=_text(pr.get("html_url")),
        at=_time(pr.get("merged_at")),
        ref=_text(_opt_map(pr.get("base")).get("ref")),
        merge_number=_id(pr.get("number")),
        merge_title=title,
        merge_url=_text(pr.get("html_url")),
        merged_by=_text(merged_by),
        merged_at=_time(pr.get("merged_at")),
    )
    return Hook(f"{provider}.pull_request", urls, commits=(fact,))


def parse_github(event: str, payload: Any) -> Hook:
    payload = _map(payload, "body")
    if event == "ping":
        return Hook("github.ping", _repo_urls_github(payload), ignored="ping")
    if event == "push":
        urls = _repo_urls_github(payload)
        if payload.get("deleted") is True:
            return Hook("github.push", urls, ignored="branch deleted")
        return Hook("github.push", urls, commits=_pushed_commits(payload))
    if event == "pull_request":
        return _pull_request_merge(payload, "github")
    if event == "workflow_run":
        urls = _repo_urls_github(payload)
        run = _map(payload.get("workflow_run"), "workflow_run")
        fact = PipelineFact(
            sha=_sha(run.get("head_sha"), "workflow_run.head_sha"),
            provider="github-actions",
            state=_github_state(run.get("status"), run.get("conclusion")),
            pipeline=_text(run.get("name")) or _text(_opt_map(payload.get("workflow")).get("name")),
            run_id=f"workflow_run:{_id(run.get('id'))}",
            url=_text(run.get("html_url")),
            ref=_text(run.get("head_branch")),
            at=_time(run.get("updated_at")),
        )
        return Hook("github.workflow_run", urls, pipelines=(fact,))
    if event == "check_suite":
        urls = _repo_urls_github(payload)
        suite = _map(payload.get("check_suite"), "check_suite")
        sha = _sha(suite.get("head_sha"), "check_suite.head_sha")
        html = _text(_opt_map(payload.get("repository")).get("html_url"))
        fact = PipelineFact(
            sha=sha,
            provider="github-checks",
            state=_github_state(suite.get("status"), suite.get("conclusion")),
            pipeline=_text(_opt_map(suite.get("app")).get("name")) or "checks",
            run_id=f"check_suite:{_id(suite.get('id'))}",
            url=f"{html}/commit/{sha}/checks" if html else "",
            ref=_text(suite.get("head_branch")),
            at=_time(suite.get("updated_at")),
        )
        return Hook("github.check_suite", urls, pipelines=(fact,))
    return Hook(f"github.{event}", _repo_urls_github(payload), ignored=f"event {event!r} is not used")


# ---- GitLab ----------------------------------------------------------------------------------------------

_GITLAB_STATES = {
    "created": PENDING,
    "waiting_for_resource": PENDING,
    "preparing": PENDING,
    "pending": PENDING,
    "scheduled": PENDING,
    "manual": PENDING,
    "waiting_for_callback": PENDING,
    "running": RUNNING,
    "success": SUCCESS,
    "failed": FAILURE,
    "canceled": CANCELED,
    "canceling": CANCELED,
    "skipped": SKIPPED,
}


def parse_gitlab(event: str, payload: Any) -> Hook:
    payload = _map(payload, "body")
    kind = payload.get("object_kind")
    if kind == "push":
        return Hook("gitlab.push", _repo_urls_gitlab(payload), commits=_pushed_commits(payload, gitlab=True))
    if kind == "merge_request":
        urls = _repo_urls_gitlab(payload)
        attrs = _map(payload.get("object_attributes"), "object_attributes")
        if attrs.get("action") != "merge" and attrs.get("state") != "merged":
            return Hook(
                "gitlab.merge_request", urls, ignored=f"merge request {attrs.get('action')!s}, not merged"
            )
        last = _opt_map(attrs.get("last_commit"))
        # A fast-forward merge has no merge commit: the MR's last commit is what landed.
        sha_field = "merge_commit_sha" if attrs.get("merge_commit_sha") else "last_commit.id"
        sha = _sha(attrs.get("merge_commit_sha") or last.get("id"), f"object_attributes.{sha_field}")
        user = _opt_map(payload.get("user"))
        title = _text(attrs.get("title"))
        fact = CommitFact(
            sha=sha,
            author=_text(_opt_map(last.get("author")).get("name")),
            title=title,
            url=_text(attrs.get("url")),
            at=_time(attrs.get("updated_at")),
            ref=_text(attrs.get("target_branch")),
            merge_number=_id(attrs.get("iid")),
            merge_title=title,
            merge_url=_text(attrs.get("url")),
            merged_by=_text(user.get("username")) or _text(user.get("name")),
            merged_at=_time(attrs.get("updated_at")),
        )
        return Hook("gitlab.merge_request", urls, commits=(fact,))
    if kind == "pipeline":
        urls = _repo_urls_gitlab(payload)
        attrs = _map(payload.get("object_attributes"), "object_attributes")
        status = attrs.get("status")
        if status not in _GITLAB_STATES:
            raise BadPayload(f"object_attributes.status: unknown pipeline status {str(status)[:40]!r}")
        pipeline_id = _id(attrs.get("id"))
        web = _text(_opt_map(payload.get("project")).get("web_url"))
        # A retried pipeline keeps its id: the newest time in the event orders the updates.
        times = [_time(attrs.get("finished_at")), _time(attrs.get("created_at"))]
        for build in payload.get("builds") or ():
            if isinstance(build, Mapping):
                times += [_time(build.get("started_at")), _time(build.get("finished_at"))]
        known = [t for t in times if t is not None]
        run = PipelineFact(
            sha=_sha(attrs.get("sha"), "object_attributes.sha"),
            provider="gitlab-ci",
            state=_GITLAB_STATES[str(status)],
            pipeline=_text(attrs.get("name")) or f"pipeline #{pipeline_id}",
            run_id=f"pipeline:{pipeline_id}",
            url=_text(attrs.get("url"))
            or (f"{web}/-/pipelines/{pipeline_id}" if web and pipeline_id else ""),
            ref=_text(attrs.get("ref")),
            at=max(known) if known else None,
        )
        return Hook("gitlab.pipeline", urls, pipelines=(run,))
    if not isinstance(kind, str):
        raise BadPayload("object_kind: missing")
    return Hook(f"gitlab.{kind}", _repo_urls_gitlab(payload), ignored=f"event {kind!r} is not used")


# ---- Gitea -----------------------------------------------------------------------------------------------


def parse_gitea(event: str, payload: Any) -> Hook:
    payload = _map(payload, "body")
    if event == "push":
        urls = _repo_urls_github(payload)
        return Hook("gitea.push", urls, commits=_pushed_commits(payload))
    if event == "pull_request":
        return _pull_request_merge(payload, "gitea")
    return Hook(f"gitea.{event}", _repo_urls_github(payload), ignored=f"event {event!r} is not used")


# ---- any CI ----------------------------------------------------------------------------------------------

_PLAIN_STATES = {
    **{s: s for s in STATES},
    "queued": PENDING,
    "waiting": PENDING,
    "in_progress": RUNNING,
    "started": RUNNING,
    "passed": SUCCESS,
    "succeeded": SUCCESS,
    "successful": SUCCESS,
    "failed": FAILURE,
    "error": FAILURE,
    "errored": FAILURE,
    "cancelled": CANCELED,
    "aborted": CANCELED,
}
_PLAIN_KEYS = {"repository", "sha", "state", "pipeline", "run_id", "url", "ref", "at"}


def parse_plain(payload: Any) -> Hook:
    payload = _map(payload, "body")
    unknown = sorted(set(payload) - _PLAIN_KEYS)
    if unknown:
        raise BadPayload(f"unknown field(s) {', '.join(unknown)}; allowed: {', '.join(sorted(_PLAIN_KEYS))}")
    repository = payload.get("repository")
    if not isinstance(repository, str) or not repository:
        raise BadPayload("repository: expected the repository URL")
    state = payload.get("state")
    if not isinstance(state, str) or state.lower() not in _PLAIN_STATES:
        raise BadPayload(f"state: expected one of {', '.join(STATES)}, got {str(state)[:40]!r}")
    at = payload.get("at")
    moment = _time(at) if at is not None else None
    if at is not None and moment is None:
        raise BadPayload(f"at: expected an RFC 3339 time, got {str(at)[:40]!r}")
    for key in ("pipeline", "run_id", "url", "ref"):
        if payload.get(key) is not None and not isinstance(payload.get(key), str | int):
            raise BadPayload(f"{key}: expected a string")
    sha = _sha(payload.get("sha"), "sha")
    fact = PipelineFact(
        sha=sha,
        provider="ci",
        state=_PLAIN_STATES[state.lower()],
        pipeline=_text(payload.get("pipeline")) or "pipeline",
        run_id=_id(payload.get("run_id")) or f"{_text(payload.get('pipeline')) or 'pipeline'}@{sha}",
        url=_text(payload.get("url")),
        ref=_text(payload.get("ref")),
        at=moment,
    )
    return Hook("ci.pipeline", (repository,), pipelines=(fact,))


def now() -> datetime:
    return datetime.now(UTC)
