"""The watch loop: list, then watch from the list's resourceVersion, forever, for one kind.

``watch_kind`` is the whole protocol in one function (after kopf's ``watching.py``):

1. List (paginated, ``limit``/``continue``) and hand the full set to the sink (or each page as it comes,
   to a sink that takes pages), which diffs it against its cache — a relist rebuilds, it never trusts
   that every event was seen. A sink that already holds the kind as of a resourceVersion (restored from
   a handoff, ``Position.resume_at``) skips this list once: the watch starts at that version.
2. Watch from the list's ``resourceVersion`` with ``allowWatchBookmarks`` and a server-side
   ``timeoutSeconds`` (jittered so a fleet of watches does not reconnect at once). Every call has a
   client-side timeout too: a stream silent for ``silence_timeout`` is dropped and resumed.
3. When the server ends a watch normally, resume from the last resourceVersion seen (bookmarks count).
4. ``410 Gone`` (an ERROR event or a status) → relist at once. Any other failure → back off exponentially
   with full jitter, then relist.
5. A kind whose CRD is missing (404) and marked optional is logged once and looked at again only every
   ``missing_crd_retry`` seconds — never in a hot loop. A kind that ``requires`` another (Flagger's Events,
   Deployments require the Canary CRD) is only watched once that one is served; the watcher
   enforces it, so a cluster without Flagger is not asked for every Deployment. A ``scoped`` kind (the
   routing objects Rollouts name) is watched only in the namespaces where a Rollout names one.

6. A TLS failure (the API server got a new certificate) or a 401/403 (a rotated token) makes the API
   re-read its configuration (``KubeApi.reload``) before the retry: without that, a watcher would fail
   every watch forever with the certificate it started with. Every success and failure is told to the
   sink (``seen`` / ``failed``), which makes the cluster's freshness of them.

All timeouts live in ``WatchSettings``. Non-goals: no caching and no view building (the sink does that),
no use of ``kubernetes.informer`` (it crashes on custom resources).
"""

from __future__ import annotations

import asyncio
import logging
import random
import ssl
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import aiohttp

from dashboard.kube.connection import ApiError, KubeApi, Timeouts

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WatchSettings:
    server_timeout: float = 300.0  # timeoutSeconds asked of the API server (jittered down by up to 20 %)
    silence_timeout: float = 90.0  # no byte for this long (bookmarks included) → the stream is dead
    connect_timeout: float = 10.0
    list_timeout: float = 60.0  # per page
    page_size: int = 500
    backoff_initial: float = 0.5
    backoff_max: float = 30.0
    missing_crd_retry: float = 600.0


@dataclass(frozen=True)
class Kind:
    name: str
    group: str
    version: str
    plural: str
    label_selector: str | None = None
    field_selector: str | None = None
    optional: bool = False  # a CRD that may not be installed (Argo CD's Application)
    requires: str | None = None  # the kind that must be served first (the Watcher waits for it)
    # Watched only in the namespaces where a Rollout names an object of this kind (the routing objects):
    # the Watcher starts and stops these watches as Rollouts come and go.
    scoped: bool = False

    def selectors(self) -> dict[str, str]:
        found = {}
        if self.label_selector:
            found["labelSelector"] = self.label_selector
        if self.field_selector:
            found["fieldSelector"] = self.field_selector
        return found

    def path(self, namespace: str | None) -> str:
        base = f"/api/{self.version}" if not self.group else f"/apis/{self.group}/{self.version}"
        return f"{base}/namespaces/{namespace}/{self.plural}" if namespace else f"{base}/{self.plural}"


