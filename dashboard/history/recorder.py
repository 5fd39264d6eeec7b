"""The history recorder: turns published views and their timeline events into release rows.

``record_batch(items)`` is the pure-ish core (Django ORM, synchronous): for every ``(view, events, at)``
it makes sure the releases exist, updates the current release from the view (revision, images, steps
reached, outcome, git revision) and inserts the events. Inserts use ``ignore_conflicts`` against the
unique constraints, so recording the same thing twice is a no-op.

``Recorder`` runs ``record_batch`` on its own thread, in batches, so the watcher's event loop never waits
for the database (its queue holds each change's ``recorded_part`` of the view, not the view, compressed
once the queue backs up); a database outage is retried with backoff while the queue (bounded) holds the
work.
``prune_history(days)`` deletes releases that ended more than ``days`` ago (``HISTORY_RETENTION_DAYS``).

Non-goals: no reading API (the web part queries the models), no live state.
"""

from __future__ import annotations

import logging
import queue
import random
import threading
import time
import zlib
from collections.abc import Collection, Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
from django.db import DEFAULT_DB_ALIAS, close_old_connections, connection, connections, transaction
from django.db.utils import DatabaseError, InterfaceError

from dashboard.domain import timeline as tl
from dashboard.history.models import Outcome, Release, TimelineEvent
from dashboard.notify.service import notify_recorded

log = logging.getLogger(__name__)

Item = tuple[Mapping[str, Any], Sequence[Mapping[str, Any]], datetime]
ReleaseKey = tuple[str, str, str, str]
ENDED = (Outcome.PROMOTED, Outcome.ABORTED, Outcome.SUPERSEDED)


def record_batch(items: Sequence[Item]) -> None:
    """Record views and events; idempotent, one transaction."""
    if not items:
        return
    with transaction.atomic():
        _plan_each_statement()
        releases = _ensure_releases(items)
        changed: dict[int, Release] = {}
        new_events: list[tuple[Release, Mapping[str, Any], datetime]] = []
        rollbacks: list[tuple[ReleaseKey, Release, datetime]] = []
        for view, events, at in items:
            ident = _ident(view)
            if ident is None:
                continue
            for event in events:
                release = releases.get((*ident, str(event.get("podHash") or "")))
                if release is None:
                    continue
                new_events.append((release, event, at))
                previous = str((event.get("data") or {}).get("previousPodHash") or "")
                if (
                    event.get("kind") == tl.RELEASE_STARTED
                    and previous
                    and previous != release.pod_hash
                    and release.started_at < _event_time(event, at)
                ):
                    # The rollout went back to a release it ran before: the one it left was rolled back.
                    rollbacks.append(((*ident, previous), release, _event_time(event, at)))
                if event.get("kind") == tl.RELEASE_SUPERSEDED and release.outcome == Outcome.IN_PROGRESS:
                    release.outcome, release.ended_at = Outcome.SUPERSEDED, _event_time(event, at)
                    changed[release.pk] = release
            current = releases.get((*ident, str(view.get("currentPodHash") or "")))
            if current is not None and _apply_view(current, view, at):
                changed[current.pk] = current
        if changed:
            stamp = datetime.now(UTC)
            for release in changed.values():
                release.updated_at = stamp  # a plain UPDATE does not apply auto_now
            _update_releases(changed.values())
        if new_events:
            _insert_events(new_events)
        for (cluster, namespace, rollout, pod_hash), back_to, when in rollbacks:
            Release.objects.filter(
                cluster=cluster,
                namespace=namespace,
                rollout=rollout,
                pod_hash=pod_hash,
                started_at__gt=back_to.started_at,
                rolled_back_at__isnull=True,
            ).update(rolled_back_at=when)


