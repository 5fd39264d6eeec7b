"""Websocket consumers: the fleet and one rollout, live.

Protocol (JSON text frames):

- Connect to ``/ws/fleet/`` or ``/ws/rollouts/<cluster>/<namespace>/<name>/`` with the session cookie.
  Anonymous connections are refused (close code 4401) unless ``ANONYMOUS_READ_ONLY``; a rollout the user
  may not see closes with 4403. The Origin is checked before any consumer runs (``dashboard.web.origin``).
- The client's first frame is ``{"resume": "<last stream id>"}`` or ``{}`` (sending nothing is the same
  as ``{}`` after one second).
- The server answers with ``{"type": "snapshot", "streamId": id, ...}`` — fleet: ``rows`` (presented
  rows, attention first); rollout: ``view`` (the RolloutView) and ``page`` (the presented page) or
  ``view: null`` when the rollout is not (or no longer) there. When the client resumed and the stream
  still holds everything since its id, the server instead sends ``{"type": "resumed", "streamId": id}``
  followed by the missed changes as updates, so nothing is re-sent that the page already has.
- Then updates: fleet ``{"type": "update", "streamId": id, "rows": [...], "removed": [keys]}``; rollout
  ``{"type": "update", "streamId": id, "view": view, "page": page, "events": [...]}``.
- ``{"type": "ping"}`` every ~20 s so proxies keep the connection; the client needs not answer.

The process's stream follower (``dashboard.web.follower``) reads each new range of the bus stream once;
fleet pages read its shared log from their own place, rollout pages get their rollout's entries in a
mailbox; the bus wakes the follower (sockets join no channel-layer group). A
page takes the latest state per rollout, so a slow browser costs nothing but its own staleness; a fleet
page is sent at most one update per ``FLEET_FRAME_SECONDS`` (what arrived meanwhile goes in the next). A
fleet page that fell behind the log, or a resume from an id older than it, reads its gap from the bus;
an id that fell off the stream's end gets a fresh snapshot.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

import orjson
from channels.generic.websocket import AsyncWebsocketConsumer

from dashboard import jsonbody
from dashboard.access.policy import GET
from dashboard.access.rbac import aaccess_for
from dashboard.access.visibility import can_view, may_read
from dashboard.jsontext import exact
from dashboard.live.bus import BusError, Entry, StreamTrimmed, parse_id
from dashboard.observability.metrics import WEBSOCKET_CLIENTS
from dashboard.web import data
from dashboard.web.fleet import fleet_row
from dashboard.web.fleet_index import FIELDS
from dashboard.web.follower import FellBehind, StreamFollower, Subscription, follower_for

log = logging.getLogger(__name__)

PING_SECONDS = 20.0
FLEET_FRAME_SECONDS = 0.05  # a fleet page gets at most ~20 updates a second, each with all that changed
HELLO_SECONDS = 1.0
FRAME_MAX_BYTES = 4096  # the client only ever sends its small hello frame
READ_BATCH = 500
RETRY_SECONDS = 1.0


def _note_events(entries: Sequence[tuple[str, Entry]]) -> None:
    """Keep the open rollout pages' recent timelines current, once per entry for the whole process."""
    for stream_id, entry in entries:
        data.note_entries(str(entry.get("key")), [(stream_id, entry)])


def _latest_per_key(entries: Sequence[tuple[str, Entry]]) -> list[tuple[str, Entry]]:
    latest: dict[str, tuple[str, Entry]] = {}
    for stream_id, entry in entries:
        latest.pop(str(entry.get("key")), None)
        latest[str(entry.get("key"))] = (stream_id, entry)
    return list(latest.values())


_presenting: dict[tuple[str, str], asyncio.Future[dict[str, Any]]] = {}
_rows: OrderedDict[tuple[str, str], bytes] = OrderedDict()  # presented rows' JSON by (key, stream id)
_ROWS_KEPT = 4096


def _fleet_row_json(key: str, stream_id: str, row: Mapping[str, Any]) -> bytes:
    """An entry's fleet row, presented and encoded once for every fleet page it goes to (they wake
    together): with two hundred pages open, encoding each page's update was most of the process's CPU."""
    encoded = _rows.get((key, stream_id))
    if encoded is None:
        encoded = _rows[(key, stream_id)] = exact(orjson.dumps(fleet_row(row, data.now()), default=str))
        while len(_rows) > _ROWS_KEPT:
            _rows.popitem(last=False)
    return encoded


