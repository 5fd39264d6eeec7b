"""A view's digest: equal for two views exactly when they differ in nothing but the clock's keys."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import orjson
import pytest

from dashboard.bench.builds import mid_release_watcher
from dashboard.kube.watcher import VOLATILE_KEYS, digest, encoded, without_volatile

# The cut as one left-to-right scan of the whole text: what ``without_volatile`` must agree with.
SCAN = re.compile(
    rb'"(?:' + b"|".join(re.escape(k.encode()) for k in sorted(VOLATILE_KEYS)) + rb')":'
    rb'(?:"(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+-]*|null|true|false|\{\}|\[\])'
)


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


@pytest.mark.parametrize(
    "text",
    [
        b"{}",
        b'{"age":1,"age":2}',
        b'{"a":"\\"age\\":1","age":"x\\"y"}',
        b'{"x\\"age":1,"updatedAt":"t"}',
        b'{"age":{"age":3},"resourceVersion":"9"}',
        b'{"remainingSeconds":-1.5e+3,"pauseRemainingSeconds":null,"scaleDownDelay":true}',
        b'{"age":"unterminated',
    ],
)
def test_the_cut_is_a_left_to_right_scan_of_the_text(text: bytes) -> None:
    assert without_volatile(text) == SCAN.sub(b"", text)


def test_the_cut_agrees_with_the_scan_on_every_view_of_a_fleet_mid_release() -> None:
    watcher, _ = mid_release_watcher(20, namespaces=2)
    at = datetime(2026, 12, 6, 2, 0, tzinfo=UTC)
    for uid in watcher.cache.rollouts():
        inputs = watcher.cache.inputs(uid)
        assert inputs is not None
        built = watcher._build(uid, inputs, at)
        assert built is not None
        text, _ = encoded(built)
        assert b'"updatedAt":' in text
        assert without_volatile(text) == SCAN.sub(b"", text)
        assert orjson.loads(text) == orjson.loads(orjson.dumps(built, default=str))