POD_HASH_LABEL = "rollouts-pod-template-hash"
WATCHED_KINDS = (
    Kind("Rollout", "argoproj.io", "v1alpha1", "rollouts"),
    Kind("ReplicaSet", "apps", "v1", "replicasets", label_selector=POD_HASH_LABEL),
    Kind("Pod", "", "v1", "pods", label_selector=POD_HASH_LABEL),
    Kind("AnalysisRun", "argoproj.io", "v1alpha1", "analysisruns"),
    Kind("Experiment", "argoproj.io", "v1alpha1", "experiments"),
    # The Events Argo Rollouts records on each Rollout (the timeline shows them).
    Kind("RolloutEvent", "", "v1", "events", field_selector="involvedObject.kind=Rollout"),
    # And the Events about its children (the timeline merges them; a field selector cannot say "or").
    Kind("ReplicaSetEvent", "", "v1", "events", field_selector="involvedObject.kind=ReplicaSet"),
    Kind("PodEvent", "", "v1", "events", field_selector="involvedObject.kind=Pod"),
    Kind("AnalysisRunEvent", "", "v1", "events", field_selector="involvedObject.kind=AnalysisRun"),
    Kind("Application", "argoproj.io", "v1alpha1", "applications", optional=True),
    # Flagger: the Canary, the Events Flagger writes about it (its only history) and what its view reads.
    Kind("Canary", "flagger.app", "v1beta1", "canaries", optional=True),
    Kind("Event", "", "v1", "events", field_selector="involvedObject.kind=Canary", requires="Canary"),
    Kind("Deployment", "apps", "v1", "deployments", requires="Canary"),
    # The routing objects Rollouts name (dashboard.domain.routers), only where a Rollout names one and,
    # for the CRDs, only when served: a cluster without them is never asked for them.
    Kind("VirtualService", "networking.istio.io", "v1beta1", "virtualservices", optional=True, scoped=True),
    Kind("DestinationRule", "networking.istio.io", "v1beta1", "destinationrules", optional=True, scoped=True),
    Kind("Ingress", "networking.k8s.io", "v1", "ingresses", scoped=True),
    # Also the one a Flagger Canary's view reads (its namespaces are counted the same way).
    Kind("HTTPRoute", "gateway.networking.k8s.io", "v1", "httproutes", optional=True, scoped=True),
    Kind("TrafficSplit", "split.smi-spec.io", "v1alpha3", "trafficsplits", optional=True, scoped=True),
    # The autoscalers of the namespaces that have Rollouts (an HPA names what it scales, not the reverse).
    Kind(
        "HorizontalPodAutoscaler", "autoscaling", "v2", "horizontalpodautoscalers", optional=True, scoped=True
    ),
)


class WatchSink(Protocol):
    def listed(self, kind: str, namespace: str | None, objects: Sequence[dict[str, Any]]) -> None: ...

    def changed(self, kind: str, event_type: str, obj: dict[str, Any]) -> None: ...

    def unavailable(self, kind: str, namespace: str | None) -> None: ...

    # Optional (a sink without them is not told): the watch is alive (a list, a watch opened, an event or a
    # bookmark), or its last attempt failed and why. They feed each cluster's freshness.
    # And ``listed_page(kind, namespace, objects, first=...)``: a sink that has it is given each page of a
    # list as it arrives (``first`` when a list begins), then ``listed`` with no objects when it ends.
    def seen(self, kind: str, namespace: str | None) -> None: ...

    def failed(self, kind: str, namespace: str | None, error: str) -> None: ...


@dataclass
class Position:
    """Where one watch stands, shared with its sink: ``version`` is the resourceVersion the sink's copy
    of the kind is complete up to ("" while a list is under way: the copy is then a mix of two moments).

    ``resume_at``, set before the watch starts, says the sink already holds the kind as of that version
    (restored from a handoff, ``dashboard.kube.handoff``): the watch then starts there instead of listing,
    and the API server sends what changed since, or 410 Gone (too old), which relists as usual."""

    version: str = ""
    resume_at: str = ""


class Gone(Exception):
    """The resourceVersion is too old (410): relist."""


@dataclass
class WatchStats:
    lists: int = 0
    watches: int = 0
    events: int = 0
    gone: int = 0
    errors: int = 0
    silences: int = 0


