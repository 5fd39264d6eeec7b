"""What rollouts-ui says about itself to Prometheus: the metric names and a tiny API to feed them.

Every process exposes its own metrics, because each knows different things:

- the **watcher** (``manage.py watch --metrics-port 9100``, one process per cluster) serves ``/metrics``
  on its own small HTTP listener (``start_metrics_server``): changes, lists and relists per kind, watch
  lag, publish latency and the findings currently raised, per cluster. A listener per process was chosen
  over a registry shared through Redis: nothing to clean up when a process dies, no Redis round trip on
  the watch path, and Prometheus labels every series with the pod it scraped anyway.
- the **web server** serves ``/metrics`` on its HTTP port (``dashboard.observability.views``): websocket
  clients of that process, plus two families read from the database at scrape time — actions by outcome
  (the audit is append-only, so a count of its rows *is* a counter that survives restarts and counts the
  Celery workers' outcomes, which run in other processes) and notifications by status.

The call sites are one line each (``watch_changed(cluster, kind, uids)``, ``WEBSOCKET_CLIENTS.labels(
consumer="fleet").inc()`` …). Everything here is cheap enough for the watch path: label children are
cached and nothing does I/O.

Non-goals: no push gateway, no multiprocess mode (each process is scraped on its own).
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Awaitable, Callable, Collection, Coroutine, Iterable, Iterator, Mapping, Sequence
from typing import Any, ParamSpec, TypeVar

from prometheus_client import REGISTRY, Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

P = ParamSpec("P")
T = TypeVar("T")

# Seconds; from "a few ms" (coalesced publish) to the watcher's 30 s worst back-off.
_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)

WATCH_CHANGES = Counter(
    "rollouts_ui_watch_changes",
    "Objects added, modified or deleted as seen by the watcher (rate() gives changes per second).",
    ["cluster", "kind"],
)
WATCH_LISTS = Counter(
    "rollouts_ui_watch_lists", "Full lists of a kind (the first one and every relist).", ["cluster", "kind"]
)
WATCH_RELISTS = Counter(
    "rollouts_ui_watch_relists",
    "Lists after the first one of a kind: 410 Gone, a dropped stream or an API error forced a rebuild.",
    ["cluster", "kind"],
)
WATCH_LAG = Histogram(
    "rollouts_ui_watch_lag_seconds",
    "From a change of this kind reaching the watcher to its rollout's new view being published.",
    ["cluster", "kind"],
    buckets=_LATENCY_BUCKETS,
)
PUBLISH_LATENCY = Histogram(
    "rollouts_ui_publish_latency_seconds",
    "How long one publish of a batch of views to the live bus (Redis) takes.",
    buckets=_LATENCY_BUCKETS,
)
BUS_ERRORS = Counter(
    "rollouts_ui_watch_bus_errors",
    "Failed calls of the watcher to the live bus or its lease (Redis unreachable or failing).",
    ["cluster"],
)
WATCH_FAILING = Gauge(
    "rollouts_ui_watch_failing",
    "Watches of this cluster whose last attempt failed (TLS, authentication, unreachable API server).",
    ["cluster"],
)
WEBSOCKET_CLIENTS = Gauge(
    "rollouts_ui_websocket_clients", "Websocket connections open on this web process.", ["consumer"]
)
NOTIFICATIONS_SENT = Counter(
    "rollouts_ui_notifications_delivered",
    "Notification delivery attempts by this process, by channel and result.",
    ["channel", "result"],
)


def timed_async(
    histogram: Histogram,
) -> Callable[[Callable[P, Awaitable[T]]], Callable[P, Coroutine[Any, Any, T]]]:
    """Observe every call's duration of a coroutine function (``Histogram.time`` is sync only)."""

    def decorate(fn: Callable[P, Awaitable[T]]) -> Callable[P, Coroutine[Any, Any, T]]:
        @functools.wraps(fn)
        async def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
            started = time.perf_counter()
            try:
                return await fn(*args, **kwargs)
            finally:
                histogram.observe(time.perf_counter() - started)

        return wrapper

    return decorate


# --- the watcher's side ------------------------------------------------------------------------------