async def _rollout_page(key: str, view: Mapping[str, Any], stream_id: str) -> dict[str, Any]:
    """``data.rollout_page``, presented once when the pages watching a rollout all wake for one change."""
    memo = (key, stream_id)
    presenting = _presenting.get(memo)
    if presenting is None or presenting.get_loop() is not asyncio.get_running_loop():
        presenting = _presenting[memo] = asyncio.ensure_future(data.rollout_page(key, view, stream_id))
        presenting.add_done_callback(lambda _: _presenting.pop(memo, None))
    return await asyncio.shield(presenting)


class _LiveConsumer(AsyncWebsocketConsumer):
    key: str | None = None
    frame_seconds = 0.0  # the least time between two updates to one socket
    follower: StreamFollower | None = None
    subscription: Subscription | None = None

    async def connect(self) -> None:
        self.user = self.scope.get("user")
        await aaccess_for(self.user)  # the user's grants, loaded off the event loop
        if not may_read(self.user):
            await self.close(code=4401)
            return
        if not self.resolve():
            await self.close(code=4403)
            return
        self.cursor = "0-0"
        self.hello: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        self.last_update = 0.0
        await self.accept()
        self.accepted = True
        WEBSOCKET_CLIENTS.labels(consumer=type(self).__name__).inc()
        self.tasks = [asyncio.create_task(self.pump()), asyncio.create_task(self.pinger())]

    def resolve(self) -> bool:
        return True

    async def disconnect(self, code: int) -> None:
        for task in getattr(self, "tasks", []):
            task.cancel()
        self.unsubscribe()
        if getattr(self, "accepted", False):
            WEBSOCKET_CLIENTS.labels(consumer=type(self).__name__).dec()

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        frame = text_data if text_data is not None else bytes_data
        try:
            message = jsonbody.loads(frame or "{}", what="the frame", max_bytes=FRAME_MAX_BYTES)
        except jsonbody.JsonBodyError as error:
            # 1009 "message too big" / 1007 "invalid payload data" (RFC 6455 7.4.1); a reason is <= 123 bytes
            await self.close(code=1009 if error.too_large else 1007, reason=str(error)[:120])
            return
        if not isinstance(message, dict) or self.hello.done():
            return
        resume = message.get("resume")
        try:
            valid = isinstance(resume, str) and parse_id(resume) > (0, 0)
        except ValueError:
            valid = False
        self.hello.set_result(resume if valid else None)

    async def send_json(self, payload: Mapping[str, Any]) -> None:
        await self.send(text_data=json.dumps(payload, separators=(",", ":"), default=str))

    async def pinger(self) -> None:
        while True:
            await asyncio.sleep(PING_SECONDS)
            await self.send_json({"type": "ping"})

    async def pump(self) -> None:
        try:
            async with asyncio.timeout(HELLO_SECONDS):
                resume = await asyncio.shield(self.hello)
        except TimeoutError:
            resume = None
        while True:
            try:
                if self.subscription is None:
                    await self.start(resume)
                await self.subscription_ready()
            except FellBehind:  # a slow page: what it missed is still on the bus, most likely
                self.unsubscribe()
                resume = self.cursor if self.cursor != "0-0" else None
            except StreamTrimmed:
                self.unsubscribe()
                resume = None
            except BusError:
                log.warning("live bus unavailable; retrying", exc_info=True)
                self.unsubscribe()
                if self.cursor != "0-0":  # the page has what was sent: go on from there
                    resume = self.cursor
                await asyncio.sleep(RETRY_SECONDS)

    async def start(self, resume: str | None) -> None:
        """Subscribe first, then read the snapshot (or the gap): nothing in between can be missed."""
        self.follower = follower_for(data.bus(), _note_events)
        self.subscription = await self.follower.subscribe(self.key)
        if resume is None or not await self.resume_from(resume):
            await self.send_snapshot()

    async def subscription_ready(self) -> None:
        assert self.subscription is not None
        await self.subscription.ready.wait()
        wait = self.last_update + self.frame_seconds - asyncio.get_running_loop().time()
        if wait > 0:  # what arrives meanwhile joins this update
            await asyncio.sleep(wait)
        entries, events = self.subscription.take(self.cursor)
        if entries:
            self.last_update = asyncio.get_running_loop().time()
            await self.send_update(entries, events)

    def unsubscribe(self) -> None:
        if self.follower is not None and self.subscription is not None:
            self.follower.unsubscribe(self.subscription)
        self.subscription = None

    async def resume_from(self, stream_id: str) -> bool:
        """Replay what the client missed since ``stream_id``; False when only a snapshot will do."""
        assert self.follower is not None and self.subscription is not None
        # Recent: from the follower's buffer (read into it once, when every page of a restarted process
        # resumes from before its follower started).
        if self.follower.replay(self.subscription, stream_id) or (
            await self.follower.backfill(stream_id) and self.follower.replay(self.subscription, stream_id)
        ):
            self.cursor = stream_id
            await self.send_json({"type": "resumed", "streamId": stream_id})
            return True
        live = data.bus()
        if parse_id(stream_id) > parse_id(await live.last_id()):
            return False  # an id from a bus that has since been reset (embedded mode restarted)
        await live.read_since(stream_id, count=1)  # raises StreamTrimmed when the gap is gone
        self.cursor = stream_id
        await self.send_json({"type": "resumed", "streamId": stream_id})
        await self.read_gap()
        return True

    async def read_gap(self) -> None:
        """Read from the bus what the follower's buffer no longer holds (the mailbox has the rest)."""
        while True:
            entries = await data.bus().read_since(self.cursor, key=self.key, count=READ_BATCH)
            if not entries:
                return
            _note_events(entries)
            events = [event for _, entry in entries for event in entry.get("events") or ()]
            await self.send_update(_latest_per_key(entries), events)
            if len(entries) < READ_BATCH:
                return

    async def send_snapshot(self) -> None:
        raise NotImplementedError

    async def send_update(self, entries: Sequence[tuple[str, Entry]], events: Sequence[Any]) -> None:
        """Send the latest entry per rollout (oldest first); the last one's id becomes the cursor."""
        raise NotImplementedError


