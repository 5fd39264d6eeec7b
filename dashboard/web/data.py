"""Where the pages' data comes from: the live bus (snapshots, fleet rows, stream) and recent events.

One process-wide bus reader, a small shared cache of each rollout's recent timeline events (filled
from the history store when it is there, then from the stream), and a memo of presented pages so that
a hundred pages watching one rollout present each update once. Non-goal: writing anything.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import OrderedDict, deque
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from dashboard.live.bus import Entry, LiveBus, get_bus, parse_id
from dashboard.web.canary import CONTROLLER as CANARY_CONTROLLER
from dashboard.web.canary import present_canary
from dashboard.web.fleet_index import FleetIndex
from dashboard.web.rollout import TIMELINE_LIMIT, present_rollout, with_actions, with_guards
from dashboard.web.timefmt import parse_time

_bus: LiveBus | None = None


def bus() -> LiveBus:
    """The process's bus reader."""
    global _bus
    if _bus is None:
        _bus = get_bus()
    return _bus


def reset() -> None:
    """Forget the cached bus and caches (tests switch settings between runs)."""
    global _bus
    _bus = None
    _events.clear()
    _pages.clear()
    _chains.clear()
    fleet_index.clear()


def now() -> datetime:
    return datetime.now(UTC)


class _RecentEvents:
    """The last timeline events per rollout, advanced by stream id so each entry is counted once."""

    def __init__(self, size: int = 200) -> None:
        self.size = size
        self._events: OrderedDict[str, deque[Mapping[str, Any]]] = OrderedDict()
        self._cursor: dict[str, tuple[int, int]] = {}

    def clear(self) -> None:
        self._events.clear()
        self._cursor.clear()

    def known(self, key: str) -> bool:
        return key in self._events

    def seed(self, key: str, events: Sequence[Mapping[str, Any]], stream_id: str) -> None:
        if key not in self._events:
            self._events[key] = deque(events[-TIMELINE_LIMIT:], maxlen=TIMELINE_LIMIT)
            self._cursor[key] = parse_id(stream_id)
            while len(self._events) > self.size:
                old, _ = self._events.popitem(last=False)
                self._cursor.pop(old, None)

    def add(self, key: str, entries: Sequence[tuple[str, Entry]]) -> None:
        queue = self._events.get(key)
        if queue is None:
            return
        for stream_id, entry in entries:
            position = parse_id(stream_id)
            if entry.get("key") == key and position > self._cursor.get(key, (0, 0)):
                queue.extend(entry.get("events") or [])
                self._cursor[key] = position

    def get(self, key: str) -> list[Mapping[str, Any]]:
        return list(self._events.get(key) or ())


_events = _RecentEvents()
_pages: OrderedDict[tuple[str, str], dict[str, Any]] = OrderedDict()
_PAGE_MEMO = 256


def _history_events_sync(key: str, limit: int) -> list[dict[str, Any]]:
    from dashboard.history.models import TimelineEvent

    cluster, namespace, name = split_key(key) or ("", "", "")
    rows = (
        TimelineEvent.objects.filter(
            release__cluster=cluster, release__namespace=namespace, release__rollout=name
        )
        .select_related("release")
        .order_by("-at", "-id")[:limit]
    )
    return [
        {
            "kind": e.kind,
            "at": e.at.isoformat(),
            "title": e.title,
            "podHash": e.release.pod_hash,
            "data": e.data,
            "key": key,
        }
        for e in reversed(list(rows))
    ]


class NoSuchRelease(LookupError):
    """A page of releases was asked for before a release the rollout does not have."""


