"""The benchmark clients apply frames as the fleet page does, decoding a frame once per process."""

from __future__ import annotations

import json
from typing import Any

from dashboard.bench import clients
from dashboard.bench.clients import Client

FIELDS = ["key", "status", "step"]


def _client() -> Client:
    client = Client("http://127.0.0.1:1", session=None)  # type: ignore[arg-type]  # no network used
    client.load(FIELDS, [["c/n/a", "Healthy", "4/4"], ["c/n/b", "Healthy", "4/4"]])
    return client


def _frame(stream_id: str, rows: list[dict[str, Any]], removed: tuple[str, ...] = ()) -> str:
    return json.dumps({"type": "update", "streamId": stream_id, "rows": rows, "removed": list(removed)})


def test_clients_given_the_same_frame_end_with_the_same_table_and_decode_it_once() -> None:
    first, second = _client(), _client()
    frame = _frame("5-0", [{"key": "c/n/a", "status": "Paused", "step": "1/4"}], ["c/n/b"])
    clients._FRAMES.clear()
    first.apply_text(frame, at=1.0)
    second.apply_text(frame, at=2.0)
    assert len(clients._FRAMES) == 1
    assert first.table == second.table == {"c/n/a": clients.canonical(["c/n/a", "Paused", "1/4"])}
    assert first.messages == [("5-0", 1.0)] and second.messages == [("5-0", 2.0)]
    assert first.last_id == second.last_id == "5-0"


def test_pings_and_resumes_are_not_updates() -> None:
    client = _client()
    client.apply_text(json.dumps({"type": "ping"}), at=1.0)
    client.apply_text(json.dumps({"type": "resumed", "streamId": "7-0"}), at=2.0)
    assert client.messages == [("7-0", 2.0)]
    assert len(client.table) == 2


def test_pages_given_the_same_rows_document_share_its_decoding_but_not_their_tables() -> None:
    rows = [["c/n/a", "Healthy", "4/4"]]
    document = json.dumps({"streamId": "3-0", "fields": FIELDS, "rows": rows}).encode()
    clients._DOCUMENTS.clear()
    first = Client("http://127.0.0.1:1", session=None)  # type: ignore[arg-type]  # no network used
    second = Client("http://127.0.0.1:1", session=None)  # type: ignore[arg-type]
    first.load_document(document)
    first.apply_text(_frame("4-0", [{"key": "c/n/a", "status": "Paused", "step": "1/4"}]), at=1.0)
    second.load_document(document)
    assert len(clients._DOCUMENTS) == 1
    assert second.last_id == "3-0" and second.fields == FIELDS
    assert second.table == {"c/n/a": clients.canonical(["c/n/a", "Healthy", "4/4"])}  # not the first's update


def test_a_page_told_the_server_restarts_retries_every_half_second_not_with_a_growing_backoff() -> None:
    from dashboard.bench.clients import reconnect_delay

    assert all(0.375 <= reconnect_delay(6, restarting=True) <= 0.625 for _ in range(50))
    assert all(11.25 <= reconnect_delay(5) <= 15 * 1.25 for _ in range(50))
    assert all(0.375 <= reconnect_delay(0) <= 0.625 for _ in range(50))
