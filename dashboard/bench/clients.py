"""A process of benchmark clients: ``python -m dashboard.bench.clients CONFIG.json``.

Each client does what the fleet page does (``static/js/fleet.js`` + ``live.js``): it fetches the rows
document ``/api/v1/fleet/rows`` with the session cookie, opens ``/ws/fleet/`` with the page's Origin,
sends ``{"resume": <the document's streamId>}``, applies ``snapshot`` and ``update`` messages to its
table of rows, and on a dropped connection reconnects resuming from the last stream id it saw. Every
message's stream id and arrival time is noted (see ``analysis`` for how that gives delays). The process
logs in once per server (a password hash per client would only measure PBKDF2) and shares that session
among its clients, as tabs of one browser do.

When the stop file appears it writes, as JSON, per client: the messages, counters and a digest of its
final table; and each distinct final table once (clients that agree share one). The config is a JSON
object: ``servers`` (base URLs), ``count``, ``offset`` (client ``i`` uses server ``(offset+i) % n``),
``username``, ``password``, ``out``, ``ready``, ``stop`` and ``progress`` (file paths; the last holds the
stream id all the process's clients have reached, rewritten five times a second).

Non-goals: rendering, or anything a browser does besides the protocol (``browser`` measures that).
"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import json
import random
import re
import sys
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import orjson

CSRF_INPUT = re.compile(r'name="csrfmiddlewaretoken"\s+value="([^"]+)"')
RECONNECTS = 20  # failed connection attempts in a row before a client gives up
RESTART_CODES = (1001, 1012)  # going away, service restart: the server is back in seconds
RESTART_RETRY_SECONDS = 30.0
OPENING_AT_ONCE = 4
CONNECT_SECONDS = 280  # every client loaded and connected (the harness waits 300 s)


def canonical(row: Any) -> str:
    # orjson: the clients share the machine with what they measure, so they should cost it little.
    return orjson.dumps(row, option=orjson.OPT_SORT_KEYS).decode()


_ROWS: dict[str, str] = {}  # one copy of each distinct row text for all the process's clients
FRAMES_KEPT = 256


@dataclass(frozen=True)
class Update:
    """An update frame as table entries: pages woken by the same change get the same frame, so it is
    decoded once per process (the clients stand in for browsers elsewhere; their CPU is not the server's,
    and every cycle they spend here is one the server under test does not get)."""

    stream_id: str
    rows: dict[str, str]  # key → canonical row text
    removed: list[str]


_DOCUMENTS: dict[bytes, tuple[list[str], str, dict[str, str]]] = {}  # rows document digest → its table
_FRAMES: OrderedDict[tuple[tuple[str, ...], str], Update] = OrderedDict()  # (fields, frame) → Update


def shared(text: str) -> str:
    """``text``, stored once however many clients' tables hold it (a hundred tables of 10,000 rows that
    mostly agree would otherwise take gigabytes and crowd the processes being measured)."""
    return _ROWS.setdefault(text, text)


def compact(row: dict[str, Any], fields: list[str]) -> list[Any]:
    return [row.get(name) for name in fields]


@dataclass
class Client:
    server: str
    session: aiohttp.ClientSession
    messages: list[tuple[str, float]] = field(default_factory=list)
    table: dict[str, str] = field(default_factory=dict)
    rows_received: int = 0
    bytes_received: int = 0
    reconnects: int = 0
    errors: list[str] = field(default_factory=list)
    connected: asyncio.Event = field(default_factory=asyncio.Event)
    last_id: str | None = None
    fields: list[str] = field(default_factory=list)
    opened: bool = False
    close_code: int | None = None

    def load(self, fields: list[str], rows: list[Any]) -> None:
        self.fields = fields
        self.table = {}
        for row in rows:
            values = compact(row, fields) if isinstance(row, dict) else row
            self.table[shared(str(values[fields.index("key")]))] = shared(canonical(values))

    def apply_text(self, text: str, at: float) -> None:
        """Apply a frame as received (an update frame this process has decoded already is reused)."""
        memo = (tuple(self.fields), text)
        update = _FRAMES.get(memo)
        if update is not None:
            _FRAMES.move_to_end(memo)
            self.apply_update(update, at)
            return
        message = orjson.loads(text)
        if message.get("type") != "update":
            self.apply(message, at)
            return
        update = Update(
            str(message.get("streamId")),
            {str(r["key"]): shared(canonical(compact(r, self.fields))) for r in message.get("rows") or []},
            [str(key) for key in message.get("removed") or []],
        )
        _FRAMES[memo] = update
        while len(_FRAMES) > FRAMES_KEPT:
            _FRAMES.popitem(last=False)
        self.apply_update(update, at)

    def apply_update(self, update: Update, at: float) -> None:
        self.table.update(update.rows)
        for key in update.removed:
            self.table.pop(key, None)
        self.rows_received += len(update.rows) + len(update.removed)
        self.messages.append((update.stream_id, at))
        self.last_id = update.stream_id

    def apply(self, message: dict[str, Any], at: float) -> None:
        kind = message.get("type")
        if kind == "ping":
            return
        stream_id = message.get("streamId")
        if kind == "snapshot":
            self.load(list(message.get("fields") or self.fields), list(message.get("rows") or []))
            self.rows_received += len(message.get("rows") or [])
        elif kind == "update":
            for row in message.get("rows") or []:
                self.table[str(row["key"])] = shared(canonical(compact(row, self.fields)))
            for key in message.get("removed") or []:
                self.table.pop(str(key), None)
            self.rows_received += len(message.get("rows") or []) + len(message.get("removed") or [])
        if isinstance(stream_id, str) and kind in ("snapshot", "update", "resumed"):
            self.messages.append((stream_id, at))
            self.last_id = stream_id

    async def run(self, stop: asyncio.Event, opening: asyncio.Semaphore) -> None:
        async with opening, self.session.get(self.server + "/api/v1/fleet/rows") as response:
            if response.status != 200:
                raise RuntimeError(f"{self.server}/api/v1/fleet/rows answered {response.status}")
            body = await response.read()
            at = time.time()
        self.load_document(body)
        self.messages.append((self.last_id or "0-0", at))
        del body  # (it would otherwise live as long as this coroutine)
        failed, restarting_until = 0, 0.0
        while not stop.is_set():
            self.opened, self.close_code = False, None
            try:
                await self._follow(stop)
            except (aiohttp.ClientError, OSError, RuntimeError) as error:
                self.errors.append(f"{time.time():.3f} {error!r}")
            failed = 0 if self.opened else failed + 1
            if self.opened:
                restarting_until = 0.0
            if self.close_code in RESTART_CODES:
                restarting_until = time.monotonic() + RESTART_RETRY_SECONDS
            if stop.is_set() or (failed >= RECONNECTS and time.monotonic() >= restarting_until):
                return
            self.reconnects += 1
            await asyncio.sleep(reconnect_delay(failed, restarting=time.monotonic() < restarting_until))

    def load_document(self, body: bytes) -> None:
        """Load the rows document; pages that got the same document (the server caches it per fleet
        version) share its decoding: a hundred pages decoding 50,000 rows each took minutes."""
        digest = hashlib.blake2b(body, digest_size=16).digest()
        loaded = _DOCUMENTS.get(digest)
        if loaded is None:
            doc = orjson.loads(body)
            self.load(list(doc["fields"]), list(doc["rows"]))
            loaded = _DOCUMENTS[digest] = (self.fields, str(doc["streamId"]), dict(self.table))
            while len(_DOCUMENTS) > 2:
                _DOCUMENTS.pop(next(iter(_DOCUMENTS)))
        self.fields, self.last_id = list(loaded[0]), loaded[1]
        self.table = dict(loaded[2])

    async def _follow(self, stop: asyncio.Event) -> None:
        url = self.server.replace("http://", "ws://", 1) + "/ws/fleet/"
        async with self.session.ws_connect(
            url, headers={"Origin": self.server}, max_msg_size=64 * 2**20, heartbeat=None
        ) as ws:
            self.opened = True
            await ws.send_str(json.dumps({"resume": self.last_id} if self.last_id else {}))
            stopping = asyncio.ensure_future(stop.wait())
            try:
                while True:
                    receiving = asyncio.ensure_future(ws.receive())
                    await asyncio.wait({receiving, stopping}, return_when=asyncio.FIRST_COMPLETED)
                    if not receiving.done():
                        receiving.cancel()
                        return
                    message = receiving.result()
                    if message.type != aiohttp.WSMsgType.TEXT:
                        self.close_code = ws.close_code
                        raise RuntimeError(f"websocket closed ({message.type.name}, code {ws.close_code})")
                    at = time.time()
                    self.bytes_received += len(message.data)
                    self.apply_text(message.data, at)
                    self.connected.set()
            finally:
                stopping.cancel()

    def report(self) -> dict[str, Any]:
        return {
            "server": self.server,
            "messages": self.messages,
            "rows_received": self.rows_received,
            "bytes_received": self.bytes_received,
            "reconnects": self.reconnects,
            "errors": self.errors[:20],
            "table": table_digest(self.table),
        }


def reconnect_delay(failed: int, restarting: bool = False) -> float:
    """Seconds before the next attempt after ``failed`` failed attempts in a row, as ``live.js`` waits:
    0.5 s, 1 s, 2 s … capped at 15 s; ~0.5 s while the server said it is restarting (close code 1012 or
    1001, for 30 s); ±25 % jitter so a restarted server is not hit all at once."""
    base = 0.5 if restarting else min(15.0, 0.5 * 2**failed)
    return base * (0.75 + random.random() * 0.5)


def table_digest(table: dict[str, str]) -> str:
    h = hashlib.blake2b(digest_size=12)
    for key in sorted(table):
        h.update(key.encode())
        h.update(b"\0")
        h.update(table[key].encode())
        h.update(b"\n")
    return h.hexdigest()


async def login(session: aiohttp.ClientSession, server: str, username: str, password: str) -> None:
    async with session.get(server + "/accounts/login/") as response:
        page = await response.text()
    match = CSRF_INPUT.search(page)
    if match is None:
        raise RuntimeError(f"{server}/accounts/login/ has no CSRF token field")
    form = {"username": username, "password": password, "csrfmiddlewaretoken": match.group(1), "next": "/"}
    async with session.post(
        server + "/accounts/login/",
        data=form,
        headers={"Origin": server, "Referer": server + "/accounts/login/"},
        allow_redirects=False,
    ) as response:
        if response.status != 302:
            raise RuntimeError(f"logging in at {server} failed with status {response.status}")


async def main_async(config: dict[str, Any]) -> int:
    servers: list[str] = list(config["servers"])
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=10)
    sessions = {
        s: aiohttp.ClientSession(
            cookie_jar=aiohttp.CookieJar(unsafe=True),
            timeout=timeout,
            connector=aiohttp.TCPConnector(limit=0),
        )
        for s in servers
    }
    stop = asyncio.Event()
    try:
        for server, session in sessions.items():
            await login(session, server, config["username"], config["password"])
        clients = [
            Client(
                servers[(config["offset"] + i) % len(servers)],
                sessions[servers[(config["offset"] + i) % len(servers)]],
            )
            for i in range(int(config["count"]))
        ]
        # Pages open a few at a time, as people do: a hundred simultaneous first loads would only measure
        # the database's connection limit (each request loads its session).
        opening = asyncio.Semaphore(OPENING_AT_ONCE)
        tasks = [asyncio.create_task(c.run(stop, opening)) for c in clients]
        async with asyncio.timeout(CONNECT_SECONDS):
            await asyncio.gather(*(c.connected.wait() for c in clients))
        Path(config["ready"]).write_text(str(len(clients)))
        stop_file, progress = Path(config["stop"]), Path(config["progress"])
        while not stop_file.exists():
            _write_progress(progress, clients)
            # A hundred tables of the whole fleet make a heap of gigabytes: a full collection over it
            # stalled these clients for seconds, and their late arrival times read as server delay.
            gc.freeze()
            await asyncio.sleep(0.2)
        stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)
        tables: dict[str, dict[str, str]] = {}
        for c in clients:
            tables.setdefault(table_digest(c.table), c.table)
        Path(config["out"]).write_text(
            json.dumps({"clients": [c.report() for c in clients], "tables": tables})
        )
        return 0
    finally:
        for session in sessions.values():
            await session.close()


def _write_progress(path: Path, clients: list[Client]) -> None:
    """The stream id every client of this process has reached (the harness waits on it), written whole."""
    reached = min((parse_id(c.last_id) for c in clients if c.last_id), default=(0, 0))
    scratch = path.with_suffix(".tmp")
    scratch.write_text(f"{reached[0]}-{reached[1]}")
    scratch.replace(path)


def parse_id(stream_id: str) -> tuple[int, int]:
    ms, _, seq = stream_id.partition("-")
    return int(ms), int(seq or 0)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m dashboard.bench.clients CONFIG.json", file=sys.stderr)
        return 2
    config = json.loads(Path(argv[0]).read_text())
    return asyncio.run(main_async(config))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