def releases_sync(key: str, limit: int = 50, before: str | None = None) -> list[dict[str, Any]]:
    """The rollout's recorded releases, newest first; with ``before`` (a pod hash), those that started
    before that release (a page further down a long history; ``NoSuchRelease`` when there is none)."""
    from django.db.models import Q

    from dashboard.history.models import Release

    cluster, namespace, name = split_key(key) or ("", "", "")
    rows = Release.objects.filter(cluster=cluster, namespace=namespace, rollout=name)
    if before is not None:
        mark = rows.filter(pod_hash=before).values("started_at", "id").first()
        if mark is None:
            raise NoSuchRelease(f"{key} has no release {before}")
        # Keyset paging (the rollout's started_at index): the same cost on page 1 and page 200.
        rows = rows.filter(
            Q(started_at__lt=mark["started_at"]) | Q(started_at=mark["started_at"], id__lt=mark["id"])
        )
    return [_release_dict(r) for r in rows.order_by("-started_at", "-id")[:limit]]


def _release_dict(r: Any) -> dict[str, Any]:
    return {
        "podHash": r.pod_hash,
        "revision": r.revision,
        "outcome": r.outcome,
        "startedAt": r.started_at.isoformat(),
        "endedAt": r.ended_at.isoformat() if r.ended_at else None,
        "durationSeconds": (r.ended_at - r.started_at).total_seconds() if r.ended_at else None,
        "images": r.images,
        "stepsReached": r.steps_reached,
        "stepCount": r.step_count,
        "gitRevision": r.git_revision,
    }


def actions_installed() -> bool:
    from django.apps import apps

    return apps.is_installed("dashboard.actions")


def _audit_actions_sync(
    key: str, since: datetime | None = None, until: datetime | None = None, limit: int = 500
) -> list[dict[str, Any]]:
    """User actions on the rollout from the audit log (``dashboard.actions.timeline``), oldest first, as
    timeline events with their ``moment`` (for merging). A deployment without the actions app (or its
    table) has no actions."""
    from django.db import DatabaseError

    if not actions_installed():
        return []
    from dashboard.actions.timeline import audit_events

    try:
        events = audit_events(key, limit, since=since, until=until)
    except DatabaseError:
        return []
    for event in events:
        event["moment"] = parse_time(event.get("at")) or datetime.min.replace(tzinfo=UTC)
    return events


def _acted(actions: Sequence[Mapping[str, Any]]) -> list[str]:
    """Who acted, in order of first action: attempts that got past the permission check."""
    who: dict[str, None] = {}
    for event in actions:
        detail = event.get("data") or {}
        if detail.get("outcome") not in ("denied",):
            who.setdefault(f"{detail.get('actor')} ({detail.get('action')})", None)
    return list(who)


def release_rows_sync(key: str, limit: int = 50, before: str | None = None) -> list[dict[str, Any]]:
    """The rollout's releases, newest first (``before``: as in ``releases_sync``), each with who acted
    during it (from the audit log)."""
    releases = releases_sync(key, limit, before)
    if not releases:
        return releases
    oldest = min(datetime.fromisoformat(r["startedAt"]) for r in releases)
    actions = _audit_actions_sync(key, oldest, None)
    for release in releases:
        start = datetime.fromisoformat(release["startedAt"])
        end = datetime.fromisoformat(release["endedAt"]) if release["endedAt"] else None
        release["actedBy"] = _acted(
            [a for a in actions if start <= a["moment"] and (end is None or a["moment"] <= end)]
        )
    return releases


