"""Channel-layer message types and group names of the live bus, defined once.

The channel layer is only a doorbell: a message says "rollout KEY changed, the stream is at ID"; the
snapshot and the stream (see ``dashboard.live.bus``) hold the state. Consumers handle the
``rollout.updated`` type with a method named ``rollout_updated`` (Channels' dotted-name convention).
"""

from __future__ import annotations

import hashlib
from typing import TypedDict

ROLLOUT_UPDATED = "rollout.updated"
FLEET_GROUP = "fleet"
FLEET_KEY = "*"  # the ``key`` of a fleet doorbell, which stands for "some rollouts changed"


class Doorbell(TypedDict):
    type: str
    key: str
    stream_id: str


def rollout_group(key: str) -> str:
    """The group of one rollout's watchers; hashed because group names must be short ASCII."""
    return "rollout." + hashlib.sha1(key.encode()).hexdigest()[:16]


def rollout_updated(key: str, stream_id: str) -> Doorbell:
    return {"type": ROLLOUT_UPDATED, "key": key, "stream_id": stream_id}
