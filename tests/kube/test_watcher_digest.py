"""A view's digest: equal for two views exactly when they differ in nothing but the clock's keys."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from dashboard.bench.builds import mid_release_watcher
from dashboard.kube.watcher import digest, encoded


def view(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "name": "checkout",
        "updatedAt": "2026-12-06T02:00:00Z",
        "age": 12,
        "replicaSets": [{"name": "checkout-6d4", "scaleDownDelay": 30, "resourceVersion": "812"}],
        "pause": {"remainingSeconds": 40.5, "pauseRemainingSeconds": None},
        "message": "waiting",
    }
    return {**base, **changes}


def test_views_that_differ_only_in_the_clocks_keys_have_one_digest() -> None:
    moved = view(updatedAt="2026-12-06T02:00:09Z", age=21)
    moved["replicaSets"] = [{"name": "checkout-6d4", "scaleDownDelay": 21, "resourceVersion": "815"}]
    moved["pause"] = {"remainingSeconds": 31.5, "pauseRemainingSeconds": 3}
    assert digest(moved) == digest(view())


def test_any_other_change_changes_the_digest() -> None:
    assert digest(view(message="promoted")) != digest(view())
    assert digest(view(name="cart")) != digest(view())


def test_a_volatile_key_inside_a_string_is_text_not_a_key() -> None:
    assert digest(view(message='"age":5')) != digest(view(message='"age":6'))


def test_a_volatile_key_holding_an_object_is_compared() -> None:
    assert digest(view(age={"days": 1})) != digest(view(age={"days": 2}))
    assert digest(view(age=[])) == digest(view(age={}))


def test_a_fleets_views_built_again_seconds_later_keep_their_digests() -> None:
    """What a recheck relies on: a view built again with nothing changed but the clock is not published."""
    watcher, _ = mid_release_watcher(20, namespaces=2)
    at = datetime(2026, 12, 6, 2, 0, tzinfo=UTC)
    for uid in watcher.cache.rollouts():
        inputs = watcher.cache.inputs(uid)
        assert inputs is not None
        first, again = (watcher._build(uid, inputs, at + timedelta(seconds=s)) for s in (0, 5))
        assert first is not None and again is not None
        assert first["updatedAt"] != again["updatedAt"]
        assert digest(first) == digest(again)
        text, _ = encoded(first)
        assert orjson.loads(text) == orjson.loads(orjson.dumps(first, default=str))