def _plan_each_statement() -> None:
    """Plan this transaction's statements for the tables as they are now. PostgreSQL keeps a generic plan
    for its foreign-key checks and for prepared statements; made while a fresh install's history tables
    were nearly empty, it scans them whole, and keeps doing so as they grow until autovacuum first
    analyzes them: on a 10,000-rollout start each batch's commit took 40 → 320 ms and the queue backed up.
    A batch has few statements, so planning each costs little."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL plan_cache_mode = force_custom_plan")


# What a view may change on its release (``_apply_view`` says whether any of it did), and what is saved.
_FROM_VIEW = (
    "revision",
    "images",
    "steps_reached",
    "step_count",
    "outcome",
    "ended_at",
    "git_revision",
    "rollout_uid",
    "labels",
)
_UPDATED_FIELDS = (*_FROM_VIEW, "updated_at")


def _update_releases(releases: Iterable[Release]) -> None:
    """Save what ``_apply_view`` changes. On PostgreSQL one UPDATE for the batch, its rows as one array
    per column; elsewhere one parametrised UPDATE per release, sent as one batch. (Django's
    ``bulk_update`` builds a CASE expression per field and row; at a few hundred rows that held the
    watcher's GIL for most of its initial publish.)"""
    meta = Release._meta
    assert meta.pk is not None
    fields = [meta.pk, *(field for field in meta.concrete_fields if field.name in _UPDATED_FIELDS)]
    assert len(fields) == len(_UPDATED_FIELDS) + 1
    rows = [[getattr(release, field.attname) for field in fields] for release in releases]
    quote = connection.ops.quote_name
    table, key = quote(meta.db_table), quote(meta.pk.column)
    if connection.vendor == "postgresql":
        source, columns, params = _unnest(fields, rows)
        sql = (
            f"UPDATE {table} SET "
            + ", ".join(f"{quote(f.column)} = {c}" for f, c in zip(fields[1:], columns[1:], strict=True))
            + f" FROM {source} WHERE {table}.{key} = {columns[0]}"
        )
        with _batch_cursor() as cursor:
            cursor.execute(sql, params)
        return
    sql = (
        f"UPDATE {table} SET "
        + ", ".join(f"{quote(field.column)} = %s" for field in fields[1:])
        + f" WHERE {key} = %s"
    )
    with _batch_cursor() as cursor:
        cursor.executemany(sql, [[*_prepared(fields[1:], row[1:]), row[0]] for row in rows])


def prune_history(days: int, *, now: datetime | None = None) -> int:
    """Delete releases (and their events) that ended more than ``days`` ago; returns how many."""
    cutoff = (now or datetime.now(UTC)) - timedelta(days=days)
    _, per_model = Release.objects.filter(ended_at__lt=cutoff).delete()
    return per_model.get(Release._meta.label, 0)


def _ident(view: Mapping[str, Any]) -> tuple[str, str, str] | None:
    cluster, namespace, name = view.get("cluster"), view.get("namespace"), view.get("name")
    if not all(isinstance(v, str) and v for v in (cluster, namespace, name)):
        return None
    return str(cluster), str(namespace), str(name)


def _ensure_releases(items: Sequence[Item]) -> dict[ReleaseKey, Release]:
    """Create the releases the batch refers to (ignoring existing ones) and load them all."""
    wanted: dict[ReleaseKey, tuple[Mapping[str, Any], datetime, datetime]] = {}  # → (view, started, at)
    for view, events, at in items:
        ident = _ident(view)
        if ident is None:
            continue
        started = {
            str(e.get("podHash")): _event_time(e, at)
            for e in events
            if e.get("kind") == tl.RELEASE_STARTED and e.get("podHash")
        }
        hashes = {str(e.get("podHash")) for e in events if e.get("podHash")}
        if isinstance(view.get("currentPodHash"), str) and view["currentPodHash"]:
            hashes.add(view["currentPodHash"])
        for pod_hash in hashes:
            wanted.setdefault((*ident, pod_hash), (view, started.get(pod_hash, at), at))
    if not wanted:
        return {}
    # Most releases of a batch exist already (a rollout is published many times per release): read them
    # first and make and insert only the missing ones, then read those (ignore_conflicts returns no
    # primary keys).
    found = _load_releases(wanted.keys())
    missing = [_new_release(key, *wanted[key]) for key in wanted if key not in found]
    if missing:
        _insert_releases(missing)
        found.update(_load_releases([(r.cluster, r.namespace, r.rollout, r.pod_hash) for r in missing]))
    return found


def _new_release(key: ReleaseKey, view: Mapping[str, Any], started_at: datetime, at: datetime) -> Release:
    cluster, namespace, rollout, pod_hash = key
    release = Release(
        cluster=cluster,
        namespace=namespace,
        rollout=rollout,
        pod_hash=pod_hash,
        rollout_uid=str(view.get("uid") or ""),
        started_at=started_at,
    )
    if pod_hash == view.get("currentPodHash"):
        _apply_view(release, view, at)  # a new release is inserted whole, not then updated
    return release


def _load_releases(wanted: Collection[ReleaseKey]) -> dict[ReleaseKey, Release]:
    """The stored releases among the keys ``wanted``, locked for this transaction, in one query (one per
    rollout held the watcher's GIL for most of a 10,000-rollout initial publish). On PostgreSQL the keys
    travel as four arrays and match exactly, through the unique index; elsewhere each column's IN list
    makes a superset of the keys (a release hash rarely repeats, so the extra rows are few, and dropped)."""
    if connection.vendor != "postgresql":
        return _load_releases_orm(wanted)
    meta = Release._meta
    fields = list(meta.concrete_fields)
    key_fields: list[Any] = [meta.get_field(name) for name in ("cluster", "namespace", "rollout", "pod_hash")]
    quote = connection.ops.quote_name
    source, columns, params = _unnest(key_fields, list(wanted))
    sql = (
        f"SELECT {', '.join(quote(str(field.column)) for field in fields)} FROM {quote(meta.db_table)}"
        f" WHERE ({', '.join(quote(field.column) for field in key_fields)})"
        f" IN (SELECT {', '.join(columns)} FROM {source}) FOR UPDATE"
    )
    # Read as the ORM reads: each field's own conversion (a JSON column arrives as text) on the raw value.
    converters = [(i, field) for i, field in enumerate(fields) if hasattr(field, "from_db_value")]
    names = [field.attname for field in fields]
    found: dict[ReleaseKey, Release] = {}
    with _batch_cursor() as cursor:
        cursor.execute(sql, params)
        for raw in cursor.fetchall():
            values = list(raw)
            for i, field in converters:
                values[i] = field.from_db_value(values[i], None, connection)
            release = Release.from_db(connection.alias, names, values)
            found[(release.cluster, release.namespace, release.rollout, release.pod_hash)] = release
    return found


def _load_releases_orm(keys: Collection[ReleaseKey]) -> dict[ReleaseKey, Release]:
    wanted = set(keys)
    columns = list(zip(*wanted, strict=True))
    rows = Release.objects.select_for_update().filter(
        cluster__in=set(columns[0]),
        namespace__in=set(columns[1]),
        rollout__in=set(columns[2]),
        pod_hash__in=set(columns[3]),
    )
    found: dict[ReleaseKey, Release] = {}
    for row in rows:
        key = (row.cluster, row.namespace, row.rollout, row.pod_hash)
        if key in wanted:
            found[key] = row
    return found


def _insert_releases(releases: Sequence[Release]) -> None:
    """Insert new releases, skipping any another writer stored meanwhile (``ignore_conflicts``)."""
    meta = Release._meta
    now = datetime.now(UTC)
    for release in releases:
        release.updated_at = now  # what auto_now would set
    fields = [field for field in meta.concrete_fields if field is not meta.pk]
    _insert(meta.db_table, fields, [[getattr(r, field.attname) for field in fields] for r in releases])


def _from_view(release: Release) -> tuple[Any, ...]:
    return tuple(getattr(release, field) for field in _FROM_VIEW)


def _apply_view(release: Release, view: Mapping[str, Any], at: datetime) -> bool:
    """Bring the current release up to date with its view; True when something changed."""
    before = _from_view(release)
    revision = view.get("revision")
    if isinstance(revision, int) and not isinstance(revision, bool):
        release.revision = revision
    # The release's own images are its pod template's; view["images"] spans every revision.
    containers = [c for c in view.get("containers") or () if isinstance(c, Mapping) and c.get("image")]
    images = [c["image"] for c in containers] or [
        i.get("image") for i in view.get("images") or () if isinstance(i, Mapping) and i.get("image")
    ]
    if images:
        release.images = images
    step_index = view.get("currentStepIndex")
    if isinstance(step_index, int) and not isinstance(step_index, bool):
        release.steps_reached = max(release.steps_reached, step_index)
    step = view.get("step")
    if isinstance(step, str) and "/" in step and step.split("/", 1)[1].isdigit():
        release.step_count = int(step.split("/", 1)[1])
    git_revision = _git_revision(view)
    if git_revision:
        release.git_revision = git_revision[:128]
    if view.get("uid"):
        release.rollout_uid = str(view["uid"])[:64]
    outcome = _outcome(view, release.pod_hash)
    if outcome == Outcome.IN_PROGRESS:
        if release.outcome != Outcome.SUPERSEDED:
            release.outcome, release.ended_at = outcome, None  # e.g. retried after an abort
    elif release.outcome != outcome:
        release.outcome, release.ended_at = outcome, at
    labels = view.get("labels")
    if isinstance(labels, Mapping):
        release.labels = {str(k): str(v) for k, v in labels.items()}
    return before != _from_view(release)


def _outcome(view: Mapping[str, Any], pod_hash: str) -> Outcome:
    if view.get("stableRS") == pod_hash:
        return Outcome.PROMOTED
    if str(view.get("message") or "").startswith("RolloutAborted") or view.get("aborted") is True:
        return Outcome.ABORTED
    return Outcome.IN_PROGRESS


def _git_revision(view: Mapping[str, Any]) -> str | None:
    for candidate in (
        view.get("gitRevision"),
        (view.get("gitops") or {}).get("revision") if isinstance(view.get("gitops"), Mapping) else None,
    ):
        if isinstance(candidate, str) and candidate:
            return candidate
    return None


_EVENT_FIELDS = ("release", "kind", "dedupe", "at", "title", "data")


def _insert_events(events: Sequence[tuple[Release, Mapping[str, Any], datetime]]) -> None:
    """Insert timeline events, skipping those already recorded. (``bulk_create`` builds a model instance
    per row and, on PostgreSQL, dumps every column as an array in Python; on the recorder's thread that
    held the watcher's GIL for a third of its time.)"""
    meta = TimelineEvent._meta
    fields = [meta.get_field(name) for name in _EVENT_FIELDS]
    rows = [
        [
            release.pk,
            str(event.get("kind"))[:64],
            str(event.get("dedupe") or "")[:255],
            _event_time(event, at),
            str(event.get("title") or ""),
            dict(event.get("data") or {}),
        ]
        for release, event, at in events
    ]
    _insert(meta.db_table, fields, rows)


def _insert(table: str, fields: Sequence[Any], rows: Sequence[Sequence[Any]]) -> None:
    """``INSERT … ON CONFLICT DO NOTHING`` of ``rows`` (Python values, in ``fields``' order). On PostgreSQL
    one statement for the batch, its rows as one array per column; elsewhere one parametrised INSERT per
    row, sent as one batch."""
    quote = connection.ops.quote_name
    into = f"INSERT INTO {quote(table)} ({', '.join(quote(field.column) for field in fields)})"
    if connection.vendor == "postgresql":
        source, columns, params = _unnest(fields, rows)
        with _batch_cursor() as cursor:
            cursor.execute(f"{into} SELECT {', '.join(columns)} FROM {source} ON CONFLICT DO NOTHING", params)
        return
    sql = f"{into} VALUES ({', '.join(['%s'] * len(fields))}) ON CONFLICT DO NOTHING"
    with _batch_cursor() as cursor:
        cursor.executemany(sql, [_prepared(fields, row) for row in rows])


def _unnest(fields: Sequence[Any], rows: Sequence[Sequence[Any]]) -> tuple[str, list[str], list[Any]]:
    """A batch of rows as a PostgreSQL row source: ``unnest(…) AS u(c0, c1, …)`` with one array parameter
    per column, the expression that reads each column as its field's type, and the parameters. psycopg
    dumps each array in C, in binary: per row the recorder spends no Python on quoting or casting.
    Text travels as text (a JSON value as its text, cast back in the expression)."""
    arrays, columns, params = [], [], []
    db = connections[DEFAULT_DB_ALIAS]  # the connection itself: ``connection`` is a per-thread proxy
    for i, field in enumerate(fields):
        values = [row[i] for row in rows]
        kind = field.get_internal_type()
        column = f"u.c{i}"
        if _as_they_are(kind, values):
            array = f"{field.db_type(db)}[]"
        elif kind == "JSONField":
            values = [
                None if v is None else orjson.dumps(v, default=str, option=_JSON_KEYS).decode()
                for v in values
            ]
            array, column = "text[]", f"{column}::jsonb"
        elif kind in ("CharField", "TextField"):
            values = [None if v is None else str(v) for v in values]
            array = "text[]"
        else:
            values = [field.get_db_prep_save(v, db) for v in values]
            array = f"{field.db_type(db)}[]"
        arrays.append(f"%b::{array}")
        columns.append(column)
        params.append(values)
    names = ", ".join(f"c{i}" for i in range(len(fields)))
    return f"unnest({', '.join(arrays)}) AS u({names})", columns, params


_INTEGER_KINDS = frozenset(
    ("ForeignKey", "AutoField", "BigAutoField", "IntegerField", "BigIntegerField", "SmallIntegerField")
)


def _as_they_are(kind: str, values: Sequence[Any]) -> bool:
    """Whether ``values`` of a column of ``kind`` are what Django would send PostgreSQL already (integers;
    aware datetimes): each ``get_db_prep_save`` was most of the recorder's thread's time (py-spy, T46)."""
    if kind in _INTEGER_KINDS:
        return all(type(v) is int or v is None for v in values)
    if kind == "DateTimeField":
        return all(v is None or (type(v) is datetime and v.tzinfo is not None) for v in values)
    return False


# A JSON column's keys as Django's encoder writes them: any key a string (an integer key becomes its text).
_JSON_KEYS = orjson.OPT_NON_STR_KEYS


def _prepared(fields: Sequence[Any], row: Sequence[Any]) -> list[Any]:
    return [field.get_db_prep_save(value, connection) for field, value in zip(fields, row, strict=True)]


def _batch_cursor() -> Any:
    """A cursor for the recorder's many-row statements, in the current transaction. On PostgreSQL a
    server-binding cursor of the driver's: the parameters travel apart from the statement, dumped by
    psycopg's C adapters. Django gives the connection a client-side binding cursor class, which quotes
    every value into the SQL text in Python (with sending the text it made, a quarter of the recorder's
    samples); ``connection.connection.cursor()`` is that class too."""
    if connection.vendor == "postgresql":
        import psycopg

        connection.ensure_connection()
        return psycopg.Cursor(connection.connection)
    return connection.cursor()


# What of a view history reads (``_ident``, ``_ensure_releases``, ``_apply_view``, ``_outcome``, and the
# notifier's ``_finding_of``). A queued change keeps these alone: at a 10,000-rollout start the queue held
# thousands of whole views while the first releases were written, 110 MB of the watcher's peak.
RECORDED_FIELDS = (
    "cluster",
    "namespace",
    "name",
    "uid",
    "currentPodHash",
    "revision",
    "containers",
    "images",
    "currentStepIndex",
    "step",
    "gitRevision",
    "stableRS",
    "message",
    "aborted",
    "labels",
)
_FINDING_EVENTS = frozenset({tl.FINDING_RAISED, tl.FINDING_CLEARED})


def recorded_part(view: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The part of ``view`` that recording it (with ``events``) reads: ``record_batch`` writes the same
    rows from it as from the whole view."""
    part = {field: view[field] for field in RECORDED_FIELDS if field in view}
    gitops = view.get("gitops")
    if isinstance(gitops, Mapping) and "revision" in gitops:
        part["gitops"] = {"revision": gitops["revision"]}
    if "findings" in view and any(event.get("kind") in _FINDING_EVENTS for event in events):
        part["findings"] = view["findings"]
    return part


def _event_time(event: Mapping[str, Any], default: datetime) -> datetime:
    raw = event.get("at")
    if isinstance(raw, str):
        try:
            parsed = datetime.fromisoformat(raw.replace("Z", "+00:00"))
        except ValueError:
            return default
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)  # Kubernetes times are UTC
    return default


# A queue that backs up holds its changes compressed: ~1.5 KB each instead of ~11 KB of objects (a view's
# part and a dozen timeline events). It backs up while the database is slow or away (a 10,000-rollout
# start on a fresh one, before ``_plan_each_statement``, queued 5,000 changes: 55 MB; an outage may queue
# up to ``max_queue``). Below this many queued, changes wait as they are: compressing one costs ~0.1 ms of
# the watcher's loop.
COMPRESS_WHEN_QUEUED = 200


def _packed(item: Item) -> bytes:
    view, events, at = item
    return zlib.compress(orjson.dumps([view, events, at.isoformat()], default=str), 1)


def _unpacked(item: Item | bytes) -> Item:
    if not isinstance(item, bytes):
        return item
    view, events, at = orjson.loads(zlib.decompress(item))
    return view, events, datetime.fromisoformat(at)


class Recorder:
    """Records on a worker thread in batches; ``submit`` never blocks the caller."""

    def __init__(
        self,
        *,
        # A batch is one transaction; its rows (a cold start's view carries a dozen timeline events) are
        # built in memory at once: at 500 the watcher's peak at a 10,000-rollout start was ~7 MB higher,
        # at no gain in how fast the first releases were written.
        batch_size: int = 100,
        max_wait: float = 0.2,
        max_queue: int = 200_000,
        retention_days: int | None = None,
        prune_every: float = 3600.0,
        # The first pruning waits: a starting watcher has its fleet to catch up with first (deleting
        # thousands of expired releases beside a restart's handoff made the restart 1-3 s slower).
        first_prune_after: float = 60.0,
    ) -> None:
        self.batch_size = batch_size
        self.max_wait = max_wait
        self.retention_days = retention_days
        self.prune_every = prune_every
        self.first_prune_after = first_prune_after
        self._queue: queue.Queue[Item | bytes | None] = queue.Queue(maxsize=max_queue)
        self._thread = threading.Thread(target=self._run, name="history-recorder", daemon=True)
        self._idle = threading.Event()
        self._idle.set()
        self.recorded = 0
        self.dropped = 0

    def start(self) -> Recorder:
        self._thread.start()
        return self

    def submit(self, view: Mapping[str, Any], events: Sequence[Mapping[str, Any]], at: datetime) -> None:
        self._idle.clear()
        try:
            item: Item = (recorded_part(view, events), list(events), at)
            self._queue.put_nowait(_packed(item) if self._queue.qsize() >= COMPRESS_WHEN_QUEUED else item)
        except queue.Full:
            self.dropped += 1
            log.error(
                "history queue full: dropped a change of %s/%s/%s",
                view.get("cluster"),
                view.get("namespace"),
                view.get("name"),
            )

    def flush(self, timeout: float = 30.0) -> bool:
        """Wait until everything submitted so far is written (tests, replay, shutdown)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._queue.unfinished_tasks == 0:
                return True
            time.sleep(0.01)
        return False

    def stop(self, timeout: float = 30.0) -> None:
        self.flush(timeout)
        self._queue.put(None)
        self._thread.join(timeout)

    def _run(self) -> None:
        next_prune = time.monotonic() + self.first_prune_after
        try:
            while True:
                batch, stop = self._take_batch()
                if batch:
                    self._write(batch)
                if self.retention_days and time.monotonic() >= next_prune:
                    next_prune = time.monotonic() + self.prune_every
                    self._prune()
                if stop:
                    return
        finally:
            from django.db import connection

            connection.close()  # the thread's own connection

    def _take_batch(self) -> tuple[list[Item], bool]:
        first = self._queue.get()
        if first is None:
            self._queue.task_done()
            return [], True
        batch = [_unpacked(first)]
        # Let the batch gather for max_wait, then take what is queued: a timed get per change woke this
        # thread (and took the GIL from the watcher's loop) once for every change of a churning fleet.
        if self._queue.qsize() < self.batch_size - 1:
            time.sleep(self.max_wait)
        while len(batch) < self.batch_size:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is None:
                self._queue.task_done()
                self._write(batch)
                return [], True
            batch.append(_unpacked(item))
        return batch, False

    def _write(self, batch: list[Item]) -> None:
        delay = 0.5
        while True:
            try:
                close_old_connections()
                record_batch(batch)
                notify_recorded(batch)
                self.recorded += len(batch)
                break
            except (DatabaseError, InterfaceError) as error:
                log.warning("recording %d changes failed (%s); retrying in %.1fs", len(batch), error, delay)
                from django.db import connection

                connection.close()
                time.sleep(delay * (0.5 + random.random()))
                delay = min(delay * 2, 30.0)
            except Exception:
                self._write_one_by_one(batch)
                break
        for _ in batch:
            self._queue.task_done()

    def _write_one_by_one(self, batch: list[Item]) -> None:
        """A batch failed on its data: record what can be, log and skip what cannot."""
        for item in batch:
            try:
                record_batch([item])
                self.recorded += 1
            except Exception:
                view = item[0]
                log.exception(
                    "history: skipped a change of %s/%s/%s that cannot be recorded",
                    view.get("cluster"),
                    view.get("namespace"),
                    view.get("name"),
                )

    def _prune(self) -> None:
        try:
            deleted = prune_history(self.retention_days or 0)
            if deleted:
                log.info("history retention: deleted %d releases", deleted)
        except (DatabaseError, InterfaceError) as error:
            log.warning("history retention failed: %s", error)
