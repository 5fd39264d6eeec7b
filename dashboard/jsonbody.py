"""Parse untrusted JSON (request bodies, websocket frames, fields) with its size and depth bounded first.

Python's ``json`` recurses once per nested array or object, so a body of 100 000 ``[`` raises
``RecursionError`` (a 500, or a websocket dropped without a close code) before any signature check can
run. ``loads`` measures the size and scans the bytes for the nesting depth *before* parsing, so the
parser only ever sees documents it can handle, and every problem is a ``JsonBodyError`` whose message
says what was wrong. The scan skips string contents (brackets inside strings do not nest) and runs in C
(a regular expression, ``bytes.translate`` and ``itertools.accumulate``), so a hostile body costs about
as much as reading it.

Non-goals: schema validation (each entry point checks its own fields) and reading the request.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any

MAX_DEPTH = 32  # far below the parser's recursion limit, far above what any payload we accept nests
MAX_BYTES = 1024 * 1024

# A complete JSON string, escapes included ("unrolled loop": linear time, no catastrophic backtracking).
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_DELTA = [0] * 256
for _open in b"[{":
    _DELTA[_open] = 1
for _close in b"]}":
    _DELTA[_close] = -1


class JsonBodyError(ValueError):
    """The document is too large, too deeply nested or not JSON; ``too_large`` tells the first apart."""

    def __init__(self, message: str, *, too_large: bool = False) -> None:
        super().__init__(message)
        self.too_large = too_large


def depth(data: bytes) -> int:
    """The deepest nesting of arrays and objects in ``data``, not counting brackets inside strings.

    For malformed input (an unterminated string) only what comes before the stray quote is counted;
    the parser rejects the rest."""
    outside = _STRING.sub(b"", data)
    stray = outside.find(b'"')
    if stray >= 0:
        outside = outside[:stray]
    brackets = outside.translate(None, _NOT_BRACKETS)
    return max(accumulate(map(_DELTA.__getitem__, brackets)), default=0)


def loads(
    data: bytes | str, *, what: str = "the body", max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH
) -> Any:
    """``json.loads`` for untrusted input: ``JsonBodyError`` when ``data`` is larger than ``max_bytes``,
    nests deeper than ``max_depth`` or is not UTF-8 JSON. ``what`` names the input in the messages."""
    if isinstance(data, str) and len(data) > max_bytes:  # n characters are at least n bytes: don't encode
        raise JsonBodyError(f"{what} is larger than the limit of {max_bytes} bytes", too_large=True)
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    if len(raw) > max_bytes:
        raise JsonBodyError(f"{what} is {len(raw)} bytes; the limit is {max_bytes}", too_large=True)
    nesting = depth(raw)
    if nesting > max_depth:
        raise JsonBodyError(f"{what} nests arrays/objects {nesting} deep; the limit is {max_depth}")
    try:
        return json.loads(raw)
    except UnicodeDecodeError:
        raise JsonBodyError(f"{what} is not UTF-8 JSON") from None
    except json.JSONDecodeError as error:
        raise JsonBodyError(
            f"{what} is not valid JSON: {error.msg} at line {error.lineno} column {error.colno}"
        ) from None
