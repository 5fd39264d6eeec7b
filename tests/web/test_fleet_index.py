from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from asgiref.sync import async_to_sync

from dashboard.live.bus import MemoryBus
from dashboard.web.fleet_index import FIELDS, FleetIndex
from tests.web import samples

NOW = datetime(2026, 11, 29, 10, 14, tzinfo=UTC)


def _index(prefix: str) -> tuple[MemoryBus, FleetIndex]:
    bus = MemoryBus(prefix=prefix, maxlen=5)
    return bus, FleetIndex(lambda: bus, lambda: NOW)


def _names(index: FleetIndex) -> list[str]:
    return sorted(row[FIELDS.index("name")] for row in index.values())


def test_it_reads_the_fleet_once_then_follows_the_stream() -> None:
    bus, index = _index("fi-follow:")
    async_to_sync(bus.publish_many)([(samples.healthy_canary(), [])])
    async_to_sync(index.refresh)()
    async_to_sync(bus.publish)(samples.paused_canary(), [])
    version = async_to_sync(index.refresh)()
    assert _names(index) == ["orders", "payments-api"]
    assert index.full_reads == 1
    assert version == async_to_sync(bus.last_id)()


def test_it_rereads_everything_when_the_stream_was_trimmed_past_its_version() -> None:
    bus, index = _index("fi-trim:")
    async_to_sync(bus.publish)(samples.healthy_canary(), [])
    async_to_sync(index.refresh)()
    for i in range(8):  # the stream keeps 5 entries
        async_to_sync(bus.publish)(samples.healthy_canary(name=f"svc-{i}"), [])
    async_to_sync(index.refresh)()
    assert index.full_reads == 2
    assert len(index.rows) == 9


def test_a_removed_rollout_leaves_the_index() -> None:
    bus, index = _index("fi-remove:")
    async_to_sync(bus.publish)(samples.healthy_canary(), [])
    async_to_sync(index.refresh)()
    async_to_sync(bus.remove)("prod-eu/shop/orders")
    async_to_sync(index.refresh)()
    assert index.rows == {}


def test_the_document_is_cached_until_the_version_moves() -> None:
    bus, index = _index("fi-cache:")
    async_to_sync(bus.publish)(samples.healthy_canary(), [])
    async_to_sync(index.refresh)()
    first = index.document(gzipped=False)
    assert index.document(gzipped=False) is first
    async_to_sync(bus.publish)(samples.paused_canary(), [])
    async_to_sync(index.refresh)()
    second: dict[str, Any] = json.loads(index.document(gzipped=False))
    assert second["count"] == 2 and second["fields"] == list(FIELDS)


def test_rows_are_kept_encoded_with_markup_characters_escaped() -> None:
    bus, index = _index("fi-escape:")
    async_to_sync(bus.publish)(samples.healthy_canary() | {"message": "<script>&</script>"}, [])
    async_to_sync(index.refresh)()
    document = index.document(gzipped=False)
    assert b"<" not in document and b">" not in document and b"&" not in document
    (row,) = json.loads(document)["rows"]
    assert row == index.values()[0]
    assert "<script>&</script>" in json.dumps(row)
