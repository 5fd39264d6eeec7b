"""The fleet index: every rollout's presented fleet row, kept current from the bus stream, per process.

Presenting 10,000 rows takes a few hundred milliseconds and reading them all from Redis about as long,
so the page must not do either per request. This index reads the fleet once, then follows the stream
from the id it read at (level-triggered: a trimmed stream or a bus error means a fresh read), and keeps
the encoded document — compact row arrays, gzip-compressed — cached for the fleet version (the stream id)
it was built at. A request costs one short stream read when nothing changed. Each row is kept encoded
(JSON bytes, ~0.5 KB, rather than a list of ~35 Python objects, ~3.5 KB): at 50,000 rollouts that is the
difference between 25 MB and 175 MB per web process, and the document is a join of them.

Rows here carry no clock-dependent field (the browser computes ages from ``startedAt``), so a cached
document stays right until the fleet changes. Non-goals: visibility (callers filter per user) and the
fleet page's sort (the browser sorts; favourites are per browser).
"""

from __future__ import annotations

import asyncio
import gzip
import weakref
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

import orjson

from dashboard.jsontext import exact
from dashboard.live.bus import Entry, StreamTrimmed, parse_id
from dashboard.web.fleet import fleet_row

# The fields of a compact row, in order (fleet_row's keys without the clock-dependent "age").
FIELDS: tuple[str, ...] = (
    "key", "cluster", "namespace", "name", "url", "strategy", "status", "icon", "reason", "group",
    "step", "stepIndex", "stepCount", "setWeight", "actualWeight", "weightSource", "canaryHash",
    "stableHash", "startedAt", "findings", "labels", "controller", "controllerLabel", "gitops", "gitopsIcon",
    "attention", "reasonCode", "tone", "gitopsTone", "images", "gitRevision", "application", "applicationSet",
)
READ_BATCH = 2000
FULL_RELOAD_AFTER = 20_000  # more changes than this since the last read: reading everything is cheaper


def compact(row: Mapping[str, Any]) -> list[Any]:
    return [row.get(field) for field in FIELDS]


def present(row: Mapping[str, Any], now: datetime) -> list[Any]:
    return compact(fleet_row(row, now))


def encode_row(row: Sequence[Any]) -> bytes:
    """One compact row as JSON; <, > and & escaped (they only occur inside strings): Kubernetes text can
    never read as markup, whatever sniffs the response."""
    text = exact(orjson.dumps(row))
    if b"<" in text or b">" in text or b"&" in text:
        text = text.replace(b"<", b"\\u003C").replace(b">", b"\\u003E").replace(b"&", b"\\u0026")
    return text


def encode(stream_id: str, rows: Sequence[bytes]) -> bytes:
    """The fleet document: ``{"streamId", "count", "fields", "rows": [[...], ...]}`` from encoded rows."""
    return b"".join(
        (
            b'{"streamId":',
            orjson.dumps(stream_id),
            b',"count":',
            str(len(rows)).encode(),
            b',"fields":',
            orjson.dumps(FIELDS),
            b',"rows":[',
            b",".join(rows),
            b"]}",
        )
    )


class FleetIndex:
    """Presented rows by key at ``version``; ``refresh`` brings it up to the bus's latest id."""

    def __init__(self, bus: Callable[[], Any], now: Callable[[], datetime]) -> None:
        self._bus = bus
        self._now = now
        self.version = ""
        self.rows: dict[str, bytes] = {}  # key -> the encoded compact row
        self._encoded: dict[str, tuple[bytes, bytes]] = {}  # version -> (json, gzip json)
        self._locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )
        self.full_reads = 0

    def clear(self) -> None:
        self.version, self.rows, self._encoded = "", {}, {}

    def _lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        lock = self._locks.get(loop)
        if lock is None:
            lock = self._locks[loop] = asyncio.Lock()
        return lock

    async def refresh(self) -> str:
        """Bring the rows up to date; returns the version (stream id) they are at."""
        async with self._lock():  # one reader at a time; the others then find it current
            if not self.version:
                await self._read_all()
                return self.version
            try:
                await self._follow()
            except StreamTrimmed:
                await self._read_all()
            return self.version

    async def _read_all(self) -> None:
        live = self._bus()
        stream_id = await live.last_id()  # first, so following from it cannot miss a change
        rows = await live.fleet()
        moment = self._now()
        self.rows = {str(row["key"]): encode_row(present(row, moment)) for row in rows}
        self.version = stream_id
        self._encoded = {}
        self.full_reads += 1

    async def _follow(self) -> None:
        live = self._bus()
        seen = 0
        while True:
            entries: list[tuple[str, Entry]] = await live.read_since(self.version, count=READ_BATCH)
            if not entries:
                return
            self.apply(entries)
            seen += len(entries)
            if len(entries) < READ_BATCH:
                return
            if seen >= FULL_RELOAD_AFTER:
                raise StreamTrimmed("too far behind: read the fleet again")

    def apply(self, entries: Sequence[tuple[str, Entry]]) -> None:
        moment = self._now()
        for stream_id, entry in entries:
            key = str(entry.get("key"))
            if entry.get("op") == "remove" or not entry.get("row"):
                self.rows.pop(key, None)
            else:
                self.rows[key] = encode_row(present(entry["row"], moment))
            if parse_id(stream_id) > parse_id(self.version or "0-0"):
                self.version = stream_id

    def document(self, gzipped: bool) -> bytes:
        """The whole fleet encoded at the current version (cached until the version moves)."""
        cached = self._encoded.get(self.version)
        if cached is None:
            raw = encode(self.version, list(self.rows.values()))
            cached = (raw, gzip.compress(raw, compresslevel=5))
            self._encoded = {self.version: cached}
        return cached[1] if gzipped else cached[0]

    def values(self, keys: Sequence[str] | None = None) -> list[list[Any]]:
        """The compact rows (of ``keys``, or all), decoded."""
        if keys is None:
            return [orjson.loads(text) for text in self.rows.values()]
        return [orjson.loads(self.rows[k]) for k in keys if k in self.rows]

    def subset(self, keys: Sequence[str], gzipped: bool) -> bytes:
        """Only some rows (a user who may not see everything); not cached, it is per user."""
        raw = encode(self.version, [self.rows[k] for k in keys if k in self.rows])
        return gzip.compress(raw, compresslevel=5) if gzipped else raw
