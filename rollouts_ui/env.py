"""Typed readers for configuration from the environment.

Every reader fails loudly (``ImproperlyConfigured`` naming the variable and the bad value) instead of
quietly falling back, so a typo in a deployment shows up at start-up, not as odd behaviour later.

While the settings module is read, ``collect_problems()`` is on: a bad value is noted (and its default
used so the rest can still be read) instead of raised, and ``rollouts_ui.settings_check.finish`` prints
every problem as one line and exits 1 — every process (web, watcher, Celery, demo, any command) reads
the settings first, so none starts with a bad value, and none prints a traceback for one.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


_collected: list[str] | None = None


def collect_problems() -> list[str]:
    """Note bad values from now on instead of raising (see the module docstring); the list fills up."""
    global _collected
    _collected = []
    return _collected


def stop_collecting() -> list[str]:
    global _collected
    found, _collected = _collected or [], None
    return found


def problem(message: str) -> None:
    """A bad setting: noted while collecting, else raised."""
    if _collected is None:
        raise ImproperlyConfigured(message)
    _collected.append(message)


def _raw(name: str) -> str | None:
    value = os.environ.get(name)
    return None if value is None else value.strip()


def env_str(name: str, default: str) -> str:
    value = _raw(name)
    return default if value is None or value == "" else value


def env_bool(name: str, default: bool) -> bool:
    value = _raw(name)
    if value is None:
        return default
    lowered = value.lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    problem(f"{name}={value!r} is not a boolean (use one of: true, false, 1, 0, yes, no)")
    return default


def env_int(name: str, default: int, *, minimum: int | None = None, maximum: int | None = None) -> int:
    value = _raw(name)
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except ValueError:
        problem(f"{name}={value!r} is not an integer")
        return default
    if minimum is not None and number < minimum:
        problem(f"{name}={number} is below the minimum of {minimum}")
        return default
    if maximum is not None and number > maximum:
        problem(f"{name}={number} is above the maximum of {maximum}")
        return default
    return number


def env_list(name: str, default: list[str]) -> list[str]:
    """A comma-separated list; blanks around items are ignored, empty items dropped."""
    value = _raw(name)
    if value is None:
        return list(default)
    return [item.strip() for item in value.split(",") if item.strip()]


def env_url(name: str, *, schemes: tuple[str, ...]) -> str | None:
    """A URL with one of the allowed schemes, or None when unset."""
    value = _raw(name)
    if not value:
        return None
    parsed = urlparse(value)
    if parsed.scheme not in schemes or not (parsed.netloc or parsed.path):
        allowed = ", ".join(f"{s}://" for s in schemes)
        problem(f"{name}={redact_url(value)!r} is not a URL starting with one of: {allowed}")
        return None
    return value


def redact_url(url: str) -> str:
    """Hide a password in a URL before it reaches an error message or a log."""
    parsed = urlparse(url)
    if parsed.password:
        return url.replace(f":{parsed.password}@", ":***@")
    return url


def env_json(name: str, default: Any) -> Any:
    """JSON given inline (the value starts with ``{`` or ``[``) or as the path of a JSON file.

    The file form keeps secrets out of the process environment listing (mount it from a Secret).
    """
    value = _raw(name)
    if not value:
        return default
    if value[0] in "{[":
        text, origin = value, "its value"
    else:
        try:
            text = Path(value).read_text(encoding="utf-8")
        except OSError as error:
            problem(f"{name}: cannot read the file {value!r}: {error.strerror}")
            return default
        origin = f"the file {value!r}"
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError) as error:
        where = f" ({error.msg} at line {error.lineno}, column {error.colno})" if isinstance(
            error, json.JSONDecodeError
        ) else " (nested too deeply)"
        problem(f"{name}: {origin} is not valid JSON{where}")
        return default