class FleetConsumer(_LiveConsumer):
    frame_seconds = FLEET_FRAME_SECONDS

    async def send_snapshot(self) -> None:
        # The same compact rows as the page's rows document, from the process's fleet index.
        self.cursor, rows = await data.fleet_row_texts_for(self.user)
        text = b"".join(
            (
                b'{"type":"snapshot","streamId":',
                orjson.dumps(self.cursor),
                b',"fields":',
                orjson.dumps(FIELDS),
                b',"rows":[',
                b",".join(rows),
                b"]}",
            )
        )
        await self.send(text_data=text.decode())

    async def send_update(self, entries: Sequence[tuple[str, Entry]], events: Sequence[Any]) -> None:
        self.cursor = entries[-1][0]
        access = await aaccess_for(self.user) if may_read(self.user) else None
        rows: list[bytes] = []
        removed: list[str] = []
        for stream_id, entry in entries:
            key, row = str(entry["key"]), entry.get("row") if entry.get("op") != "remove" else None
            if access is None or not access.can(GET, key):
                continue
            if row:
                rows.append(_fleet_row_json(key, stream_id, row))
            elif row is None:
                removed.append(key)
        # {"type": "update", "streamId", "rows", "removed"}, joined from the rows' shared encodings.
        text = b"".join(
            (
                b'{"type":"update","streamId":',
                orjson.dumps(self.cursor),
                b',"rows":[',
                b",".join(rows),
                b'],"removed":',
                orjson.dumps(removed),
                b"}",
            )
        )
        await self.send(text_data=text.decode())


class RolloutConsumer(_LiveConsumer):
    def resolve(self) -> bool:
        kwargs = self.scope["url_route"]["kwargs"]
        self.key = f"{kwargs['cluster']}/{kwargs['namespace']}/{kwargs['name']}"
        return can_view(self.user, self.key)

    async def send_snapshot(self) -> None:
        assert self.key is not None
        self.cursor, view = await data.gather_rollout(self.key)
        page = await _rollout_page(self.key, view, self.cursor) if view else None
        await self.send_json({"type": "snapshot", "streamId": self.cursor, "view": view, "page": page})

    async def send_update(self, entries: Sequence[tuple[str, Entry]], events: Sequence[Any]) -> None:
        assert self.key is not None
        stream_id, entry = entries[-1]  # only this rollout's entries: the latest view is all it needs
        self.cursor = stream_id
        view = entry.get("view") if entry.get("op") != "remove" else None
        page = await _rollout_page(self.key, view, stream_id) if view else None
        await self.send_json(
            {"type": "update", "streamId": stream_id, "view": view, "page": page, "events": list(events)}
        )
