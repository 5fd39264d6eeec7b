"""The live bus: current snapshots, the fleet index and the update stream (see the package docstring).

Two implementations with the same semantics: ``RedisBus`` (when ``settings.REDIS_URL`` is set) and
``MemoryBus`` (embedded mode, one process). ``get_bus()`` picks one. Every method is async because the
readers are websocket consumers and the writer is the asyncio watcher; sync code calls them through
``asgiref.sync.async_to_sync``.

Readers learn that the stream moved from the stream itself (``wait_for_entry``: a blocking read in Redis),
so the watcher's publish is one transaction and nothing more: no doorbell through the channel layer, whose
``group_send`` round trips took a seventh of the watcher's loop on a full machine (docs/benchmarks.md).

Non-goals: no history (the database has it), no fan-out bookkeeping per browser (the stream ids are
enough).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import threading
import time
import uuid
import weakref
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol

import orjson

from dashboard.domain.attention import attention
from dashboard.observability.metrics import PUBLISH_LATENCY, timed_async

log = logging.getLogger(__name__)
Entry = dict[str, Any]
DEFAULT_PREFIX = "rollouts-ui:"
DEFAULT_CONTROLLER = "argo-rollouts"
SOCKET_TIMEOUT = 5.0  # seconds a Redis answer may take; a blocking wait stays below it


class BusError(Exception):
    """The bus's store could not be reached or answered with an error."""


class StreamTrimmed(Exception):
    """The id given to ``read_since`` is older than the oldest entry kept: reload the snapshot."""


