"""The watcher benchmark's bookkeeping: which writes it times and when it counts them as published."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dashboard.bench.watch import Publications, WriteLog


def rollout(rv: int, step: int, image: str = "a:1") -> dict[str, Any]:
    return {
        "metadata": {"namespace": "ns", "name": "svc", "resourceVersion": str(rv)},
        "spec": {"template": {"spec": {"containers": [{"image": image}]}}},
        "status": {"currentStepIndex": step, "currentPodHash": "h"},
    }


class FakeStream:
    """``xrange`` over entries given as (id, view) pairs, like redis-py returns them."""

    def __init__(self, entries: list[tuple[str, dict[str, Any]]]) -> None:
        self.entries = [(i.encode(), {b"view": json.dumps(v).encode()}) for i, v in entries]

    def xrange(self, key: str, start: str, end: str, count: int) -> list[tuple[bytes, dict[bytes, bytes]]]:
        after = (0, -1) if start == "-" else tuple(map(int, start.strip("(").split("-")))
        exclusive = start.startswith("(")
        found = [
            e
            for e in self.entries
            if (tuple(map(int, e[0].decode().split("-"))) > after)
            or (not exclusive and tuple(map(int, e[0].decode().split("-"))) == after)
        ]
        return found[:count]


def view(rv: int) -> dict[str, Any]:
    return {"namespace": "ns", "name": "svc", "resourceVersion": str(rv)}


def test_only_writes_that_change_what_the_view_shows_are_timed_and_releases_are_counted() -> None:
    log = WriteLog()
    log("MODIFIED", "argoproj.io/rollouts", rollout(2, 0, "a:2"), rollout(1, 0))  # a new release
    log("MODIFIED", "argoproj.io/rollouts", rollout(3, 1, "a:2"), rollout(2, 0, "a:2"))  # a step
    log("MODIFIED", "argoproj.io/rollouts", rollout(4, 1, "a:2"), rollout(3, 1, "a:2"))  # invisible
    log("MODIFIED", "pods", {}, {})
    log("MODIFIED", "v1/services", {}, {})  # not watched
    assert log.changes == 4 and log.releases == 1
    assert [rv for _, rv, _ in log.rollouts] == [3]


def test_a_write_is_published_by_the_first_snapshot_carrying_it_or_anything_newer() -> None:
    stream = Publications(FakeStream([("1000-0", view(5)), ("1250-0", view(9)), ("1400-0", view(12))]), "s")
    stream.read()
    assert stream.visible_at("ns/svc", 5) == 1.0
    assert stream.visible_at("ns/svc", 7) == 1.25  # coalesced into the next publication
    assert stream.visible_at("ns/svc", 13) is None
    assert stream.visible_at("other/svc", 1) is None


def test_a_trimmed_stream_is_an_error_not_a_silent_gap() -> None:
    fake = FakeStream([("1000-0", view(5))])
    stream = Publications(fake, "s")
    stream.read()
    fake.entries = FakeStream([("2000-0", view(9))]).entries
    with pytest.raises(RuntimeError, match="trimmed"):
        stream.read()
