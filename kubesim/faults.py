"""Fault injection for kubesim's API server: what a flaky real cluster does to its clients.

Scenario directives and tests call these methods on the simulator's event loop (or through the admin
endpoint `POST /kubesim/faults/{name}`); the server consults them on every API request. Faults never
affect the admin endpoint itself.

- `drop_watches()` ends every open watch stream (clients must re-watch from their last resourceVersion).
- `expire_next_watch()` answers the next watch(es) with 410 Gone, as an ERROR event or as the status code.
- `hang(seconds)` holds every request, and the delivery of watch events, until the time is up.
- `fail(count, seconds, code)` answers requests with a Kubernetes `Status` error (500 by default).
- `restart()` closes every watch and compacts the store's history, like an API server restart.

Non-goals: network-level faults (resets mid-body, TLS errors), per-path targeting.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubesim.store import Store

EXPIRE_MODES = ("event", "status")


class FaultError(ValueError):
    """Bad fault parameters (e.g. from the admin endpoint's JSON body)."""


class Faults:
    def __init__(self, store: Store | None = None, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.store = store
        self._clock = clock
        self._droppers: list[Callable[[], int]] = []
        self._expire: deque[str] = deque()
        self._hang_until = 0.0
        self._fail_count = 0
        self._fail_until = 0.0
        self._fail_code = 500
        self.log: list[dict[str, Any]] = []  # what was injected, in order, for tests and the admin endpoint

    def attach(self, dropper: Callable[[], int]) -> Callable[[], None]:
        """Register a server's "close every watch" function; returns a detach function."""
        self._droppers.append(dropper)
        return lambda: self._droppers.remove(dropper) if dropper in self._droppers else None

    def _record(self, name: str, **params: Any) -> None:
        self.log.append({"fault": name, **params})

    # ---- injection ---------------------------------------------------------------------------------------

    def drop_watches(self) -> int:
        """Close every open watch; returns how many were closed."""
        dropped = sum(drop() for drop in list(self._droppers))
        self._record("drop-watches", dropped=dropped)
        return dropped

    def expire_next_watch(self, count: int = 1, mode: str = "event") -> None:
        """Answer the next `count` watch requests with 410 Gone (`mode` "event": a 200 response carrying an
        ERROR event, as real servers do; "status": the HTTP status code itself)."""
        if mode not in EXPIRE_MODES:
            raise FaultError(f"mode must be one of {', '.join(EXPIRE_MODES)}, not {mode!r}")
        count = _positive_int("count", count)
        self._expire.extend([mode] * count)
        self._record("expire-next-watch", count=count, mode=mode)

    def hang(self, seconds: float) -> None:
        """Hold requests and watch deliveries for `seconds` from now."""
        seconds = _positive_number("seconds", seconds)
        self._hang_until = max(self._hang_until, self._clock() + seconds)
        self._record("hang", seconds=seconds)

    def fail(self, count: int | None = None, seconds: float | None = None, code: int = 500) -> None:
        """Fail the next `count` requests, or all requests for `seconds` (one request if neither)."""
        if not isinstance(code, int) or isinstance(code, bool) or not 400 <= code <= 599:
            raise FaultError(f"code must be an HTTP error status between 400 and 599, not {code!r}")
        if count is None and seconds is None:
            count = 1
        if count is not None:
            self._fail_count += _positive_int("count", count)
        if seconds is not None:
            self._fail_until = max(self._fail_until, self._clock() + _positive_number("seconds", seconds))
        self._fail_code = code
        self._record("fail", count=count, seconds=seconds, code=code)

    def restart(self) -> int:
        """Close every watch and forget the store's history; returns how many watches were closed."""
        dropped = sum(drop() for drop in list(self._droppers))
        if self.store is not None:
            self.store.compact()
        self._record("restart", dropped=dropped)
        return dropped

    def clear(self) -> None:
        """Stop every pending fault."""
        self._expire.clear()
        self._hang_until = self._fail_until = 0.0
        self._fail_count = 0
        self._record("clear")

    # ---- consulted by the server -------------------------------------------------------------------------

    def take_expire(self) -> str | None:
        """The 410 mode for this watch request, if one is pending."""
        return self._expire.popleft() if self._expire else None

    def hang_remaining(self) -> float:
        return max(0.0, self._hang_until - self._clock())

    def take_failure(self) -> int | None:
        """The error status to answer this request with, if a failure is pending."""
        if self._fail_until and self._clock() < self._fail_until:
            return self._fail_code
        if self._fail_count > 0:
            self._fail_count -= 1
            return self._fail_code
        return None

    def state(self) -> dict[str, Any]:
        return {
            "pendingExpiries": len(self._expire),
            "hangRemaining": round(self.hang_remaining(), 3),
            "pendingFailures": self._fail_count,
            "failingFor": round(max(0.0, self._fail_until - self._clock()), 3),
        }


def _positive_int(name: str, value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise FaultError(f"{name} must be a positive integer, not {value!r}")
    return value


def _positive_number(name: str, value: Any) -> float:
    if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
        raise FaultError(f"{name} must be a positive number of seconds, not {value!r}")
    return float(value)
