"""Watch recordings (DESIGN §3): one JSON watch event per line, in the order they were seen.

``{"at": "2026-11-29T10:00:00.123Z", "cluster": "prod", "type": "ADDED|MODIFIED|DELETED", "object": {…}}``

``RecordingWriter`` appends events (``watch --record``); ``read_recording`` yields them back with every line
checked, so a damaged file stops with its line number instead of a traceback (``replay``, ``diagnose``).

Non-goals: no compression, no index; a recording is read front to back.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from dashboard.domain.timeline import format_time

EVENT_TYPES = ("ADDED", "MODIFIED", "DELETED")


class RecordingError(Exception):
    """A recording line is not a valid watch event; the message names the file and line."""


@dataclass(frozen=True)
class RecordedEvent:
    at: datetime
    cluster: str
    type: str
    object: dict[str, Any]


class RecordingWriter:
    def __init__(self, path: str | Path, *, flush_every: int = 100) -> None:
        self.path = Path(path)
        self._file: IO[str] = self.path.open("a", encoding="utf-8")
        self._flush_every = flush_every
        self._pending = 0

    def write(
        self, cluster: str, event_type: str, obj: Mapping[str, Any], at: datetime | None = None
    ) -> None:
        if event_type not in EVENT_TYPES:
            raise ValueError(f"event type {event_type!r} is not one of {', '.join(EVENT_TYPES)}")
        line = {
            "at": format_time(at or datetime.now(UTC)),
            "cluster": cluster,
            "type": event_type,
            "object": obj,
        }
        self._file.write(json.dumps(line, separators=(",", ":")) + "\n")
        self._pending += 1
        if self._pending >= self._flush_every:
            self.flush()

    def flush(self) -> None:
        self._file.flush()
        self._pending = 0

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()


def read_recording(path: str | Path) -> Iterator[RecordedEvent]:
    path = Path(path)
    try:
        handle = path.open(encoding="utf-8")
    except OSError as error:
        raise RecordingError(f"{path}: cannot be read: {error.strerror or error}") from None
    with handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                yield parse_line(line, where=f"{path}:{number}")


def parse_line(line: str, *, where: str = "line") -> RecordedEvent:
    try:
        data = json.loads(line)
    except ValueError as error:
        raise RecordingError(f"{where}: not JSON ({error})") from None
    except RecursionError:  # a line nested beyond the parser: a damaged file, never a traceback
        raise RecordingError(f"{where}: nested too deeply to read") from None
    if not isinstance(data, dict):
        raise RecordingError(f"{where}: expected a JSON object, got {type(data).__name__}")
    event_type, cluster, obj, at = data.get("type"), data.get("cluster"), data.get("object"), data.get("at")
    if event_type not in EVENT_TYPES:
        raise RecordingError(f'{where}: "type" must be one of {", ".join(EVENT_TYPES)}, got {event_type!r}')
    if not isinstance(cluster, str) or not cluster:
        raise RecordingError(f'{where}: "cluster" must be a non-empty string')
    if not isinstance(obj, dict):
        raise RecordingError(f'{where}: "object" must be a JSON object')
    try:
        when = datetime.fromisoformat(str(at).replace("Z", "+00:00"))
    except ValueError:
        raise RecordingError(f'{where}: "at" must be an RFC 3339 time, got {at!r}') from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return RecordedEvent(at=when, cluster=cluster, type=event_type, object=obj)
