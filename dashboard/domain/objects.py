"""Safe reading of untrusted Kubernetes objects (plain dicts decoded from JSON or YAML).

Every field of an object read from a file or a cluster may be missing or of the wrong type. These
helpers return a typed value or a default and never raise, so the domain code can degrade field by
field instead of failing a whole view. They also hold the few Go parsing rules (``strconv.Atoi``,
``time.Parse(time.RFC3339)``) that upstream applies to strings.

Non-goals: validation against a schema, and any I/O.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, TypeGuard

EMPTY: Mapping[str, Any] = {}

# Go's strconv.Atoi: an optional sign and ASCII digits only, no spaces, within int64.
_ATOI = re.compile(r"[+-]?[0-9]+")
_INT64_MAX = 2**63 - 1
_RFC3339 = re.compile(r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")


def is_map(value: Any) -> TypeGuard[Mapping[str, Any]]:
    # Plain dicts and absent fields first: an ABC instance check is slow, and these helpers run hundreds
    # of times per view build (almost every value is a plain dict, a scalar or None).
    if type(value) is dict:
        return True
    return value is not None and type(value) not in _SCALARS and isinstance(value, Mapping)


_SCALARS = frozenset({str, int, float, bool, list})


def as_map(value: Any) -> Mapping[str, Any]:
    return value if is_map(value) else EMPTY


def as_list(value: Any) -> Sequence[Any]:
    return value if isinstance(value, (list, tuple)) else ()


def as_str(value: Any, default: str = "") -> str:
    return value if isinstance(value, str) else default


def as_int(value: Any, default: int = 0) -> int:
    """An integer field; bools, non-integral numbers and numbers beyond int64 are wrong types, not numbers."""
    found = opt_int(value)
    return default if found is None else found


def opt_int(value: Any) -> int | None:
    """Like :func:`as_int` but keeps "absent" distinct from zero (Go's ``*int32``)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    # Beyond int64 no Kubernetes field holds it (Go would not decode it), and orjson would not write it.
    if isinstance(value, int) and -_INT64_MAX - 1 <= value <= _INT64_MAX:
        return value
    return None


def as_bool(value: Any) -> bool:
    return value is True


def dig(obj: Any, *path: str) -> Any:
    """obj[path[0]][path[1]]…, or None as soon as a step is not a mapping or lacks the key."""
    for key in path:
        if type(obj) is not dict and not is_map(obj):
            return None
        obj = obj.get(key)
    return obj


# The typed digs below repeat ``dig``'s loop rather than call it: they run hundreds of times per view
# build, and a call and a tuple of arguments fewer is a tenth of their cost.


def dig_map(obj: Any, *path: str) -> Mapping[str, Any]:
    for key in path:
        if type(obj) is not dict and not is_map(obj):
            return EMPTY
        obj = obj.get(key)
    return obj if type(obj) is dict or is_map(obj) else EMPTY


def dig_str(obj: Any, *path: str) -> str:
    for key in path:
        if type(obj) is not dict and not is_map(obj):
            return ""
        obj = obj.get(key)
    return obj if isinstance(obj, str) else ""


def dig_int(obj: Any, *path: str) -> int:
    return as_int(dig(obj, *path))


def dig_list(obj: Any, *path: str) -> Sequence[Any]:
    for key in path:
        if type(obj) is not dict and not is_map(obj):
            return ()
        obj = obj.get(key)
    return obj if isinstance(obj, (list, tuple)) else ()


def maps(value: Any) -> list[Mapping[str, Any]]:
    """The mapping items of a list field; other items are dropped."""
    if type(value) is list:
        return [item for item in value if type(item) is dict or is_map(item)]
    return [item for item in as_list(value) if is_map(item)]


def str_map(value: Any) -> dict[str, str]:
    """A labels/annotations map keeping only string keys and values."""
    if type(value) is not dict and not is_map(value):
        return {}
    return {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)}


def atoi(value: Any) -> int | None:
    """Go ``strconv.Atoi`` on a string field (a YAML integer is accepted as its decimal form)."""
    if isinstance(value, int) and not isinstance(value, bool):
        text = str(value)
    elif isinstance(value, str):
        text = value
    else:
        return None
    if not _ATOI.fullmatch(text):
        return None
    number = int(text)
    return number if -_INT64_MAX - 1 <= number <= _INT64_MAX else None


def parse_time(value: Any) -> datetime | None:
    """An RFC3339 timestamp as Go's ``time.Parse(time.RFC3339, …)`` reads it, always timezone-aware."""
    if isinstance(value, datetime):  # PyYAML turns unquoted timestamps into datetimes
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if not isinstance(value, str):
        return None
    # Every rebuild of a view parses the same timestamps of its objects and events again: cached, but
    # only what is timestamp-sized, so odd values cannot fill the cache with large strings.
    return _parse_rfc3339_cached(value) if len(value) <= 40 else _parse_rfc3339(value)


def _parse_rfc3339(value: str) -> datetime | None:
    match = _RFC3339.fullmatch(value)
    if not match:
        return None
    year, month, day, hour, minute, second, fraction, zone = match.groups()
    micro = int((fraction[1:] + "000000")[:6]) if fraction else 0
    try:
        moment = datetime(int(year), int(month), int(day), int(hour), int(minute), int(second), micro, UTC)
    except ValueError:
        return None
    if zone not in ("Z", "z"):
        sign = 1 if zone[0] == "+" else -1
        offset = timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
        moment -= sign * offset
    return moment


_parse_rfc3339_cached = functools.lru_cache(maxsize=1 << 14)(_parse_rfc3339)


def rfc3339(moment: datetime | None) -> str | None:
    """UTC RFC3339 with a Z, as Kubernetes writes times (second precision unless sub-second is set)."""
    if moment is None:
        return None
    return _format_rfc3339(moment)


@functools.lru_cache(maxsize=1 << 14)  # the same few moments are written on every rebuild of a view
def _format_rfc3339(moment: datetime) -> str:
    moment = moment.astimezone(UTC)
    if moment.microsecond:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%f").rstrip("0") + "Z"
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def owner_uids(obj: Mapping[str, Any]) -> list[str]:
    """UIDs in metadata.ownerReferences, in order (a missing uid reads as "", as in Go)."""
    return [as_str(ref.get("uid")) for ref in maps(dig(obj, "metadata", "ownerReferences"))]


def first_owner(obj: Mapping[str, Any], uids: Mapping[str, Any] | set[str]) -> str | None:
    """The first ownerReference UID that is among ``uids`` (upstream's ``ownerRef``)."""
    for uid in owner_uids(obj):
        if uid in uids:
            return uid
    return None
