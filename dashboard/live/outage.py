"""Since when this process has found the live bus (Redis) down: the "live updates are down since …" banner.

Web processes note every ``BusError`` they meet (``failed``) and every successful probe (``recovered``);
``state()`` says whether the bus is down, since when and why. Process-local on purpose: it describes what
this server can reach, which is what its pages can show.

Non-goals: probing by itself (``/api/v1/live-status`` probes), anything the watcher does.
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime
from typing import Any

_lock = threading.Lock()
_since: float | None = None
_error = ""


def failed(error: BaseException | str) -> None:
    global _since, _error
    with _lock:
        if _since is None:
            _since = time.time()
        _error = " ".join(str(error).split())[:300]


def recovered() -> None:
    global _since, _error
    with _lock:
        _since, _error = None, ""


def state() -> dict[str, Any]:
    """``{"ok": bool, "downSince": ISO time or None, "error": str}``."""
    with _lock:
        since, error = _since, _error
    return {
        "ok": since is None,
        "downSince": None if since is None else _iso(since),
        "error": error,
    }


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
