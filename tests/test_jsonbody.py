"""The bounded JSON parser measures size and nesting before parsing, and names what is wrong."""

from __future__ import annotations

import time

import pytest

from dashboard import jsonbody


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{}", 1),
        ("1", 0),
        ('{"a": [1, {"b": []}]}', 4),
        ('"[[[[[["', 0),  # brackets in a string do not nest
        ('["\\"[[[", ["\\\\"]]', 2),  # escaped quotes and backslashes
        ('{"a": "b]}]}"}', 1),
        ('[[["unterminated [[[[[[', 3),
    ],
)
def test_it_measures_nesting_outside_strings(text: str, expected: int) -> None:
    assert jsonbody.depth(text.encode()) == expected


def test_it_parses_what_is_within_bounds() -> None:
    assert jsonbody.loads(b'{"seen": {"podHash": "abc"}}') == {"seen": {"podHash": "abc"}}
    assert jsonbody.loads('["é"]') == ["é"]


def test_a_deep_document_is_refused_before_parsing_whatever_its_shape() -> None:
    for body in (b"[" * 100_000, b'{"a":' * 50_000, b"[" * 100_000 + b"]" * 100_000, b"[" * 33 + b"]" * 33):
        with pytest.raises(jsonbody.JsonBodyError, match=r"nests arrays/objects .* deep; the limit is 32"):
            jsonbody.loads(body)


def test_the_depth_limit_is_inclusive() -> None:
    assert jsonbody.loads(b"[" * 32 + b"]" * 32, max_depth=32)


def test_a_large_document_is_refused_as_too_large() -> None:
    with pytest.raises(jsonbody.JsonBodyError, match="the body is 11 bytes; the limit is 10") as caught:
        jsonbody.loads(b'"123456789"', max_bytes=10)
    assert caught.value.too_large
    with pytest.raises(jsonbody.JsonBodyError, match="larger than the limit of 10 bytes"):
        jsonbody.loads("x" * 11, max_bytes=10)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"{", "the frame is not valid JSON: Expecting property name enclosed in double quotes at line 1"),
        (b"\xff", "the frame is not UTF-8 JSON"),
        (b"", "the frame is not valid JSON: Expecting value"),
    ],
)
def test_invalid_json_is_named(body: bytes, message: str) -> None:
    with pytest.raises(jsonbody.JsonBodyError, match=message):
        jsonbody.loads(body, what="the frame")


def test_scanning_a_hostile_megabyte_is_quick_figures_printed() -> None:
    cases = {
        "brackets": (b"[" * 1_000_000, 1_000_000),
        "one string": (b'["' + b"a" * 999_990 + b'"]', 1),
        "escapes": (b'["' + b'\\"' * 499_990 + b'"]', 1),
        "stray quote": (b"[" * 500_000 + b'"' + b"[" * 499_990, 500_000),
    }
    for name, (body, expected) in cases.items():
        started = time.perf_counter()
        assert jsonbody.depth(body) == expected
        print(f"jsonbody.depth over 1 MB of {name}: {1000 * (time.perf_counter() - started):.1f} ms")