class LiveBus(Protocol):
    async def publish(self, view: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> str: ...

    # ``built``: what each view was built from (``dashboard.kube.fingerprint.Built``, encoded), by view key,
    # written in the same transaction as the views (a record may also come without its view: one built
    # again to the same view).
    async def publish_many(
        self,
        items: Sequence[tuple[Mapping[str, Any], Sequence[Mapping[str, Any]]]],
        built: Mapping[str, bytes] | None = None,
        texts: Sequence[bytes] | None = None,
    ) -> list[str]: ...

    async def remove(self, key: str) -> str: ...

    async def snapshot(self, key: str) -> dict[str, Any] | None: ...

    async def snapshots(self, cluster: str) -> dict[str, dict[str, Any]]: ...

    async def snapshots_of(self, keys: Sequence[str]) -> dict[str, dict[str, Any]]: ...

    async def held_keys(self, cluster: str) -> set[str]: ...

    async def built_records(self, cluster: str) -> dict[str, bytes]: ...

    async def fleet(self) -> list[dict[str, Any]]: ...

    async def read_since(
        self, stream_id: str, *, key: str | None = None, count: int = 100
    ) -> list[tuple[str, Entry]]: ...

    async def last_id(self) -> str: ...

    async def wait_for_entry(self, after: str, timeout: float) -> str | None: ...

    async def incarnation(self) -> str: ...

    async def report_cluster(self, cluster: str, report: Mapping[str, Any]) -> None: ...

    async def cluster_reports(self) -> dict[str, dict[str, Any]]: ...

    # A watcher's handoff (``dashboard.kube.handoff``): its fields, saved as they come, replace the
    # cluster's last one whole once all are saved, and expire after ``ttl`` seconds; ``load_handoff``
    # gives them ({} when there is none). Returns the bytes saved in each field.
    async def save_handoff(
        self, cluster: str, fields: Iterable[tuple[str, bytes]], ttl: float
    ) -> dict[str, int]: ...

    async def load_handoff(self, cluster: str) -> dict[str, bytes]: ...


def view_key(view: Mapping[str, Any]) -> str:
    return f"{view.get('cluster')}/{view.get('namespace')}/{view.get('name')}"


def fleet_row(view: Mapping[str, Any]) -> dict[str, Any]:
    """The compact summary of one rollout that the fleet page lists."""
    severities = {"critical": 0, "warning": 0, "info": 0}
    for finding in view.get("findings") or ():
        severity = finding.get("severity") if isinstance(finding, Mapping) else None
        if severity in severities:
            severities[severity] += 1
    row = {
        "key": view_key(view),
        **{
            field: view.get(field)
            for field in (
                "cluster",
                "namespace",
                "name",
                "status",
                "message",
                "step",
                "setWeight",
                "actualWeight",
                "currentPodHash",
                "stableRS",
                "strategy",
            )
        },
        "findings": severities,
        # Which progressive-delivery controller runs it: a Flagger Canary's view says so, a Rollout's not.
        "controller": view.get("controller") or DEFAULT_CONTROLLER,
        "labels": view.get("labels") or {},
        "releaseStartedAt": view.get("releaseStartedAt"),
        "updatedAt": view.get("updatedAt"),
        "weightSource": view.get("weightSource"),
        # What the sync engine says, shown beside what the rollout says (the managing Application's words).
        "gitopsHealth": (view.get("gitops") or {}).get("health"),
        "gitopsSync": (view.get("gitops") or {}).get("sync"),
        # What runs where (the environments page): images with their stable/canary tags, the synced commit.
        "images": [
            {"image": i.get("image"), "tags": list(i.get("tags") or ())}
            for i in view.get("images") or ()
            if isinstance(i, Mapping) and i.get("image")
        ],
        "gitRevision": (view.get("gitops") or {}).get("revision") or view.get("gitRevision"),
        "application": (view.get("gitops") or {}).get("application"),
        "applicationSet": (view.get("gitops") or {}).get("applicationSet"),
        # attention, reason (the most severe open finding's title), reasonCode: the one classification.
        **attention(view),
    }
    return row


def parse_id(stream_id: str) -> tuple[int, int]:
    """A stream id ``"<ms>-<seq>"`` as a sortable pair; a clear error for anything else."""
    try:
        ms, _, seq = stream_id.partition("-")
        return int(ms), int(seq or 0)
    except ValueError:
        raise ValueError(f"not a stream id: {stream_id!r} (expected '<milliseconds>-<sequence>')") from None


def _dumps(value: Any) -> bytes:
    """Compact JSON; orjson because encoding full views is a large part of the watcher's CPU."""
    return orjson.dumps(value, default=str, option=_ORJSON_OPTIONS)


# Datetimes go through ``default=str`` as they did with the standard library; keys need not be strings.
_ORJSON_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_NON_STR_KEYS


def resume_cancellation() -> None:
    """Raise the running task's cancellation if something below it swallowed it. On Python 3.11 a Redis
    call can: redis-py's ``asyncio.wait_for`` around a socket write returns the write's result when the
    cancellation lands in the same tick (CPython gh-86296), and a cancelled loop of Redis calls (a web
    process's stream follower, the watcher's publisher) then ran on and hung its event loop's shutdown."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


@contextlib.contextmanager
def _talking_to_redis(what: str) -> Iterator[None]:
    """Redis's errors as ``BusError`` naming what failed; a swallowed cancellation raised again."""
    import redis

    try:
        yield
    except redis.RedisError as error:
        resume_cancellation()
        raise BusError(f"{what} failed: {error}") from error
    resume_cancellation()


# A publish as one script, atomic as a transaction is: the views into the snapshots and the fleet rows, one
# stream entry each (in order; their ids are the reply), then the records. One command and one reply where
# a MULTI/EXEC pipeline had one per view and per hash: redis-py's packing and parsing of those was half the
# watcher's cost of a publish, and most publishes carry one or two views.
# KEYS: snapshots, fleet rows, stream, records. ARGV: maxlen, n, n × (key, view, row, events), record pairs.
PUBLISH_SCRIPT = """
local function hset(key, pairs)
  for i = 1, #pairs, 1000 do
    redis.call('HSET', key, unpack(pairs, i, math.min(i + 999, #pairs)))
  end
end
local maxlen, n = ARGV[1], tonumber(ARGV[2])
local snapshots, rows, ids, records = {}, {}, {}, {}
for i = 0, n - 1 do
  local at = 3 + 4 * i
  snapshots[2 * i + 1], snapshots[2 * i + 2] = ARGV[at], ARGV[at + 1]
  rows[2 * i + 1], rows[2 * i + 2] = ARGV[at], ARGV[at + 2]
end
hset(KEYS[1], snapshots)
hset(KEYS[2], rows)
for i = 0, n - 1 do
  local at = 3 + 4 * i
  ids[i + 1] = redis.call('XADD', KEYS[3], 'MAXLEN', '~', maxlen, '*', 'key', ARGV[at], 'op', 'update',
                          'view', ARGV[at + 1], 'row', ARGV[at + 2], 'events', ARGV[at + 3])
end
for i = 3 + 4 * n, #ARGV do
  records[#records + 1] = ARGV[i]
end
hset(KEYS[4], records)
return ids
"""


PUBLISH_SHA = hashlib.sha1(PUBLISH_SCRIPT.encode()).hexdigest()


def _redis_errors() -> Any:
    import redis.exceptions

    return redis.exceptions


class _Line:
    """One connection of a client's pool kept for one caller (the watcher's publisher), its commands one
    at a time, packed with hiredis and each sent and answered within ``SOCKET_TIMEOUT``.

    Why not the client's ``execute_command``: for each command redis-py takes a connection from the pool
    and gives it back, packs each argument in Python and, with a socket timeout set, wraps the write in
    ``asyncio.wait_for``, a task of its own on Python 3.11. A publish cost its caller ~190 µs of CPU that
    way, ~95 µs here (``docs/benchmarks.md``, "Twenty-second session"), and the watcher publishes ~40
    times a second. The connection is still redis-py's: the URL's TLS, credentials and database apply.

    A command that fails on its connection (refused, reset, timed out, cancelled) leaves it closed, with
    the reply possibly unread: the next command connects afresh. One that never reached the server (its
    connection found closed when writing) is sent once more on a new connection; a command that may
    have reached it is not, since it may have run (a stream entry twice). An error reply
    (``ResponseError``) leaves the connection in order and is raised."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._connection: Any = None

    async def call(self, command: Sequence[Any]) -> Any:
        import hiredis

        packed = hiredis.pack_command(tuple(command))
        errors = _redis_errors()
        for attempt in (1, 2):
            connection = await self._connected()
            sent = False
            try:
                async with asyncio.timeout(SOCKET_TIMEOUT):
                    await connection.send_packed_command(packed, check_health=False)
                    sent = True
                    return await connection.read_response()
            except errors.ResponseError:
                raise
            except TimeoutError:
                await connection.disconnect(nowait=True)
                raise errors.TimeoutError(f"no answer from Redis within {SOCKET_TIMEOUT:g} s") from None
            except errors.ConnectionError:
                await connection.disconnect(nowait=True)
                if sent or attempt == 2:
                    raise
            except BaseException:  # cancelled: the reply, if any, would answer the next command
                await connection.disconnect(nowait=True)
                raise
        raise AssertionError("unreachable")

    async def _connected(self) -> Any:
        """The kept connection, checked as the pool checks one it hands out: closed by the server (a
        restart, its idle timeout) or holding bytes nobody asked for, it is closed here, and the write
        opens it again. (No I/O: it reads what the event loop already received.)"""
        connection = self._connection
        if connection is None:
            connection = await self._client.connection_pool.get_connection()
            # The whole command has its timeout above; one set here is a task per write (see the class).
            connection.socket_timeout = None
            self._connection = connection
        elif connection.is_connected:
            try:
                unasked = await connection.can_read()
            except _redis_errors().ConnectionError:
                unasked = True
            if unasked:
                await connection.disconnect(nowait=True)
        return connection

    async def close(self) -> None:
        if self._connection is not None:
            await self._connection.disconnect()
            self._connection = None


class RedisBus:
    """Snapshots in a hash, fleet rows in a hash, updates in a capped stream — all under one prefix."""

    def __init__(self, url: str, *, prefix: str = DEFAULT_PREFIX, maxlen: int = 10_000) -> None:
        self.url = url
        self.prefix = prefix
        self.maxlen = maxlen
        self.snap_key = f"{prefix}snap"
        self.fleet_key = f"{prefix}fleet"
        self.built_key = f"{prefix}built"
        self.stream_key = f"{prefix}stream"
        self.clusters_key = f"{prefix}clusters"
        self.epoch_key = f"{prefix}epoch"
        # redis.asyncio clients belong to one event loop; keep one per loop.
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()
        # The publisher's own connection, per event loop like the clients (``_Line``).
        self._lines: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Line] = weakref.WeakKeyDictionary()

    def _redis(self) -> Any:
        import redis.asyncio as aioredis

        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            client = aioredis.Redis.from_url(
                self.url, socket_timeout=SOCKET_TIMEOUT, socket_connect_timeout=3, health_check_interval=15
            )
            self._clients[loop] = client
        return client

    def _line(self) -> _Line:
        """This event loop's publishing connection (``_Line``), on its client's pool."""
        loop = asyncio.get_running_loop()
        line = self._lines.get(loop)
        if line is None:
            line = self._lines[loop] = _Line(self._redis())
        return line

    async def close(self) -> None:
        loop = asyncio.get_running_loop()
        line = self._lines.pop(loop, None)
        if line is not None:
            await line.close()
        client = self._clients.pop(loop, None)
        if client is not None:
            await client.aclose()

    async def publish(self, view: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> str:
        return (await self.publish_many([(view, events)]))[0]

    @timed_async(PUBLISH_LATENCY)
    async def publish_many(
        self,
        items: Sequence[tuple[Mapping[str, Any], Sequence[Mapping[str, Any]]]],
        built: Mapping[str, bytes] | None = None,
        texts: Sequence[bytes] | None = None,
    ) -> list[str]:
        if not items and not built:
            return []
        args: list[Any] = [self.maxlen, len(items)]
        for i, (view, events) in enumerate(items):
            text = texts[i] if texts else _dumps(view)
            args += (view_key(view), text, _dumps(fleet_row(view)), _dumps(list(events)))
        for key, record in (built or {}).items():
            args += (key, record)
        keys = (self.snap_key, self.fleet_key, self.stream_key, self.built_key)
        with _talking_to_redis("publishing to Redis"):
            line = self._line()
            try:
                ids = await line.call(("EVALSHA", PUBLISH_SHA, len(keys), *keys, *args))
            except _redis_errors().NoScriptError:  # a restarted or flushed Redis: the script goes along once
                ids = await line.call(("EVAL", PUBLISH_SCRIPT, len(keys), *keys, *args))
        return [_text(stream_id) for stream_id in ids]

    async def remove(self, key: str) -> str:
        with _talking_to_redis(f"removing {key} from Redis"):
            async with self._redis().pipeline(transaction=True) as pipe:
                pipe.hdel(self.snap_key, key)
                pipe.hdel(self.fleet_key, key)
                pipe.xadd(self.stream_key, {"key": key, "op": "remove", "events": "[]"},
                          maxlen=self.maxlen, approximate=True)
                pipe.hdel(self.built_key, key)
                results = await pipe.execute()
        return _text(results[2])

    async def snapshot(self, key: str) -> dict[str, Any] | None:
        raw = await self._call("hget", self.snap_key, key)
        return json.loads(raw) if raw else None

    async def snapshots(self, cluster: str) -> dict[str, dict[str, Any]]:
        found: dict[str, dict[str, Any]] = {}
        with _talking_to_redis("reading snapshots from Redis"):
            async for field, raw in self._redis().hscan_iter(self.snap_key, match=f"{_glob(cluster)}/*",
                                                              count=1000):
                found[_text(field)] = json.loads(raw)
        return found

    async def snapshots_of(self, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        if not keys:
            return {}
        raws = await self._call("hmget", self.snap_key, list(keys))
        return {key: _loads(raw) for key, raw in zip(keys, raws, strict=True) if raw}

    async def held_keys(self, cluster: str) -> set[str]:
        """The keys of ``cluster``'s views on the bus (the fleet index's keys alone: no view is read)."""
        keys = await self._call("hkeys", self.fleet_key)
        return {key for key in map(_text, keys) if key.startswith(f"{cluster}/")}

    async def built_records(self, cluster: str) -> dict[str, bytes]:
        return await self._scan(self.built_key, cluster, "reading what the views were built from")

    async def _scan(self, hash_key: str, cluster: str, what: str) -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        with _talking_to_redis(what):
            fields = self._redis().hscan_iter(hash_key, match=f"{_glob(cluster)}/*", count=1000)
            async for field, raw in fields:
                found[_text(field)] = bytes(raw)
        return found

    async def fleet(self) -> list[dict[str, Any]]:
        rows = await self._call("hgetall", self.fleet_key)
        return sorted((json.loads(raw) for raw in rows.values()), key=lambda row: row["key"])

    async def read_since(
        self, stream_id: str, *, key: str | None = None, count: int = 100
    ) -> list[tuple[str, Entry]]:
        parse_id(stream_id)
        await self._check_not_trimmed(stream_id)
        found: list[tuple[str, Entry]] = []
        start = f"({stream_id}"
        while len(found) < count:
            chunk = await self._call("xrange", self.stream_key, start, "+", count if key is None else 500)
            if not chunk:
                break
            for raw_id, fields in chunk:
                entry = _entry(fields)
                if key is None or entry["key"] == key:
                    found.append((_text(raw_id), entry))
                    if len(found) == count:
                        break
            start = f"({_text(chunk[-1][0])}"
        return found

    async def _check_not_trimmed(self, stream_id: str) -> None:
        after = parse_id(stream_id)
        if after == (0, 0):
            return
        first = await self._call("xrange", self.stream_key, "-", "+", 1)
        if first and parse_id(_text(first[0][0])) > after:
            raise StreamTrimmed(f"stream id {stream_id} is older than the oldest update kept")

    async def last_id(self) -> str:
        last = await self._call("xrevrange", self.stream_key, "+", "-", 1)
        return _text(last[0][0]) if last else "0-0"

    async def wait_for_entry(self, after: str, timeout: float) -> str | None:
        """The id of an entry newer than ``after``: at once when the stream holds one, else as soon as one
        is written (Redis answers a blocking ``XREAD`` then), or None after ``timeout`` seconds (at most a
        second short of the socket timeout, which would otherwise take the silence for a dead server)."""
        parse_id(after)
        block = max(1, int(min(timeout, SOCKET_TIMEOUT - 1) * 1000))
        with _talking_to_redis("waiting for the stream"):
            found = await self._redis().xread({self.stream_key: after}, count=1, block=block)
        for _, entries in found or ():
            for stream_id, _fields in entries:
                return _text(stream_id)
        return None

    async def incarnation(self) -> str:
        """Changes whenever the store may have lost what was written: Redis restarted (its ``run_id``;
        also a failover to another server) or the bus's keys were flushed (the epoch key, set once per
        store, is gone and set anew)."""
        with _talking_to_redis("reading the bus's incarnation from Redis"):
            info = await self._redis().info("server")
            async with self._redis().pipeline(transaction=True) as pipe:
                pipe.set(self.epoch_key, uuid.uuid4().hex, nx=True)
                pipe.get(self.epoch_key)
                _, epoch = await pipe.execute()
        return f"{info.get('run_id', '')}:{_text(epoch)}"

    async def report_cluster(self, cluster: str, report: Mapping[str, Any]) -> None:
        await self._call("hset", self.clusters_key, cluster, _dumps(dict(report)))

    async def cluster_reports(self) -> dict[str, dict[str, Any]]:
        raw = await self._call("hgetall", self.clusters_key)
        return {_text(k): _loads(_text(v)) for k, v in raw.items()}

    async def save_handoff(
        self, cluster: str, fields: Iterable[tuple[str, bytes]], ttl: float
    ) -> dict[str, int]:
        # Each field to a key of this save's own first, then renamed over the last handoff: a reader never
        # sees half of one, a watcher killed while saving leaves the last one standing (its own key
        # expires), and of two watchers saving at once (a leader and a standby) the last to finish wins
        # whole.
        key = f"{self.prefix}handoff:{cluster}"
        saving = f"{key}:saving:{uuid.uuid4().hex}"
        expiry = max(1, int(ttl * 1000))
        saved: dict[str, int] = {}
        with _talking_to_redis("saving the watcher's handoff to Redis"):
            client = self._redis()
            for field, value in fields:
                async with client.pipeline(transaction=False) as pipe:
                    pipe.hset(saving, field, value)
                    pipe.pexpire(saving, expiry)
                    await pipe.execute()
                saved[field] = len(value)
            async with client.pipeline(transaction=True) as pipe:
                pipe.rename(saving, key)
                pipe.pexpire(key, expiry)
                await pipe.execute()
        return saved

    async def load_handoff(self, cluster: str) -> dict[str, bytes]:
        fields = await self._call("hgetall", f"{self.prefix}handoff:{cluster}")
        return {_text(field): bytes(value) for field, value in fields.items()}

    async def _call(self, command: str, *args: Any) -> Any:
        with _talking_to_redis(f"Redis {command.upper()}"):
            return await getattr(self._redis(), command)(*args)


class MemoryBus:
    """The same semantics in one process (embedded mode): shared by every bus with the same prefix."""

    _stores: dict[str, _MemoryStore] = {}
    _stores_lock = threading.Lock()

    def __init__(self, *, prefix: str = DEFAULT_PREFIX, maxlen: int = 10_000):
        with self._stores_lock:
            self._store = self._stores.setdefault(prefix, _MemoryStore(maxlen))

    async def publish(self, view: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> str:
        return (await self.publish_many([(view, events)]))[0]

    async def publish_many(
        self,
        items: Sequence[tuple[Mapping[str, Any], Sequence[Mapping[str, Any]]]],
        built: Mapping[str, bytes] | None = None,
        texts: Sequence[bytes] | None = None,  # as Redis' (the same views): nothing to save here
    ) -> list[str]:
        written = []
        for view, events in items:
            key = view_key(view)
            # A JSON round trip gives readers the same detached, plain data Redis would.
            view_copy, row = json.loads(_dumps(view)), json.loads(_dumps(fleet_row(view)))
            entry = {"key": key, "op": "update", "view": view_copy, "row": row,
                     "events": json.loads(_dumps(list(events)))}
            written.append(self._store.write(key, view_copy, row, entry))
        with self._store.lock:
            self._store.built.update(built or {})
        return written

    async def remove(self, key: str) -> str:
        return self._store.write(key, None, None, {"key": key, "op": "remove", "view": None, "row": None,
                                                   "events": []})

    async def snapshot(self, key: str) -> dict[str, Any] | None:
        with self._store.lock:
            return self._store.snapshots.get(key)

    async def snapshots(self, cluster: str) -> dict[str, dict[str, Any]]:
        with self._store.lock:
            return {k: v for k, v in self._store.snapshots.items() if k.startswith(f"{cluster}/")}

    async def snapshots_of(self, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        with self._store.lock:
            return {k: self._store.snapshots[k] for k in keys if k in self._store.snapshots}

    async def held_keys(self, cluster: str) -> set[str]:
        with self._store.lock:
            return {k for k in self._store.rows if k.startswith(f"{cluster}/")}

    async def built_records(self, cluster: str) -> dict[str, bytes]:
        with self._store.lock:
            return {k: v for k, v in self._store.built.items() if k.startswith(f"{cluster}/")}

    async def fleet(self) -> list[dict[str, Any]]:
        with self._store.lock:
            return sorted(self._store.rows.values(), key=lambda row: row["key"])

    async def read_since(
        self, stream_id: str, *, key: str | None = None, count: int = 100
    ) -> list[tuple[str, Entry]]:
        after = parse_id(stream_id)
        with self._store.lock:
            stream = list(self._store.stream)
        if stream and after != (0, 0) and parse_id(stream[0][0]) > after:
            raise StreamTrimmed(f"stream id {stream_id} is older than the oldest update kept")
        found = [(i, e) for i, e in stream if parse_id(i) > after and (key is None or e["key"] == key)]
        return found[:count]

    async def last_id(self) -> str:
        with self._store.lock:
            return self._store.stream[-1][0] if self._store.stream else "0-0"

    async def wait_for_entry(self, after: str, timeout: float) -> str | None:
        position = parse_id(after)
        store, woken = self._store, asyncio.Event()
        waiter = (asyncio.get_running_loop(), woken)
        with store.lock:
            store.waiters.add(waiter)  # in the same hold as the look: a write after it wakes this
            newest = store.stream[-1][0] if store.stream else "0-0"
        try:
            if parse_id(newest) <= position:
                async with asyncio.timeout(timeout):
                    await woken.wait()
        except TimeoutError:
            return None
        finally:
            with store.lock:
                store.waiters.discard(waiter)
                newest = store.stream[-1][0] if store.stream else "0-0"
        return newest if parse_id(newest) > position else None

    async def incarnation(self) -> str:
        return "memory"  # the process's own store is never lost while the process lives

    async def report_cluster(self, cluster: str, report: Mapping[str, Any]) -> None:
        with self._store.lock:
            self._store.clusters[cluster] = json.loads(_dumps(dict(report)))

    async def cluster_reports(self) -> dict[str, dict[str, Any]]:
        with self._store.lock:
            return dict(self._store.clusters)

    async def save_handoff(
        self, cluster: str, fields: Iterable[tuple[str, bytes]], ttl: float
    ) -> dict[str, int]:
        saved = dict(fields)
        with self._store.lock:
            self._store.handoffs[cluster] = (time.monotonic() + ttl, saved)
        return {field: len(value) for field, value in saved.items()}

    async def load_handoff(self, cluster: str) -> dict[str, bytes]:
        with self._store.lock:
            expires, fields = self._store.handoffs.get(cluster, (0.0, {}))
            return dict(fields) if expires > time.monotonic() else {}


class _MemoryStore:
    def __init__(self, maxlen: int) -> None:
        self.lock = threading.Lock()
        self.snapshots: dict[str, dict[str, Any]] = {}
        self.rows: dict[str, dict[str, Any]] = {}
        self.built: dict[str, bytes] = {}
        self.stream: deque[tuple[str, Entry]] = deque(maxlen=maxlen)
        self.clusters: dict[str, dict[str, Any]] = {}
        self.handoffs: dict[str, tuple[float, dict[str, bytes]]] = {}  # cluster → (expires, fields)
        # Readers waiting for the next write, each on its own event loop (the watcher and the web server
        # may run on different threads in embedded mode).
        self.waiters: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()
        self._last = (0, 0)

    def write(self, key: str, view: dict[str, Any] | None, row: dict[str, Any] | None, entry: Entry) -> str:
        with self.lock:
            if view is None:
                self.snapshots.pop(key, None)
                self.rows.pop(key, None)
                self.built.pop(key, None)
            else:
                self.snapshots[key] = view
                self.rows[key] = row or {}
            ms = int(time.time() * 1000)
            self._last = (ms, 0) if ms > self._last[0] else (self._last[0], self._last[1] + 1)
            stream_id = f"{self._last[0]}-{self._last[1]}"
            self.stream.append((stream_id, entry))
            for loop, woken in list(self.waiters):
                try:
                    loop.call_soon_threadsafe(woken.set)
                except RuntimeError:  # its loop has closed: nobody waits there any more
                    self.waiters.discard((loop, woken))
            return stream_id


def get_bus(*, prefix: str | None = None) -> LiveBus:
    """The bus the settings ask for: Redis when ``REDIS_URL`` is set, else the in-process one."""
    from django.conf import settings

    prefix = prefix if prefix is not None else str(getattr(settings, "LIVE_REDIS_PREFIX", DEFAULT_PREFIX))
    maxlen = settings.LIVE_STREAM_MAXLEN
    if settings.REDIS_URL:
        return RedisBus(settings.REDIS_URL, prefix=prefix, maxlen=maxlen)
    return MemoryBus(prefix=prefix, maxlen=maxlen)


def _entry(fields: Mapping[Any, Any]) -> Entry:
    data = {_text(k): _text(v) for k, v in fields.items()}
    return {
        "key": data["key"],
        "op": data.get("op", "update"),
        "view": _loads(data["view"]) if data.get("view") else None,
        "row": _loads(data["row"]) if data.get("row") else None,
        "events": _loads(data.get("events") or "[]"),
    }


def _loads(text: str) -> Any:
    """orjson for what ``_dumps`` wrote (decoding entries is much of a web process's work), else the
    standard library, which also reads what orjson refuses."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _glob(text: str) -> str:
    """Escape Redis glob characters in a cluster name."""
    return "".join("\\" + c if c in "*?[]\\" else c for c in text)


def read_cluster_reports(*, timeout: float = 2.0) -> dict[str, dict[str, Any]]:
    """Every watcher's freshness report, read synchronously (readiness probes run in plain threads)."""
    from django.conf import settings

    prefix = str(getattr(settings, "LIVE_REDIS_PREFIX", DEFAULT_PREFIX))
    if not settings.REDIS_URL:
        store = MemoryBus._stores.get(prefix)
        if store is None:
            return {}
        with store.lock:
            return dict(store.clusters)
    import redis

    client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=timeout, socket_connect_timeout=timeout)
    try:
        raw = client.hgetall(f"{prefix}clusters")
    finally:
        client.close()
    return {_text(k): _loads(_text(v)) for k, v in raw.items()}
