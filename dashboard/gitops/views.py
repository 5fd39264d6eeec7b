"""Webhook receivers: the only endpoints reachable without a login; they authenticate by signature or token.

``POST /hooks/github``, ``/hooks/gitlab``, ``/hooks/gitea`` take pushes and merged pull/merge requests (and,
from GitHub and GitLab, pipeline events); ``POST /hooks/pipeline`` takes the plain JSON form from any CI with
``Authorization: Bearer <ci_token>``. Each request goes: size → JSON → which repository → rate limit (per
source IP and repository) → signature → parse → record. Every refusal is a JSON ``{"error": ...}`` with a 4xx
status and stores nothing; a redelivery answers 200 ``{"duplicate": true}``.

CSRF-exempt on purpose: the callers are servers holding a shared secret, not browsers holding a session.
Non-goals: no provider API calls, no retries (providers redeliver).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from dashboard import jsonbody
from dashboard.gitops import providers, ratelimit
from dashboard.gitops.config import RepositoryConfig, find_repository, repo_key
from dashboard.gitops.providers import BadPayload, Hook
from dashboard.gitops.services import hook_record

log = logging.getLogger(__name__)


class Refused(Exception):
    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.extra = extra


def _error(status: int, message: str, **extra: Any) -> JsonResponse:
    response = JsonResponse({"error": message, **extra}, status=status)
    if status == 429:
        response["Retry-After"] = str(ratelimit.WINDOW_SECONDS)
    return response


def _body(request: HttpRequest) -> bytes:
    limit = settings.GITOPS_WEBHOOK_MAX_BYTES
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        raise Refused(400, "Content-Length is not a number") from None
    if declared > limit:
        raise Refused(413, f"body is {declared} bytes; the limit is {limit} (GITOPS_WEBHOOK_MAX_BYTES)")
    try:
        body = request.body
    except RequestDataTooBig:
        raise Refused(413, f"body is larger than the limit of {limit} bytes") from None
    if len(body) > limit:
        raise Refused(413, f"body is {len(body)} bytes; the limit is {limit} (GITOPS_WEBHOOK_MAX_BYTES)")
    return body


def _json(request: HttpRequest, body: bytes) -> Any:
    content_type = request.META.get("CONTENT_TYPE", "").split(";")[0].strip().lower()
    if content_type and content_type != "application/json":
        raise Refused(415, f"content type {content_type!r} is not supported; send application/json")
    if not body:
        raise Refused(400, "empty body; expected a JSON object")
    try:  # size and nesting are bounded before parsing, and before the signature check reads anything
        return jsonbody.loads(body, what="body", max_bytes=settings.GITOPS_WEBHOOK_MAX_BYTES)
    except jsonbody.JsonBodyError as error:
        raise Refused(413 if error.too_large else 400, str(error)) from None


def _source_ip(request: HttpRequest) -> str:
    # REMOTE_ADDR only: X-Forwarded-For is chosen by the sender and would let a flood pick its own key.
    return str(request.META.get("REMOTE_ADDR") or "unknown")


def _limit(request: HttpRequest, repo: str) -> None:
    if not ratelimit.allow(f"{_source_ip(request)}|{repo}", settings.GITOPS_WEBHOOK_RATE_PER_MINUTE):
        raise Refused(429, "too many webhook requests from this address for this repository; retry later")


def _delivery_id(request: HttpRequest, headers: tuple[str, ...], body: bytes) -> str:
    for header in headers:
        value = request.headers.get(header)
        if value:
            return value.strip()[:200]
    # No id from the sender (older GitLab, most CIs): the same body is the same delivery.
    return "sha256:" + hashlib.sha256(body).hexdigest()


Verify = Callable[[RepositoryConfig, HttpRequest, bytes], bool]


def _receive(
    request: HttpRequest,
    provider: str,
    *,
    event_header: str | None,
    repo_urls: Callable[[Any], tuple[str, ...]],
    verify: Verify,
    parse: Callable[[str, Any], Hook],
    delivery_headers: tuple[str, ...],
) -> JsonResponse:
    counted = False
    try:
        if request.method != "POST":
            raise Refused(405, "use POST")
        event = ""
        if event_header is not None:
            event = request.headers.get(event_header, "").strip()
            if not event:
                raise Refused(400, f"missing the {event_header} header")
        body = _body(request)
        payload = _json(request, body)
        try:
            urls = repo_urls(payload)
        except BadPayload as error:
            raise Refused(400, f"malformed payload: {error}") from None
        config = find_repository(urls)
        counted = True
        _limit(request, config.key if config else "-")
        if config is None:
            named = next((k for k in map(repo_key, urls) if k), str(urls[0])[:200] if urls else "?")
            raise Refused(404, f"unknown repository {named!r}: add it to GITOPS_REPOSITORIES")
        if provider != "ci" and config.provider != provider:
            raise Refused(
                404, f"repository {config.key!r} is configured for {config.provider}, not {provider}"
            )
        if not verify(config, request, body):
            raise Refused(401, "signature or token does not match the repository's secret")
        try:
            hook = parse(event, payload)
        except BadPayload as error:
            raise Refused(400, f"malformed payload: {error}") from None
    except Refused as refused:
        answer = refused
        # Refusals before the repository is known still count, so a flood of junk is limited too.
        if not counted and not ratelimit.allow(
            f"{_source_ip(request)}|-", settings.GITOPS_WEBHOOK_RATE_PER_MINUTE
        ):
            answer = Refused(429, "too many bad webhook requests from this address; retry later")
        log.info("webhook %s refused (%d): %s", provider, answer.status, answer.message)
        return _error(answer.status, answer.message, **answer.extra)
    if hook.ignored:
        return JsonResponse({"ignored": hook.ignored, "event": hook.event}, status=202)
    recorded = hook_record(
        config, provider, _delivery_id(request, delivery_headers, body), hook, now=providers.now()
    )
    if recorded.duplicate:
        return JsonResponse({"duplicate": True, "event": hook.event}, status=200)
    return JsonResponse(
        {"recorded": {"commits": recorded.commits, "pipelines": recorded.pipelines}, "event": hook.event},
        status=201,
    )


def _bearer(request: HttpRequest) -> str | None:
    header = request.headers.get("Authorization", "")
    return header[len("Bearer ") :].strip() if header.startswith("Bearer ") else None


@csrf_exempt
def github(request: HttpRequest) -> JsonResponse:
    return _receive(
        request,
        "github",
        event_header="X-GitHub-Event",
        repo_urls=providers.github_repo_urls,
        verify=lambda c, r, b: providers.verify_github(c.secret, b, r.headers.get("X-Hub-Signature-256")),
        parse=providers.parse_github,
        delivery_headers=("X-GitHub-Delivery",),
    )


@csrf_exempt
def gitlab(request: HttpRequest) -> JsonResponse:
    return _receive(
        request,
        "gitlab",
        event_header="X-Gitlab-Event",
        repo_urls=providers.gitlab_repo_urls,
        verify=lambda c, r, b: providers.verify_token(c.secret, r.headers.get("X-Gitlab-Token")),
        parse=providers.parse_gitlab,
        delivery_headers=("Idempotency-Key", "X-Gitlab-Event-UUID"),
    )


@csrf_exempt
def gitea(request: HttpRequest) -> JsonResponse:
    return _receive(
        request,
        "gitea",
        event_header="X-Gitea-Event",
        repo_urls=providers.github_repo_urls,
        verify=lambda c, r, b: providers.verify_gitea(c.secret, b, r.headers.get("X-Gitea-Signature")),
        parse=providers.parse_gitea,
        delivery_headers=("X-Gitea-Delivery",),
    )


@csrf_exempt
def pipeline(request: HttpRequest) -> JsonResponse:
    return _receive(
        request,
        "ci",
        event_header=None,
        repo_urls=providers.plain_repo_urls,
        verify=lambda c, r, b: providers.verify_token(c.ci_token, _bearer(r)),
        parse=lambda _event, payload: providers.parse_plain(payload),
        delivery_headers=("Idempotency-Key",),
    )