async def watch_kind(
    api: KubeApi,
    kind: Kind,
    namespace: str | None,
    sink: WatchSink,
    settings: WatchSettings = WatchSettings(),
    stats: WatchStats | None = None,
    project: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    position: Position | None = None,
) -> None:
    """List and watch ``kind`` in ``namespace`` (None: all) until cancelled.

    ``project`` is applied to each listed object as its page arrives: of a large list only one page of
    full objects is alive at a time, instead of all of them until the sink has them (Python keeps the
    heap they leave behind; a few hundred MB at 10,000 rollouts). A sink with ``listed_page`` takes each
    page as it comes, so that not even the projected list is alive whole. ``position`` is kept current
    (``Position``) and may say where to resume instead of listing first."""
    stats = stats if stats is not None else WatchStats()
    position = position if position is not None else Position()
    resume_at, position.resume_at = position.resume_at, ""
    seen: Callable[[str, str | None], None] = getattr(sink, "seen", _ignore)
    failed: Callable[[str, str | None, str], None] = getattr(sink, "failed", _ignore)
    where = f"{kind.name} in {namespace or 'all namespaces'}"
    path = kind.path(namespace)
    selector = kind.selectors()
    delay = settings.backoff_initial
    missing_logged = False
    while True:
        try:
            # 1. List, page by page; the last page's resourceVersion is where the watch starts. Not when
            # the sink already holds the kind as of a version (a handoff): the watch starts there.
            version, resume_at = resume_at, ""
            if not version:
                version = await _list(api, kind, namespace, sink, settings, project, position)
                stats.lists += 1
                seen(kind.name, namespace)
                missing_logged = False
                delay = settings.backoff_initial
            position.version = version

            # 2-3. Watch sessions, each resuming where the last one ended.
            while True:
                stats.watches += 1
                timeout_seconds = int(settings.server_timeout * random.uniform(0.8, 1.0))
                watch_params = {
                    **selector,
                    "allowWatchBookmarks": "true",
                    "timeoutSeconds": str(timeout_seconds),
                }
                if version:
                    watch_params["resourceVersion"] = version
                timeouts = Timeouts(settings.connect_timeout, settings.silence_timeout)

                def on_event(event: dict[str, Any]) -> None:
                    nonlocal version
                    version = position.version = _handle_event(kind, event, sink, version, stats)
                    seen(kind.name, namespace)  # events and bookmarks alike: the stream is alive

                await api.stream(path, watch_params, timeouts, on_event)
                seen(kind.name, namespace)  # the server ended it normally: alive too
                delay = settings.backoff_initial

        except asyncio.CancelledError:
            raise
        except Gone:
            stats.gone += 1
            log.info("%s: resourceVersion expired (410 Gone); relisting", where)
            continue
        except ApiError as error:
            if error.status == 410:
                stats.gone += 1
                log.info("%s: 410 Gone; relisting", where)
                continue
            if error.status == 404 and kind.optional:
                if not missing_logged:
                    log.warning(
                        "%s: not served (is the CRD installed?); skipped, re-checked every %.0fs",
                        where,
                        settings.missing_crd_retry,
                    )
                    missing_logged = True
                sink.unavailable(kind.name, namespace)
                await asyncio.sleep(settings.missing_crd_retry)
                continue
            stats.errors += 1
            failed(kind.name, namespace, f"API error {error}")
            log.warning("%s: API error %s; retrying in up to %.1fs", where, error, delay)
            if error.status in (401, 403):
                await _reload_credentials(api, where)
        except TimeoutError:
            stats.silences += 1
            failed(kind.name, namespace, f"no response for {settings.silence_timeout:.0f}s")
            log.warning("%s: no response for %.0fs; reconnecting", where, settings.silence_timeout)
        except (aiohttp.ClientError, OSError, ValueError) as error:
            stats.errors += 1
            failed(kind.name, namespace, f"{type(error).__name__}: {error}")
            log.warning("%s: %s: %s; retrying in up to %.1fs", where, type(error).__name__, error, delay)
            if is_tls_failure(error):
                await _reload_credentials(api, where)
        # 4. Full jitter: a fleet of watchers that lost the same server does not return in lockstep.
        await asyncio.sleep(random.uniform(0, delay))
        delay = min(delay * 2, settings.backoff_max)