def release_detail_sync(key: str, pod_hash: str) -> dict[str, Any] | None:
    """One release with everything its timeline page needs, or None when there is no such release.

    Returns ``release`` (as in ``releases_sync``), ``events`` (oldest first: the release's own and, when it
    superseded a release still in flight — the re-render race — that release's too, so the page shows the
    hash change), ``stable`` (the stable pod hash when those events begin) and ``imagesByHash``.
    """
    from dashboard.history.models import Outcome, Release, TimelineEvent

    cluster, namespace, name = split_key(key) or ("", "", "")
    mine = Release.objects.filter(cluster=cluster, namespace=namespace, rollout=name)
    release = mine.filter(pod_hash=pod_hash).first()
    if release is None:
        return None
    window = [release]
    started = (
        TimelineEvent.objects.filter(release=release, kind="release.started").order_by("at", "id").first()
    )
    previous = str((started.data or {}).get("previousPodHash") or "") if started else ""
    if previous:
        before = mine.filter(pod_hash=previous, outcome=Outcome.SUPERSEDED).first()
        if before is not None:
            window.insert(0, before)
    opened = window[0].started_at
    stable = (
        mine.filter(outcome=Outcome.PROMOTED, started_at__lt=opened)
        .exclude(pod_hash__in=[r.pod_hash for r in window])
        .order_by("-started_at")
        .first()
    )
    rows = TimelineEvent.objects.filter(release__in=window).select_related("release").order_by("at", "id")
    events: list[dict[str, Any]] = [
        {
            "kind": e.kind,
            "at": e.at.isoformat(),
            "title": e.title,
            "podHash": e.release.pod_hash,
            "data": e.data,
            "key": key,
        }
        for e in rows[:5000]
    ]
    actions = _audit_actions_sync(key, opened, release.ended_at)
    for event in events:
        event["moment"] = datetime.fromisoformat(event["at"])
    merged = sorted(events + actions, key=lambda e: e["moment"])  # stable: same-moment order is kept
    for event in merged:
        del event["moment"]
    images = {r.pod_hash: list(r.images or []) for r in (*window, *([stable] if stable else []))}
    summary = _release_dict(release)
    summary["actedBy"] = _acted(actions)
    return {
        "release": summary,
        "events": merged,
        "stable": stable.pod_hash if stable else None,
        "imagesByHash": images,
        "previousPodHash": window[0].pod_hash if len(window) > 1 else None,
    }


def postmortem_sync(
    key: str, pod_hash: str | None, *, zone: Any, base_url: str = "", view: Mapping[str, Any] | None = None
) -> dict[str, Any] | None:
    """The post-mortem document of one release (the newest when ``pod_hash`` is None), from the same data
    the release page shows; None when there is no such release."""
    from dashboard.domain.postmortem import postmortem
    from dashboard.gitops.queries import chain_for_release
    from dashboard.history.models import Release

    cluster, namespace, name = split_key(key) or ("", "", "")
    if pod_hash is None:
        newest = (
            Release.objects.filter(cluster=cluster, namespace=namespace, rollout=name)
            .order_by("-started_at")
            .first()
        )
        if newest is None:
            return None
        pod_hash = newest.pod_hash
    detail = release_detail_sync(key, pod_hash)
    if detail is None:
        return None
    try:
        chain = chain_for_release(cluster, namespace, name, pod_hash, view)
    except Exception:  # the chain is an addition; a post-mortem without it is still a post-mortem
        logging.getLogger(__name__).warning("reading the chain of %s@%s failed", key, pod_hash, exc_info=True)
        chain = None
    return postmortem(key, detail, chain, generated_at=now(), zone=zone, base_url=base_url)


async def history_events(key: str) -> list[Mapping[str, Any]]:
    """The rollout's recorded timeline events (oldest first) from the history store."""
    from asgiref.sync import sync_to_async

    try:
        return list(await sync_to_async(_history_events_sync)(key, TIMELINE_LIMIT))
    except Exception:  # history is an addition to the live page, never a reason for it to fail
        logging.getLogger(__name__).warning("reading history for %s failed", key, exc_info=True)
        return []


async def recent_events(key: str, stream_id: str) -> list[Mapping[str, Any]]:
    if not _events.known(key):
        _events.seed(key, await history_events(key), stream_id)
    return _events.get(key)


def note_entries(key: str, entries: Sequence[tuple[str, Entry]]) -> None:
    _events.add(key, entries)


