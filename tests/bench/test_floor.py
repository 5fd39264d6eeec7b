"""The floors of a watcher's cost per change: decoding the watch lines, and receiving them over TLS."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from dashboard.bench.floor import decode_floor, receive_floor

POD = {"type": "MODIFIED", "object": {"kind": "Pod", "metadata": {"name": "p", "uid": "u"}}}


def test_decoding_the_lines_gives_the_cpu_per_change_and_what_was_decoded() -> None:
    lines = [orjson.dumps(POD)] * 50
    floor = decode_floor(lines)
    assert floor["objects"] == 50 and floor["mean_bytes"] == len(lines[0])
    assert floor["orjson_decode_ms_per_change"] >= 0


def test_nothing_to_decode_or_receive_gives_no_figures() -> None:
    assert decode_floor([]) == {} and receive_floor([]) == {}


def test_the_lines_arrive_as_watch_events_over_tls_on_every_connection_and_each_costs_some_cpu() -> None:
    # A real server process and the watcher's own reader, bounded: 3 connections, 100 events in about 0.5 s.
    floor = receive_floor([orjson.dumps(POD)] * 10, connections=3, rate=200, seconds=0.5)
    assert floor["connections"] == 3
    assert 80 <= floor["events"] <= 100  # the first event starts the clock and is not counted
    assert floor["ms_per_change"] > 0


@pytest.mark.parametrize("bad", [{"connections": 0}, {"rate": -1.0}, {"seconds": 0.0}])
def test_a_stream_without_connections_rate_or_length_is_refused_naming_it(bad: dict[str, Any]) -> None:
    (name,) = bad
    with pytest.raises(ValueError, match=f"floor's {name} must be greater than 0"):
        receive_floor([orjson.dumps(POD)], **bad)
