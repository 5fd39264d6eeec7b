"""The channel-layer doorbell of the live bus, defined once.

The channel layer is only a doorbell: a message says "the stream has reached ID"; the snapshots and the
stream (see ``dashboard.live.bus``) hold the state. It rings one group per bus, joined by one channel per
web process — that process's stream follower (``dashboard.web.follower``), which reads the stream once
and hands each entry to the pages it concerns. Browsers' sockets join no group: a doorbell costs one
channel-layer message per web process, however many pages are open.
"""

from __future__ import annotations

import hashlib
from typing import TypedDict

STREAM_ADVANCED = "stream.advanced"


class Doorbell(TypedDict):
    type: str
    stream_id: str


def stream_group(prefix: str) -> str:
    """The group of the followers of the bus under ``prefix``: installations sharing a Redis do not ring
    each other's. Hashed because group names must be short ASCII (a prefix may hold ``:``)."""
    return "stream." + hashlib.sha1(prefix.encode()).hexdigest()[:16]


def stream_advanced(stream_id: str) -> Doorbell:
    return {"type": STREAM_ADVANCED, "stream_id": stream_id}