async def timeline_events(key: str, stream_id: str) -> list[Mapping[str, Any]]:
    """The rollout's recent timeline: recorded events and the audit's user actions, oldest first."""
    from asgiref.sync import sync_to_async

    recorded = await recent_events(key, stream_id)
    try:
        actions = await sync_to_async(_audit_actions_sync)(key, None, None, TIMELINE_LIMIT)
    except Exception:  # the audit is an addition to the live page, never a reason for it to fail
        logging.getLogger(__name__).warning("reading the audit for %s failed", key, exc_info=True)
        actions = []
    for action in actions:
        action.pop("moment", None)
    return with_actions(recorded, actions)


_chains: OrderedDict[str, tuple[float, str, dict[str, Any] | None]] = OrderedDict()
CHAIN_TTL = 10.0  # webhooks change the chain without a new view: re-read it at least this often


def _chain_sync(key: str, view: Mapping[str, Any]) -> dict[str, Any]:
    from dashboard.gitops.queries import latest_chain

    cluster, namespace, name = split_key(key) or ("", "", "")
    return latest_chain(cluster, namespace, name, view)


async def gitops_chain(key: str, view: Mapping[str, Any]) -> dict[str, Any] | None:
    """The GitOps chain behind the rollout (cached per Application state for ``CHAIN_TTL``); None when
    it cannot be read (the diagram then shows what the view alone knows)."""
    import hashlib
    import time

    from asgiref.sync import sync_to_async

    digest = hashlib.blake2b(
        json.dumps(view.get("gitops"), sort_keys=True, default=str).encode(), digest_size=16
    ).hexdigest()
    cached = _chains.get(key)
    if cached is not None and cached[1] == digest and time.monotonic() - cached[0] < CHAIN_TTL:
        return cached[2]
    try:
        chain: dict[str, Any] | None = await sync_to_async(_chain_sync)(key, view)
    except Exception:
        logging.getLogger(__name__).warning("reading the GitOps chain of %s failed", key, exc_info=True)
        chain = None
    _chains[key] = (time.monotonic(), digest, chain)
    _chains.move_to_end(key)
    while len(_chains) > _PAGE_MEMO:
        _chains.popitem(last=False)
    return chain