async def _list(
    api: KubeApi,
    kind: Kind,
    namespace: str | None,
    sink: WatchSink,
    settings: WatchSettings,
    project: Callable[[dict[str, Any]], dict[str, Any]] | None,
    position: Position,
) -> str:
    """List ``kind`` page by page into the sink; returns the list's resourceVersion."""
    position.version = ""  # from the first page on, the sink's copy is a mix until the list is done
    listed_page: Callable[..., None] | None = getattr(sink, "listed_page", None)
    path, selector = kind.path(namespace), kind.selectors()
    objects: list[dict[str, Any]] = []
    params: dict[str, str] = {**selector, "limit": str(settings.page_size)}
    timeouts = Timeouts(settings.connect_timeout, settings.list_timeout)
    first = True
    async with api.list_connection() as get_page:
        while True:
            page = await get_page(path, params, timeouts)
            items = (i for i in page.get("items") or () if isinstance(i, dict))
            kept = list(map(project, items) if project is not None else items)
            metadata = page.get("metadata") or {}
            del page, items
            if listed_page is not None:
                listed_page(kind.name, namespace, kept, first=first)
            else:
                objects.extend(kept)
            del kept
            first = False
            if not metadata.get("continue"):
                break
            params = {**selector, "limit": str(settings.page_size), "continue": metadata["continue"]}
    sink.listed(kind.name, namespace, objects)
    return str(metadata.get("resourceVersion") or "")


def _ignore(*args: Any) -> None:
    return None


def is_tls_failure(error: BaseException) -> bool:
    """A certificate the client no longer trusts (the API server was given a new one, or a new CA)."""
    while error is not None:
        if isinstance(error, ssl.SSLError | aiohttp.ClientSSLError):
            return True
        error = error.__cause__ or error.__context__  # type: ignore[assignment]
    return False


async def _reload_credentials(api: KubeApi, where: str) -> None:
    """Authentication or TLS failed: the kubeconfig, the CA or the service-account token may have been
    rotated under us. Read them again (the next attempt uses what is on disk now)."""
    try:
        changed = await api.reload()
    except Exception as error:  # a broken file now must not stop the loop; the next failure retries
        log.warning("%s: re-reading the Kubernetes configuration failed: %s", where, error)
        return
    if changed:
        log.info("%s: Kubernetes configuration re-read after an authentication/TLS failure", where)


def _handle_event(
    kind: Kind, event: Mapping[str, Any], sink: WatchSink, version: str, stats: WatchStats
) -> str:
    """Pass one watch event to the sink; returns the resourceVersion to resume from."""
    event_type, obj = event.get("type"), event.get("object")
    if event_type == "ERROR":
        code = obj.get("code") if isinstance(obj, Mapping) else None
        if code == 410:
            raise Gone()
        message = obj.get("message") if isinstance(obj, Mapping) else obj
        raise ApiError(int(code) if isinstance(code, int) else 500, f"watch error: {message}")
    # ``type(…) is dict`` first: every event passes here, and ``isinstance`` against the Mapping ABC
    # is a Python-level call each time.
    meta = obj.get("metadata") if type(obj) is dict or isinstance(obj, Mapping) else None
    new_version = meta.get("resourceVersion") if type(meta) is dict or isinstance(meta, Mapping) else None
    if isinstance(new_version, str) and new_version:
        version = new_version
    if event_type in ("ADDED", "MODIFIED", "DELETED") and isinstance(obj, dict):
        stats.events += 1
        sink.changed(kind.name, event_type, obj)
    return version
