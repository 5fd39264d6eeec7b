"""History as JSON Lines, for backups and for moving an installation: ``export_lines`` and ``import_lines``.

The format (one JSON object a line)::

    {"format": "rollouts-ui-history", "version": 1, "exportedAt": "…"}          ← first line
    {"type": "release", "cluster": …, "podHash": …, …, "events": [{"kind", "dedupe", "at", "title", "data"}]}

A release carries its timeline events, so every line stands on its own. Importing is idempotent, on the
same keys the recorder uses (a release per cluster/namespace/rollout/pod hash, an event per release/kind/
dedupe): importing a file twice, or into an installation that recorded some of the same releases, adds
only what is missing; an existing release keeps its row, and takes the imported end and outcome only when
it had none. Database ids are not exported (they mean nothing elsewhere).

Non-goals: the audit log and notifications (``pg_dump`` backs up everything; this is for history).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.db import transaction

from dashboard.domain.timeline import format_time
from dashboard.history.models import Outcome, Release, TimelineEvent

FORMAT, VERSION = "rollouts-ui-history", 1
CHUNK = 500


class HistoryFormatError(ValueError):
    """A line that is not history; the message names the line and what is wrong."""


def header(now: datetime | None = None) -> dict[str, Any]:
    return {"format": FORMAT, "version": VERSION, "exportedAt": format_time(now or datetime.now(UTC))}


def release_record(release: Release, events: Iterable[TimelineEvent]) -> dict[str, Any]:
    return {
        "type": "release",
        "cluster": release.cluster,
        "namespace": release.namespace,
        "rollout": release.rollout,
        "rolloutUid": release.rollout_uid,
        "podHash": release.pod_hash,
        "revision": release.revision,
        "startedAt": format_time(release.started_at),
        "endedAt": format_time(release.ended_at) if release.ended_at else None,
        "outcome": release.outcome,
        "images": release.images,
        "stepsReached": release.steps_reached,
        "stepCount": release.step_count,
        "gitRevision": release.git_revision,
        "labels": release.labels,
        "rolledBackAt": format_time(release.rolled_back_at) if release.rolled_back_at else None,
        "events": [
            {"kind": e.kind, "dedupe": e.dedupe, "at": format_time(e.at), "title": e.title, "data": e.data}
            for e in events
        ],
    }


def export_lines(*, cluster: str | None = None, since: datetime | None = None) -> Iterator[str]:
    """The header, then one line per release (oldest first), streamed in chunks."""
    yield json.dumps(header())
    releases = Release.objects.order_by("id")
    if cluster:
        releases = releases.filter(cluster=cluster)
    if since:
        releases = releases.filter(started_at__gte=since)
    last_id = 0
    while True:
        chunk = list(releases.filter(id__gt=last_id)[:CHUNK])
        if not chunk:
            return
        by_release: dict[int, list[TimelineEvent]] = {}
        for event in TimelineEvent.objects.filter(release_id__in=[r.pk for r in chunk]).order_by("at", "id"):
            by_release.setdefault(event.release_id, []).append(event)
        for release in chunk:
            yield json.dumps(release_record(release, by_release.get(release.pk, ())), default=str)
        last_id = chunk[-1].pk


@dataclass
class ImportResult:
    releases_created: int = 0
    releases_existing: int = 0
    events_created: int = 0
    events_existing: int = 0


def import_lines(lines: Iterable[str], *, dry_run: bool = False) -> ImportResult:
    """Import an export, all or nothing; raises ``HistoryFormatError`` naming the bad line."""
    result = ImportResult()
    with transaction.atomic():
        seen_header = False
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise HistoryFormatError(
                    f"line {number}: not JSON ({error.msg} at column {error.colno})"
                ) from None
            if not isinstance(record, dict):
                raise HistoryFormatError(f"line {number}: expected a JSON object")
            if not seen_header:
                if record.get("format") != FORMAT:
                    raise HistoryFormatError(f"line {number}: not a rollouts-ui history export (no header)")
                if record.get("version") != VERSION:
                    raise HistoryFormatError(
                        f"line {number}: export version {record.get('version')!r}; this one reads {VERSION}"
                    )
                seen_header = True
                continue
            if record.get("type") != "release":
                raise HistoryFormatError(f"line {number}: unknown record type {record.get('type')!r}")
            try:
                _import_release(record, result)
            except (KeyError, TypeError, ValueError) as error:
                raise HistoryFormatError(f"line {number}: {error}") from None
        if not seen_header:
            raise HistoryFormatError("the file is empty: expected a rollouts-ui history export")
        if dry_run:
            transaction.set_rollback(True)
    return result


def _text(record: Mapping[str, Any], key: str, *, required: bool = True, limit: int = 253) -> str:
    value = record.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value):
        raise ValueError(f"{key!r} must be a non-empty string (got {value!r})")
    if len(value) > limit:
        raise ValueError(f"{key!r} is longer than {limit} characters")
    return value


def _optional_time(record: Mapping[str, Any], key: str) -> datetime | None:
    return None if record.get(key) is None else _time(record, key)


def _time(record: Mapping[str, Any], key: str) -> datetime:
    value = record.get(key)
    if not isinstance(value, str):
        raise ValueError(f"{key!r} must be an RFC 3339 time (got {value!r})")
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{key!r} is not an RFC 3339 time: {value!r}") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _optional_int(record: Mapping[str, Any], key: str) -> int | None:
    value = record.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"{key!r} must be an integer (got {value!r})")
    return value


def _labels(record: Mapping[str, Any]) -> dict[str, str]:
    labels = record.get("labels") or {}  # absent from exports made before insights
    if not isinstance(labels, dict) or not all(isinstance(v, str) for v in labels.values()):
        raise ValueError("'labels' must be an object of strings")
    return {str(k): v for k, v in labels.items()}


def _import_release(record: Mapping[str, Any], result: ImportResult) -> None:
    outcome = record.get("outcome") or Outcome.IN_PROGRESS
    if outcome not in Outcome.values:
        raise ValueError(f"'outcome' must be one of {', '.join(Outcome.values)} (got {outcome!r})")
    images = record.get("images") or []
    if not isinstance(images, list):
        raise ValueError("'images' must be a list")
    events = record.get("events") or []
    if not isinstance(events, list):
        raise ValueError("'events' must be a list")
    key = {
        "cluster": _text(record, "cluster"),
        "namespace": _text(record, "namespace"),
        "rollout": _text(record, "rollout"),
        "pod_hash": _text(record, "podHash", limit=64),
    }
    fields = {
        "rollout_uid": _text(record, "rolloutUid", required=False, limit=64),
        "revision": _optional_int(record, "revision"),
        "started_at": _time(record, "startedAt"),
        "ended_at": _optional_time(record, "endedAt"),
        "outcome": outcome,
        "images": images,
        "steps_reached": _optional_int(record, "stepsReached") or 0,
        "step_count": _optional_int(record, "stepCount"),
        "git_revision": _text(record, "gitRevision", required=False, limit=128),
        "labels": _labels(record),
        "rolled_back_at": _optional_time(record, "rolledBackAt"),
    }
    release, created = Release.objects.get_or_create(**key, defaults=fields)
    if created:
        result.releases_created += 1
    else:
        result.releases_existing += 1
        ended_at = _optional_time(record, "endedAt")
        if release.ended_at is None and ended_at is not None:
            release.ended_at, release.outcome = ended_at, outcome
            release.save(update_fields=["ended_at", "outcome", "updated_at"])
    rows = []
    for index, event in enumerate(events):
        if not isinstance(event, Mapping):
            raise ValueError(f"events[{index}] must be an object")
        data = event.get("data") or {}
        if not isinstance(data, dict):
            raise ValueError(f"events[{index}].data must be an object")
        rows.append(
            TimelineEvent(
                release=release,
                kind=_text(event, "kind", limit=64),
                dedupe=_text(event, "dedupe", required=False, limit=255),
                at=_time(event, "at"),
                title=str(event.get("title") or ""),
                data=data,
            )
        )
    before = TimelineEvent.objects.filter(release=release).count()
    TimelineEvent.objects.bulk_create(rows, ignore_conflicts=True)
    added = TimelineEvent.objects.filter(release=release).count() - before
    result.events_created += added
    result.events_existing += len(rows) - added
