"""Connecting to a Kubernetes API: kubeconfig (context selectable) or in-cluster configuration.

The official client's loaders (``kubernetes.aio.config`` / ``kubernetes.config``) read the configuration
and handle credentials (tokens, client certificates, exec plugins, refresh); static credentials are read
without them (``static_config``: the same result, without importing the official client at every start
of a watcher). The watcher then talks to the API through ``KubeApi``, which lists with aiohttp, reads
watch streams with its own protocol (``dashboard.kube.stream``) and keeps objects as plain JSON dicts:
watching thousands of objects through the generated models would spend most of the CPU on
deserialization, and the domain model reads dicts anyway.

``sync_api_client()`` gives the synchronous official client for code outside the event loop (actions).

Non-goals: no object models, no retries (the watch loop decides about those), no writes.
"""

from __future__ import annotations

import functools
import os
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

from dashboard.kube import static_config
from dashboard.kube.static_config import ConfigError
from dashboard.kube.stream import ApiError, loads, open_watch, reason_of, watch_url

__all__ = ["ApiError", "ConfigError", "KubeApi", "Timeouts"]

RELOAD_INTERVAL = 5.0  # seconds between two re-reads of the configuration

# Reads one page of a list: (path, query parameters, timeouts) → the page.
PageReader = Callable[[str, Mapping[str, str], "Timeouts"], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class Timeouts:
    connect: float = 10.0
    read: float = 60.0


async def load_configuration(kubeconfig: str | None = None, context: str | None = None) -> Any:
    """A ``kubernetes.aio.client.Configuration`` from a kubeconfig, else from the pod's service account."""
    from kubernetes.aio import client, config

    configuration = client.Configuration()
    path = kubeconfig or _default_kubeconfig()
    if path is None:
        try:
            config.load_incluster_config(client_configuration=configuration)
        except config.ConfigException as error:
            raise ConfigError(
                f"no kubeconfig given (--kubeconfig / KUBECONFIG / ~/.kube/config) and not running in a "
                f"cluster: {error}"
            ) from None
        return configuration
    if not Path(path).is_file():
        raise ConfigError(f"kubeconfig {path!r} does not exist")
    if context is not None:
        names = [c.get("name") for c in config.list_kube_config_contexts(path)[0]]
        if context not in names:
            raise ConfigError(
                f"context {context!r} is not in {path} (contexts: {', '.join(map(str, names))})"
            )
    try:
        await config.load_kube_config(config_file=path, context=context, client_configuration=configuration)
    except (config.ConfigException, OSError, ValueError) as error:
        raise ConfigError(f"kubeconfig {path!r} could not be loaded: {error}") from None
    return configuration


async def load_connection(kubeconfig: str | None = None, context: str | None = None) -> Any:
    """What ``KubeApi`` connects with: ``load_configuration``'s result, read without the official client
    when the credentials are static."""
    read = static_config.read(kubeconfig or _default_kubeconfig(), context)
    return read if read is not None else await load_configuration(kubeconfig, context)


def sync_api_client(kubeconfig: str | None = None, context: str | None = None) -> Any:
    """The synchronous official ``ApiClient`` for the same configuration rules."""
    from kubernetes import client, config

    path = kubeconfig or _default_kubeconfig()
    try:
        if path is None:
            config.load_incluster_config()
            return client.ApiClient()
        return config.new_client_from_config(config_file=path, context=context)
    except (config.ConfigException, OSError, ValueError) as error:
        raise ConfigError(f"Kubernetes configuration could not be loaded: {error}") from None


def _default_kubeconfig() -> str | None:
    env = os.environ.get("KUBECONFIG", "").split(os.pathsep)[0]
    if env:
        return env
    home = Path.home() / ".kube" / "config"
    return str(home) if home.is_file() else None


class KubeApi:
    """GET lists and watch streams as JSON dicts, with the configuration's server, credentials and CA."""

    def __init__(
        self,
        configuration: Any,
        *,
        kubeconfig: str | None = None,
        context: str | None = None,
    ) -> None:
        self.configuration = configuration
        self.host = str(configuration.host).rstrip("/")
        self._ssl_context: ssl.SSLContext | None = None
        self._source = (kubeconfig, context)
        self.reloads = 0
        self._reloaded_at = float("-inf")

    @classmethod
    async def connect(cls, kubeconfig: str | None = None, context: str | None = None) -> KubeApi:
        return cls(await load_connection(kubeconfig, context), kubeconfig=kubeconfig, context=context)

    async def reload(self) -> bool:
        """Read the configuration again (kubeconfig, CA, client certificate, in-cluster token) and start a
        new connection pool with it: after the API server got a new certificate or a credential was
        rotated, the watch loop calls this on its next TLS or 401/403 failure. Returns whether anything
        was re-read (an API built from a configuration object, as in tests, has nothing to re-read)."""
        kubeconfig, context = self._source
        in_cluster = os.environ.get("KUBERNETES_SERVICE_HOST")
        if kubeconfig is None and _default_kubeconfig() is None and not in_cluster:
            return False
        # Every watch of the cluster fails at once: one re-read serves them all.
        if time.monotonic() - self._reloaded_at < RELOAD_INTERVAL:
            return False
        self._reloaded_at = time.monotonic()
        self.configuration = await load_connection(kubeconfig, context)
        self.host = str(self.configuration.host).rstrip("/")
        self._ssl_context = None  # the next connection builds it from the new files
        self.reloads += 1
        return True

    def _ssl(self) -> ssl.SSLContext | None:
        """The configuration's TLS context (None for plain http), built once per configuration read."""
        cfg = self.configuration
        if not self.host.startswith("https"):
            return None
        if self._ssl_context is None:
            context = ssl.create_default_context(cafile=cfg.ssl_ca_cert)
            if cfg.cert_file:
                context.load_cert_chain(cfg.cert_file, keyfile=cfg.key_file)
            if not cfg.verify_ssl:
                context.check_hostname = False
                context.verify_mode = ssl.CERT_NONE
            self._ssl_context = context
        return self._ssl_context

    @asynccontextmanager
    async def list_connection(self) -> AsyncIterator[PageReader]:
        """A reader of one list's pages, which follow one another on a connection of their own, closed as
        the list ends (a watch opens its own: ``open_watch``).

        Closed at once, not kept in a pool: a connection keeps uvloop's 256 KB TLS read buffer, which a
        large page has filled, and the initial lists of 10,000 rollouts open about a hundred of them at
        once. Pooled and closed after 1-2 s idle, they were 17-28 MB of the watcher's RSS just as the
        fleet's first publish began, which was its peak (docs/benchmarks.md, "Eighteenth session")."""
        session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(ssl=self._ssl() or False, limit=1),
            read_bufsize=2**22,  # a page of 500 objects is a few MB: read it in large pieces
        )
        try:
            yield functools.partial(self._get, session)
        finally:
            await session.close()

    async def _headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json"}
        settings = await self.configuration.auth_settings()  # refreshes expiring tokens
        for auth in settings.values():
            if auth.get("in") == "header" and auth.get("value"):
                headers[str(auth["key"])] = str(auth["value"])
        return headers

    async def _get(
        self, session: aiohttp.ClientSession, path: str, params: Mapping[str, str], timeouts: Timeouts
    ) -> dict[str, Any]:
        timeout = aiohttp.ClientTimeout(total=timeouts.connect + timeouts.read, sock_connect=timeouts.connect)
        async with session.get(
            self.host + path, params=dict(params), headers=await self._headers(), timeout=timeout
        ) as response:
            body = await response.read()
            if response.status >= 400:
                raise ApiError(response.status, reason_of(body, response.reason))
            return dict(loads(body))

    async def stream(
        self,
        path: str,
        params: Mapping[str, str],
        timeouts: Timeouts,
        on_event: Callable[[dict[str, Any]], None],
    ) -> None:
        """Watch ``path``, handing each event to ``on_event`` as it arrives, until the server ends the
        stream (``dashboard.kube.stream``); a silence longer than ``timeouts.read`` raises
        ``TimeoutError``."""
        await open_watch(
            watch_url(self.host, path, params),
            await self._headers(),
            on_event,
            ssl_context=self._ssl(),
            connect_timeout=timeouts.connect,
            silence=timeouts.read,
        )