class WatchObserver:
    """Counts changes and lists per kind and measures each change's wait until its view is published.

    A change marks the rollouts it affects; the first unpublished change per (rollout, kind) starts the
    clock, and the publish of that rollout stops it — coalesced bursts count once, from their first change.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._listed: set[tuple[str, str, str | None]] = set()
        self._pending: dict[tuple[str, str], dict[str, float]] = {}
        # Each (cluster, kind)'s metric children, looked up once: ``labels()`` takes a lock and builds its key
        # on every call, and these are counted for every change and every published rollout.
        self._changes: dict[tuple[str, str], Any] = {}
        self._lags: dict[tuple[str, str], Any] = {}

    def changed(self, cluster: str, kind: str, uids: Iterable[str], count: int = 1) -> None:
        child = self._changes.get((cluster, kind))
        if child is None:
            child = self._changes[(cluster, kind)] = WATCH_CHANGES.labels(cluster=cluster, kind=kind)
        child.inc(count)
        now = time.monotonic()
        with self._lock:
            for uid in uids:
                self._pending.setdefault((cluster, uid), {}).setdefault(kind, now)

    def listed(self, cluster: str, kind: str, namespace: str | None, uids: Iterable[str]) -> None:
        WATCH_LISTS.labels(cluster=cluster, kind=kind).inc()
        with self._lock:
            first = (cluster, kind, namespace) not in self._listed
            self._listed.add((cluster, kind, namespace))
        if not first:
            WATCH_RELISTS.labels(cluster=cluster, kind=kind).inc()
        self.changed(cluster, kind, uids, count=0)

    def published(self, cluster: str, uids: Iterable[str]) -> None:
        """``uids`` were just published (or found unchanged, or removed): their changes are done."""
        now = time.monotonic()
        with self._lock:
            waits = [self._pending.pop((cluster, uid), None) for uid in uids]
        for kinds in waits:
            for kind, since in (kinds or {}).items():
                child = self._lags.get((cluster, kind))
                if child is None:
                    child = self._lags[(cluster, kind)] = WATCH_LAG.labels(cluster=cluster, kind=kind)
                child.observe(now - since)


class FindingsGauge(Collector):
    """The findings currently raised, by cluster, code and severity, from the views last published."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_rollout: dict[tuple[str, str], tuple[tuple[str, str], ...]] = {}

    def update(self, cluster: str, views: Iterable[tuple[str, Mapping[str, Any]]]) -> None:
        """Each ``(rollout key, view)`` replaces what that rollout had raised."""
        with self._lock:
            for key, view in views:
                found = tuple(
                    (str(f.get("code")), str(f.get("severity") or "info"))
                    for f in view.get("findings") or ()
                    if isinstance(f, Mapping) and f.get("code")
                )
                if found:
                    self._by_rollout[(cluster, key)] = found
                else:
                    self._by_rollout.pop((cluster, key), None)

    def remove(self, cluster: str, keys: Iterable[str]) -> None:
        with self._lock:
            for key in keys:
                self._by_rollout.pop((cluster, key), None)

    def counts(self) -> dict[tuple[str, str, str], int]:
        totals: dict[tuple[str, str, str], int] = {}
        with self._lock:
            for (cluster, _), found in self._by_rollout.items():
                for code, severity in found:
                    totals[(cluster, code, severity)] = totals.get((cluster, code, severity), 0) + 1
        return totals

    def describe(self) -> Iterable[Any]:
        return [GaugeMetricFamily("rollouts_ui_findings", "", labels=["cluster", "code", "severity"])]

    def collect(self) -> Iterator[Any]:
        family = GaugeMetricFamily(
            "rollouts_ui_findings",
            "Findings currently raised on the rollouts this watcher publishes, by code and severity.",
            labels=["cluster", "code", "severity"],
        )
        for (cluster, code, severity), count in sorted(self.counts().items()):
            family.add_metric([cluster, code, severity], count)
        yield family


WATCH = WatchObserver()
FINDINGS = FindingsGauge()
REGISTRY.register(FINDINGS)


def watch_changed(cluster: str, kind: str, uids: Iterable[str]) -> None:
    """One watch event of ``kind`` that affected the rollouts ``uids`` (call from the watch sink)."""
    WATCH.changed(cluster, kind, uids)


def watch_listed(cluster: str, kind: str, namespace: str | None, uids: Iterable[str]) -> None:
    """A full list of ``kind`` arrived (the first one, or a relist) and affected ``uids``."""
    WATCH.listed(cluster, kind, namespace, uids)


def watch_published(
    cluster: str,
    uids: Collection[str],
    views: Sequence[tuple[str, Mapping[str, Any], str]] = (),
    removed: Iterable[str] = (),
) -> None:
    """A publish round finished: ``uids`` were handled, ``views`` (the watcher's ``(key, view, stream id)``)
    went out and the rollouts ``removed`` (keys) are gone."""
    WATCH.published(cluster, uids)
    FINDINGS.update(cluster, ((key, view) for key, view, _ in views))
    FINDINGS.remove(cluster, removed)


# --- the watcher's own listener ----------------------------------------------------------------------


def start_metrics_server(port: int, address: str = "0.0.0.0") -> Any:
    """Serve ``/metrics`` (and ``/healthz``) of this process on a daemon thread; returns the server."""
    from socketserver import ThreadingMixIn
    from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

    from prometheus_client import make_wsgi_app

    metrics_app = make_wsgi_app(REGISTRY)

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = environ.get("PATH_INFO") or "/"
        if path == "/metrics":
            return metrics_app(environ, start_response)
        if path == "/healthz":
            start_response("200 OK", [("Content-Type", "application/json")])
            return [b'{"status": "ok"}']
        start_response("404 Not Found", [("Content-Type", "text/plain")])
        return [b"not found: try /metrics or /healthz\n"]

    class QuietHandler(WSGIRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # scrapes every 15 s are not news
            pass

    class ThreadingServer(ThreadingMixIn, WSGIServer):
        daemon_threads = True

    server = make_server(address, port, app, server_class=ThreadingServer, handler_class=QuietHandler)
    thread = threading.Thread(target=server.serve_forever, name="metrics-server", daemon=True)
    thread.start()
    return server
