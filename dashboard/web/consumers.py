"""Websocket consumers: the fleet and one rollout, live.

Protocol (JSON text frames):

- Connect to ``/ws/fleet/`` or ``/ws/rollouts/<cluster>/<namespace>/<name>/`` with the session cookie.
  Anonymous connections are refused (close code 4401) unless ``ANONYMOUS_READ_ONLY``; a rollout the user
  may not see closes with 4403. The Origin header is checked by ``AllowedHostsOriginValidator``.
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

Each connection follows the bus stream at its own pace with a cursor: the channel layer's doorbell only
wakes it. Updates are coalesced to the latest state per rollout, so a slow browser costs nothing but
its own staleness, and a cursor that fell off the stream's end gets a fresh snapshot.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping
from typing import Any

from channels.generic.websocket import AsyncWebsocketConsumer

from dashboard.access.rbac import aaccess_for
from dashboard.access.visibility import can_view, may_read
from dashboard.live.bus import BusError, StreamTrimmed, parse_id
from dashboard.live.messages import FLEET_GROUP, rollout_group
from dashboard.observability.metrics import WEBSOCKET_CLIENTS
from dashboard.web import data
from dashboard.web.fleet import fleet_row
from dashboard.web.fleet_index import FIELDS

log = logging.getLogger(__name__)

PING_SECONDS = 20.0
HELLO_SECONDS = 1.0
READ_BATCH = 500
RETRY_SECONDS = 1.0


class _LiveConsumer(AsyncWebsocketConsumer):
    group = ""
    key: str | None = None

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
        self.wake = asyncio.Event()
        self.hello: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        WEBSOCKET_CLIENTS.labels(consumer=type(self).__name__).inc()
        self.tasks = [asyncio.create_task(self.pump()), asyncio.create_task(self.pinger())]

    def resolve(self) -> bool:
        return True

    async def disconnect(self, code: int) -> None:
        for task in getattr(self, "tasks", []):
            task.cancel()
        if self.group and hasattr(self, "wake"):
            await self.channel_layer.group_discard(self.group, self.channel_name)
            WEBSOCKET_CLIENTS.labels(consumer=type(self).__name__).dec()

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        try:
            message = json.loads(text_data or "{}")
        except ValueError:
            message = {}
        if not isinstance(message, dict) or self.hello.done():
            return
        resume = message.get("resume")
        try:
            valid = isinstance(resume, str) and parse_id(resume) > (0, 0)
        except ValueError:
            valid = False
        self.hello.set_result(resume if valid else None)

    async def rollout_updated(self, message: Mapping[str, Any]) -> None:
        """The doorbell: something changed at or before ``stream_id``; the pump reads it."""
        self.wake.set()

    async def send_json(self, payload: Mapping[str, Any]) -> None:
        await self.send(text_data=json.dumps(payload, separators=(",", ":"), default=str))

    async def pinger(self) -> None:
        while True:
            await asyncio.sleep(PING_SECONDS)
            await self.send_json({"type": "ping"})

    async def pump(self) -> None:
        try:
            resume = await asyncio.wait_for(asyncio.shield(self.hello), HELLO_SECONDS)
        except TimeoutError:
            resume = None
        started = False
        while True:
            try:
                if not started:
                    if resume is None or not await self.resume_from(resume):
                        await self.send_snapshot()
                    started = True
                else:
                    await self.catch_up()
            except StreamTrimmed:
                started = False
                resume = None
                continue
            except BusError:
                log.warning("live bus unavailable; retrying", exc_info=True)
                await asyncio.sleep(RETRY_SECONDS)
                continue
            await self.wake.wait()
            self.wake.clear()

    async def resume_from(self, stream_id: str) -> bool:
        """Replay what the client missed since ``stream_id``; False when only a snapshot will do."""
        live = data.bus()
        if parse_id(stream_id) > parse_id(await live.last_id()):
            return False  # an id from a bus that has since been reset (embedded mode restarted)
        await live.read_since(stream_id, count=1)  # raises StreamTrimmed when the gap is gone
        self.cursor = stream_id
        await self.send_json({"type": "resumed", "streamId": stream_id})
        await self.catch_up()
        return True

    async def send_snapshot(self) -> None:
        raise NotImplementedError

    async def catch_up(self) -> None:
        raise NotImplementedError


class FleetConsumer(_LiveConsumer):
    group = FLEET_GROUP

    async def send_snapshot(self) -> None:
        # The same compact rows as the page's rows document, from the process's fleet index.
        self.cursor, rows = await data.fleet_rows_for(self.user)
        await self.send_json(
            {"type": "snapshot", "streamId": self.cursor, "fields": list(FIELDS), "rows": rows}
        )

    async def catch_up(self) -> None:
        while True:
            entries = await data.bus().read_since(self.cursor, count=READ_BATCH)
            if not entries:
                return
            latest: dict[str, Mapping[str, Any] | None] = {}
            for _, entry in entries:  # coalesce: only each rollout's latest row matters
                latest[entry["key"]] = entry.get("row") if entry.get("op") != "remove" else None
            self.cursor = entries[-1][0]
            moment = data.now()
            rows = [fleet_row(row, moment) for key, row in latest.items() if row and can_view(self.user, key)]
            removed = [key for key, row in latest.items() if row is None and can_view(self.user, key)]
            await self.send_json(
                {"type": "update", "streamId": self.cursor, "rows": rows, "removed": removed}
            )
            if len(entries) < READ_BATCH:
                return


class RolloutConsumer(_LiveConsumer):
    def resolve(self) -> bool:
        kwargs = self.scope["url_route"]["kwargs"]
        self.key = f"{kwargs['cluster']}/{kwargs['namespace']}/{kwargs['name']}"
        self.group = rollout_group(self.key)
        return can_view(self.user, self.key)

    async def send_snapshot(self) -> None:
        assert self.key is not None
        self.cursor, view = await data.gather_rollout(self.key)
        page = await data.rollout_page(self.key, view, self.cursor) if view else None
        await self.send_json({"type": "snapshot", "streamId": self.cursor, "view": view, "page": page})

    async def catch_up(self) -> None:
        assert self.key is not None
        entries = await data.bus().read_since(self.cursor, key=self.key, count=READ_BATCH)
        if not entries:
            return
        data.note_entries(self.key, entries)
        stream_id, entry = entries[-1]  # coalesce to the latest view
        self.cursor = stream_id
        view = entry.get("view") if entry.get("op") != "remove" else None
        page = await data.rollout_page(self.key, view, stream_id) if view else None
        events = [event for _, e in entries for event in e.get("events") or []]
        await self.send_json(
            {"type": "update", "streamId": stream_id, "view": view, "page": page, "events": events}
        )