async def release_chain(key: str, pod_hash: str, view: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The chain behind one release (merge → commit → sync → revision); None when it cannot be read."""
    from asgiref.sync import sync_to_async

    from dashboard.gitops.queries import chain_for_release

    cluster, namespace, name = split_key(key) or ("", "", "")
    try:
        return await sync_to_async(chain_for_release)(cluster, namespace, name, pod_hash, view)
    except Exception:
        logging.getLogger(__name__).warning("reading the chain of %s@%s failed", key, pod_hash, exc_info=True)
        return None


async def rollout_page(key: str, view: Mapping[str, Any], stream_id: str) -> dict[str, Any]:
    """The presented rollout (or Flagger Canary) page for ``view`` as of ``stream_id``, memoised across
    connections."""
    memo = (key, stream_id)
    page = _pages.get(memo)
    if page is None:
        events = await timeline_events(key, stream_id)
        if view.get("controller") == CANARY_CONTROLLER:
            page = present_canary(view, now(), events)
        else:
            page = present_rollout(view, now(), events, await gitops_chain(key, view))
        _pages[memo] = page
        while len(_pages) > _PAGE_MEMO:
            _pages.popitem(last=False)
    if view.get("controller") == CANARY_CONTROLLER:
        return page
    return with_guards(page, view, now())


def split_key(key: str) -> tuple[str, str, str] | None:
    parts = key.split("/")
    return (parts[0], parts[1], parts[2]) if len(parts) == 3 and all(parts) else None


fleet_index = FleetIndex(bus, now)
_warming: set[asyncio.Task[Any]] = set()


def warm_fleet_index() -> None:
    """Start bringing the fleet index up to date without waiting (the shell's rows request follows)."""
    task = asyncio.ensure_future(fleet_index.refresh())
    _warming.add(task)
    task.add_done_callback(_warmed)


def _warmed(task: asyncio.Task[Any]) -> None:
    _warming.discard(task)
    if not task.cancelled() and task.exception() is not None:
        logging.getLogger(__name__).warning("warming the fleet index failed: %s", task.exception())


async def fleet_rows_for(user: Any) -> tuple[str, list[list[Any]]]:
    """(stream id, the compact rows ``user`` may see) — for the fleet websocket's snapshot."""
    version = await fleet_index.refresh()
    return version, fleet_index.values(_visible_keys(user))


async def fleet_row_texts_for(user: Any) -> tuple[str, list[bytes]]:
    """(stream id, the encoded compact rows ``user`` may see) — the fleet websocket's snapshot, joined
    rather than decoded and encoded again."""
    version = await fleet_index.refresh()
    keys = _visible_keys(user)
    rows = fleet_index.rows
    return version, [rows[k] for k in keys if k in rows] if keys is not None else list(rows.values())


async def fleet_document(user: Any, gzipped: bool) -> tuple[bytes, bool]:
    """The encoded fleet document for ``user`` (shared and cached when they may see every rollout)."""
    await fleet_index.refresh()
    keys = _visible_keys(user)
    if keys is None:
        return fleet_index.document(gzipped), gzipped
    return fleet_index.subset(keys, gzipped), gzipped


def _visible_keys(user: Any) -> list[str] | None:
    """The keys ``user`` may see, or None when that is all of them."""
    from dashboard.access.visibility import visible

    everything = [{"key": key} for key in fleet_index.rows]
    shown = visible(user, everything)
    return None if len(shown) == len(everything) else [row["key"] for row in shown]


async def gather_fleet() -> tuple[str, list[dict[str, Any]]]:
    """(stream id, fleet rows): the id is read first, so replaying from it cannot miss a change."""
    live = bus()
    stream_id = await live.last_id()
    return stream_id, await live.fleet()


async def gather_rollout(key: str) -> tuple[str, dict[str, Any] | None]:
    live = bus()
    stream_id = await live.last_id()  # first, as in gather_fleet
    return stream_id, await live.snapshot(key)


def _role_names(user: Any) -> list[str]:
    """The roles ``user`` holds (stored grants, the default role): named when a button is denied."""
    from django.conf import settings
    from django.db.models import Q

    from dashboard.access.models import Grant

    names = {str(getattr(settings, "RBAC_DEFAULT_ROLE", "") or "")} - {""}
    if getattr(user, "pk", None) is not None:
        groups = list(user.groups.values_list("name", flat=True))
        grants = Grant.objects.filter(Q(user=user) | Q(group__in=groups), deny=False)
        names |= set(grants.values_list("role__name", flat=True))
    return sorted(names)


def action_permissions_sync(user: Any, key: str) -> dict[str, dict[str, Any]]:
    """Per action: may ``user`` run it on ``key`` (``allowed``) and, when not, why (``deniedReason``).

    The page adds these to the buttons of the rollout document (``rollout.with_permissions``): a user who
    may not act sees the button disabled with the reason, never a button that fails.
    """
    from dashboard.access.policy import ACTIONS, BREAK_GLASS
    from dashboard.access.rbac import access_for

    if not getattr(user, "is_authenticated", False):
        return {
            a: {"allowed": False, "deniedReason": "sign in to act on rollouts"}
            for a in (*ACTIONS, BREAK_GLASS)
        }
    allowed = set(access_for(user).actions_on(key, (*ACTIONS, BREAK_GLASS)))
    roles = _role_names(user)
    who = f"your role {', '.join(roles)}" if roles else "you (no role on this rollout)"
    return {
        action: {
            "allowed": action in allowed,
            "deniedReason": "" if action in allowed else f"{who} may not {action}",
        }
        for action in (*ACTIONS, BREAK_GLASS)  # break-glass: may this user act during a freeze
    }
