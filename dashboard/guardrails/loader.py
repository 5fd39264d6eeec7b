"""The guard-rail rules in force: the policy file's ``approval`` / ``freeze`` / ``reason`` lines, re-read
whenever the file changes (no restart), like its RBAC lines (``dashboard.access.rbac.file_policy``).

A file edited into a broken state keeps the last good rules in force (a typo must not lift a freeze) and
is logged; the system check refuses to start with one.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from django.conf import settings

from dashboard.access.policy import PolicyError
from dashboard.guardrails.rules import GuardRules, parse_rules

log = logging.getLogger(__name__)
_lock = threading.Lock()
_cache: dict[str, tuple[float, GuardRules]] = {}


def file_rules() -> GuardRules:
    """Parse the file when it changed; ``PolicyError`` when it cannot be read or parsed."""
    path = str(getattr(settings, "RBAC_POLICY_FILE", "") or "")
    if not path:
        return GuardRules()
    try:
        mtime = Path(path).stat().st_mtime
    except OSError as error:
        raise PolicyError(f"RBAC_POLICY_FILE {path!r} cannot be read: {error.strerror}") from None
    with _lock:
        cached = _cache.get(path)
    if cached is not None and cached[0] == mtime:
        return cached[1]
    rules = parse_rules(Path(path).read_text(encoding="utf-8"), source=path)
    with _lock:
        _cache[path] = (mtime, rules)
    return rules


def current_rules() -> GuardRules:
    try:
        return file_rules()
    except PolicyError:
        path = str(getattr(settings, "RBAC_POLICY_FILE", "") or "")
        with _lock:
            last = _cache.get(path)
        log.exception("the guard-rail rules in the policy file are invalid; the last good ones stay in force")
        return last[1] if last is not None else GuardRules()
