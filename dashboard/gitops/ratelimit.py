"""A fixed-window request counter per key (source IP + repository) for the webhook receivers.

With ``REDIS_URL`` set the counters live in Redis, shared by every web replica; otherwise in this process
(embedded mode has one). A counter that cannot be reached lets the request through: a Redis outage must not
turn into lost deliveries, and the signature check still guards the door.

Non-goals: sliding windows, bursts, per-user limits (the actions service has its own).
"""

from __future__ import annotations

import logging
import threading
import time
from functools import cache
from typing import Any

from django.conf import settings

log = logging.getLogger(__name__)
WINDOW_SECONDS = 60

_lock = threading.Lock()
_counts: dict[str, tuple[int, int]] = {}  # key → (window index, count)


@cache
def _redis(url: str) -> Any:
    import redis

    return redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)


def allow(key: str, limit: int, *, window: int = WINDOW_SECONDS, now: float | None = None) -> bool:
    """Count one request for ``key``; False once more than ``limit`` arrived in the current window."""
    index = int((time.time() if now is None else now) // window)
    url = getattr(settings, "REDIS_URL", None)
    if url:
        name = f"{settings.LIVE_REDIS_PREFIX}hooks:{key}:{index}"
        try:
            client = _redis(url)
            pipe = client.pipeline()
            pipe.incr(name)
            pipe.expire(name, window * 2)
            count = int(pipe.execute()[0])
        except Exception as error:
            log.warning("webhook rate limit unavailable (%s); letting the request through", error)
            return True
        return count <= limit
    with _lock:
        if len(_counts) > 10_000:  # drop old windows so many sources cannot grow this without bound
            for stale in [k for k, (i, _) in _counts.items() if i != index]:
                del _counts[stale]
        seen_index, count = _counts.get(key, (index, 0))
        count = count + 1 if seen_index == index else 1
        _counts[key] = (index, count)
        return count <= limit


def reset() -> None:
    """Forget in-process counters (tests)."""
    with _lock:
        _counts.clear()
