"""One reader of the bus stream per web process, fanning each entry out to the open websockets.

Two hundred open pages must not mean two hundred stream reads per change: that ran Redis's connection pool
dry and kept it dry with retries. Instead the process's ``StreamFollower`` (one per event loop) reads each
new range of the stream once — woken by the bus itself (``wait_for_entry``: one blocking read in Redis per
process, however many pages are open), at most every ``WAKE_SECONDS`` so a busy stream is read in batches,
and polling every few seconds should that wait fail — and hands the entries to the subscribed consumers
in-process. A ``Subscription`` is a bounded mailbox: it keeps only the latest entry per rollout (plus a
capped list of timeline events), so a slow browser costs memory bounded by the fleet's size and never slows
the follower or the other pages.

The follower also keeps the last ``BUFFER`` entries, so a page that resumes from a recent stream id is
served from memory; one resuming from an older id reads that gap from the bus itself, and one whose id fell
off the stream gets a fresh snapshot (``StreamTrimmed``), as before. A follower that has just started (a
restarted web process, with every page reconnecting at once) holds nothing from before its start: the first
page resuming from before it reads that gap into the buffer once (``backfill``), and the pages after it are
served from memory rather than each reading and decoding the same gap.

Non-goals: visibility (consumers filter per user), presentation, and any delivery guarantee beyond the
stream's own (the level-triggered snapshot + resume protocol in ``consumers`` provides that).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import islice, takewhile
from typing import Any

from dashboard.live.bus import BusError, Entry, LiveBus, StreamTrimmed, parse_id

log = logging.getLogger(__name__)

Id = tuple[int, int]
READ_BATCH = 1000
BUFFER = 2000  # recent entries kept for resuming pages (~10-30 s of a busy fleet)
POLL_SECONDS = 2.0  # read even without a wake-up (the wait failed), and the longest one blocking wait
WAKE_SECONDS = 0.02  # at most ~50 reads a second, however often the watcher publishes
RETRY_SECONDS = 1.0
EVENTS_KEPT = 200  # timeline events queued for one slow page (its page document carries the timeline)


class FellBehind(StreamTrimmed):
    """A fleet page did not take for so long that the follower's log no longer holds what it missed: it
    resumes from its last id (read from the bus) or, when the bus lost that too, reloads its snapshot."""


class _Log:
    """The last ``BUFFER`` entries the follower read, numbered: what fleet pages read from and resuming
    pages are replayed from."""

    def __init__(self, start: Id) -> None:
        self.items: deque[tuple[Id, str, Entry]] = deque(maxlen=BUFFER)
        self.end = 0  # the number of the next entry
        self.start_id = start  # the log holds every entry after this id

    def prepend(self, since: Id, items: Sequence[tuple[Id, str, Entry]]) -> bool:
        """Put ``items``, the entries after ``since`` up to the first held one, before the held ones (their
        numbers come before the first held entry's); False when they do not fit in the buffer."""
        if len(self.items) + len(items) > BUFFER:
            return False
        self.items.extendleft(reversed(items))
        self.start_id = since
        return True

    def append(self, item: tuple[Id, str, Entry]) -> None:
        if len(self.items) == self.items.maxlen:
            self.start_id = self.items[0][0]
        self.items.append(item)
        self.end += 1

    def since(self, number: int) -> list[tuple[Id, str, Entry]]:
        """Entries from number ``number`` on (oldest first); ``FellBehind`` when they are gone."""
        count = self.end - number
        if count > len(self.items):
            raise FellBehind("the page fell behind the process's recent updates")
        return list(islice(reversed(self.items), count))[::-1] if count > 0 else []

    def number_after(self, since: Id) -> int:
        """The number of the first entry newer than ``since`` (which the log must cover)."""
        newer = sum(1 for _ in takewhile(lambda item: item[0] > since, reversed(self.items)))
        return self.end - newer


@dataclass(eq=False)
class Subscription:
    """One rollout page's mailbox: the latest entry of its rollout and the timeline events since it last
    took, and a wake-up."""

    key: str | None
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    pending: dict[str, tuple[Id, str, Entry]] = field(default_factory=dict)
    events: deque[tuple[Id, Any]] = field(default_factory=lambda: deque(maxlen=EVENTS_KEPT))
    trimmed: bool = False  # the follower lost its place: the consumer needs a fresh snapshot

    def push(self, position: Id, stream_id: str, entry: Entry) -> None:
        key = str(entry.get("key"))
        self.pending.pop(key, None)  # re-insert: keys stay in the order of their latest change
        self.pending[key] = (position, stream_id, entry)
        self.events.extend((position, event) for event in entry.get("events") or ())
        self.ready.set()

    def take(self, after: str) -> tuple[list[tuple[str, Entry]], list[Any]]:
        """The latest entry per rollout newer than ``after`` (oldest first) and their events; empties
        the mailbox. Raises ``StreamTrimmed`` when the follower could not keep its place."""
        if self.trimmed:
            raise StreamTrimmed("the process's stream follower lost its place: reload the snapshot")
        since = parse_id(after)
        latest = sorted((item for item in self.pending.values() if item[0] > since), key=lambda i: i[0])
        events = [event for position, event in self.events if position > since]
        self.pending.clear()
        self.events.clear()
        self.ready.clear()
        return [(stream_id, entry) for _, stream_id, entry in latest], events


@dataclass(eq=False)
class FleetSubscription(Subscription):
    """A fleet page: a place in the follower's shared log rather than a mailbox. Pushing each entry into
    two hundred pages' mailboxes was the web process's largest cost; now an entry is stored once and a
    page reads what it has not had when it takes (at most ten times a second)."""

    log: _Log = field(default_factory=lambda: _Log((0, 0)))
    number: int = 0  # the log's entries before this one were taken

    def take(self, after: str) -> tuple[list[tuple[str, Entry]], list[Any]]:
        """The latest entry per rollout newer than ``after`` (oldest by latest change first); ``FellBehind``
        when the log no longer reaches back to this page's place."""
        if self.trimmed:
            raise StreamTrimmed("the process's stream follower lost its place: reload the snapshot")
        self.ready.clear()
        entries, self.number = self.log.since(self.number), self.log.end
        since = parse_id(after)
        latest: dict[str, tuple[str, Entry]] = {}
        for position, stream_id, entry in entries:
            if position > since:
                key = str(entry.get("key"))
                latest.pop(key, None)
                latest[key] = (stream_id, entry)
        return list(latest.values()), []


class StreamFollower:
    """Follows ``bus``'s stream from the id it started at while anyone is subscribed."""

    def __init__(
        self,
        bus: LiveBus,
        on_entries: Callable[[Sequence[tuple[str, Entry]]], None] | None = None,
        *,
        wake_on_writes: bool = True,
    ):
        self.bus = bus
        self.on_entries = on_entries
        self.wake_on_writes = wake_on_writes  # off: only ``ring`` and the poll wake it (tests)
        self.cursor: Id = (0, 0)  # the last id read
        self.reads = 0
        self._log = _Log((0, 0))
        self._fleet: set[Subscription] = set()
        self._by_key: dict[str, set[Subscription]] = {}
        self._wake = asyncio.Event()
        self._lock = asyncio.Lock()
        self._backfilling = asyncio.Lock()
        self._task: asyncio.Task[None] | None = None
        self._listener: asyncio.Task[None] | None = None

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def subscribe(self, key: str | None) -> Subscription:
        """A mailbox for ``key`` (None: every rollout). Everything after the stream's last id at the time
        of the call reaches it, so a snapshot read after subscribing cannot miss a change."""
        async with self._lock:
            if not self.running:
                await self._start()
            subscription = (
                Subscription(key)
                if key is not None
                else FleetSubscription(None, log=self._log, number=self._log.end)
            )
            if key is None:
                self._fleet.add(subscription)
            else:
                self._by_key.setdefault(key, set()).add(subscription)
            return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        if subscription.key is None:
            self._fleet.discard(subscription)
        else:
            watchers = self._by_key.get(subscription.key, set())
            watchers.discard(subscription)
            if not watchers:
                self._by_key.pop(subscription.key, None)
        if not self._subscribed():
            self._wake.set()  # lets the follower stop

    def replay(self, subscription: Subscription, after: str) -> bool:
        """Put the buffered entries after ``after`` into the mailbox; False when the buffer does not
        reach back that far (or ``after`` is ahead of what was read) and the gap must be read."""
        since = parse_id(after)
        if not self._log.start_id <= since <= self.cursor:
            return False
        if isinstance(subscription, FleetSubscription):
            subscription.number = self._log.number_after(since)
            if subscription.number < self._log.end:
                subscription.ready.set()
            return True
        for position, stream_id, entry in self._log.items:
            if position > since and entry.get("key") == subscription.key:
                subscription.push(position, stream_id, entry)
        return True

    async def backfill(self, after: str) -> bool:
        """Read the entries between ``after`` and the oldest one buffered into the buffer, once for every
        page resuming from before it (True when the buffer now reaches back to ``after``). Only a gap
        that fits in the buffer is read; a longer one each page reads for itself, as before."""
        since = parse_id(after)
        if since > self.cursor:  # not an id of this stream (a bus that was reset): a snapshot will do
            return False
        async with self._backfilling:
            start = self._log.start_id
            if start <= since:
                return since <= self.cursor
            if len(self._log.items) >= BUFFER:
                return False
            log_ = self._log
            gap: list[tuple[Id, str, Entry]] = []
            cursor = after
            while True:
                entries = await self.bus.read_since(cursor, count=READ_BATCH)
                for stream_id, entry in entries:
                    position = parse_id(stream_id)
                    if position > start:
                        break
                    gap.append((position, stream_id, entry))
                else:
                    if len(entries) == READ_BATCH and len(gap) < BUFFER:
                        cursor = entries[-1][0]
                        continue
                break
            # The buffer may have moved on while the gap was read (or been replaced by a restart).
            if log_ is not self._log or self._log.start_id != start or len(gap) >= BUFFER:
                return False
            return self._log.prepend(since, gap)

    def ring(self, stream_id: str | None = None) -> None:
        """The stream has reached ``stream_id``: read it (unless already past it)."""
        try:
            if stream_id is not None and parse_id(stream_id) <= self.cursor:
                return
        except ValueError:
            pass
        self._wake.set()

    def _subscribed(self) -> bool:
        return bool(self._fleet or self._by_key)

    async def _start(self) -> None:
        # Before any subscriber reads its snapshot: following from here cannot skip what it will miss.
        self.cursor = parse_id(await self.bus.last_id())
        self._log = _Log(self.cursor)
        self._wake.clear()
        self._task = asyncio.create_task(self._run())
        if self.wake_on_writes:
            self._listener = asyncio.create_task(self._listen())

    async def _listen(self) -> None:
        """Ring whenever the stream holds an entry past the cursor: the bus answers as soon as one is
        written. Then give the follower ``WAKE_SECONDS`` to read, so that the writes of a busy watcher are
        read in batches (and a wait from a cursor not yet moved does not spin)."""
        while True:
            try:
                newer = await self.bus.wait_for_entry(_format(self.cursor), POLL_SECONDS)
            except BusError:  # the store is down: the follower polls until it is back
                log.warning("waiting for the live bus's stream failed; polling", exc_info=True)
                await asyncio.sleep(RETRY_SECONDS)
                continue
            if newer is not None:
                self.ring(newer)
                await asyncio.sleep(WAKE_SECONDS)

    async def _run(self) -> None:
        try:
            await self._follow()
        finally:
            if self._listener is not None:
                self._listener.cancel()
                self._listener = None

    async def _follow(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(POLL_SECONDS):
                    await self._wake.wait()
            self._wake.clear()
            if not self._subscribed():
                return  # the next subscriber starts afresh from the stream's end
            try:
                await self._read()
            except StreamTrimmed:
                self._lost_place()
                return  # nobody is subscribed now; the next subscriber starts from the stream's end
            except BusError:
                log.warning("live bus unavailable; the stream follower retries", exc_info=True)
                await asyncio.sleep(RETRY_SECONDS)
                self._wake.set()

    async def _read(self) -> None:
        while True:
            entries = await self.bus.read_since(_format(self.cursor), count=READ_BATCH)
            self.reads += 1
            if entries:
                self._dispatch(entries)
            if len(entries) < READ_BATCH:
                return

    def _dispatch(self, entries: Sequence[tuple[str, Entry]]) -> None:
        # Synchronous from the cursor's move to the last push: a subscriber sees all of a batch or none.
        if self.on_entries is not None:
            self.on_entries(entries)
        for stream_id, entry in entries:
            position = parse_id(stream_id)
            self._log.append((position, stream_id, entry))
            for subscription in self._by_key.get(str(entry.get("key")), ()):
                subscription.push(position, stream_id, entry)
            self.cursor = position
        for fleet_page in self._fleet:
            fleet_page.ready.set()

    def _lost_place(self) -> None:
        """The stream was trimmed past the cursor (the follower stalled): every subscriber reloads."""
        log.warning("the stream follower fell off the stream's end; every page reloads its snapshot")
        for subscription in [*self._fleet, *(s for subs in self._by_key.values() for s in subs)]:
            subscription.trimmed = True
            subscription.ready.set()
        self._fleet.clear()
        self._by_key.clear()


def _format(position: Id) -> str:
    return f"{position[0]}-{position[1]}"


_followers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, StreamFollower] = weakref.WeakKeyDictionary()


def follower_for(
    bus: LiveBus, on_entries: Callable[[Sequence[tuple[str, Entry]]], None] | None = None
) -> StreamFollower:
    """The running loop's follower of ``bus`` (a new one when the process switched buses, as tests do)."""
    loop = asyncio.get_running_loop()
    follower = _followers.get(loop)
    if follower is None or follower.bus is not bus:
        follower = _followers[loop] = StreamFollower(bus, on_entries)
    return follower
