"""Reading one container's log from the API server (``pods/log``), for a page that is looking at it.

``pod_log_lines`` opens ``GET /api/v1/namespaces/{ns}/pods/{pod}/log?follow=true`` with the official
``kubernetes.aio`` client, for the cluster named as the actions name it (``dashboard.kube.actions.clusters``,
with the same impersonation rule), and yields its lines as text as they arrive. Leaving the ``async for``
(the page went away: the consumer's task is cancelled) closes the response and the client's connection
pool, so the API server stops streaming at once. The watcher never calls this: logs are read only while
someone looks.

Non-goals: choosing the pod (``dashboard.domain.pod_logs``), permissions and audit (the consumer),
reconnecting (the page asks again).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

import aiohttp
from multidict import CIMultiDict

from dashboard.kube.actions import ClusterUnavailable, KubeError, clusters
from dashboard.kube.connection import ConfigError, load_configuration

CONNECT_SECONDS = 10.0
MAX_LINE_BYTES = 16 * 1024  # a longer line is cut: a page shows text, not a binary dump


async def pod_log_lines(
    cluster: str,
    namespace: str,
    pod: str,
    *,
    container: str | None,
    since_seconds: int | None,
    tail_lines: int | None,
    follow: bool = True,
    impersonate: tuple[str, Sequence[str]] | None = None,
) -> AsyncIterator[str]:
    """The container's log lines (without their newline), following new ones while ``follow``."""
    from kubernetes.aio import client

    config = clusters().get(cluster)
    if config is None:
        raise ClusterUnavailable(
            0, f"cluster {cluster!r} is not configured (known: {', '.join(sorted(clusters()))})"
        )
    try:
        configuration = await load_configuration(config.kubeconfig, config.context)
    except ConfigError as error:
        raise ClusterUnavailable(0, f"cluster {cluster!r}: {error}") from None
    api_client = client.ApiClient(configuration)
    _stream_requests(api_client, impersonate)
    try:
        api = client.CoreV1Api(api_client)
        kwargs: dict[str, Any] = {"follow": follow, "timestamps": False}
        if container:
            kwargs["container"] = container
        if since_seconds is not None:
            kwargs["since_seconds"] = since_seconds
        if tail_lines is not None:
            kwargs["tail_lines"] = tail_lines
        try:
            # The aiohttp response itself, its status unchecked and its body unread.
            raw = await api.read_namespaced_pod_log_without_preload_content(pod, namespace, **kwargs)
        except (aiohttp.ClientError, OSError) as error:
            raise KubeError(0, f"the API server did not answer: {error}") from None
        try:
            if raw.status >= 400:
                raise KubeError(raw.status, _message(await raw.read(), raw.status))
            while True:
                line = await raw.content.readline()
                if not line:
                    return
                yield line[:MAX_LINE_BYTES].decode("utf-8", errors="replace").rstrip("\r\n")
        finally:
            raw.close()
    finally:
        await api_client.close()


def _stream_requests(api_client: Any, impersonate: tuple[str, Sequence[str]] | None) -> None:
    """Make the client's requests fit a stream: a connect timeout but no total or read timeout (a followed
    log may be quiet for long, and the generated client's only timeout is a total one; the page leaving ends
    the request), and, when impersonating, ``Impersonate-User`` plus one ``Impersonate-Group`` per group
    (the generated client keeps headers in a dict, which cannot repeat a name)."""
    rest = api_client.rest_client
    original = rest.request
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=CONNECT_SECONDS)

    async def request(method: str, url: str, headers: Any = None, **kwargs: Any) -> Any:
        merged: CIMultiDict[str] = CIMultiDict(headers or {})
        if impersonate is not None:
            merged.add("Impersonate-User", impersonate[0])
            for group in impersonate[1]:
                merged.add("Impersonate-Group", group)
        kwargs["_request_timeout"] = timeout
        return await original(method, url, headers=merged, **kwargs)

    rest.request = request


def _message(body: bytes, status: int) -> str:
    import json

    try:
        parsed = json.loads(body)
        if isinstance(parsed, dict) and parsed.get("message"):
            return str(parsed["message"])
    except ValueError:
        pass
    return body[:200].decode("utf-8", errors="replace") or f"HTTP {status}"
