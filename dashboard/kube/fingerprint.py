"""What each published view was built from, so that a restarted watcher rebuilds only what changed.

A Rollout's view is a function of its inputs (the rollout and the children, events, routing objects,
autoscalers and Applications ``ClusterCache.inputs`` gathers), of the code that builds it and of the
settings it reads — and, for some rollouts, of the clock (``Watcher._timed``). The cache keeps most
objects as the JSON text of what the view reads of them (``cache.Packed``): that text names an input
exactly, and hashing it needs no decoding (a restart fingerprints 10,000 rollouts' inputs); the few
objects kept decoded are named by their UID and ``resourceVersion``, which Kubernetes changes on every
write. ``inputs_fingerprint`` hashes those names with a ``salt`` naming the code and the settings
(``build_salt``); the watcher stores it beside each view it publishes (a ``Built``
record, in the same transaction as the view). After a restart or on taking over from another watcher,
a rollout whose inputs still have the stored fingerprint keeps the view the bus holds: it is what a
rebuild would give. At 10,000 rollouts the rebuilds were most of a restart (a millisecond and more
each; docs/benchmarks.md).

Not covered, on purpose: what the watcher learns over time and does not keep across a restart (the
detectors' history of a rollout's writes, Prometheus baselines) — a kept view keeps the findings it had
until the rollout changes, as a rebuilt one would lose them; and the clock, for which a record says
whether the view changes with time alone (the watcher then rechecks it on its usual round).
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

FINGERPRINT_SIZE = 16
_PACKAGE = Path(__file__).resolve().parents[1]  # the dashboard package: the domain, the cache, the watcher


@dataclass(frozen=True)
class Built:
    """What the bus's view of one rollout was built from: ``fingerprint`` of its inputs, ``digest`` of
    the view (``watcher.digest``), and whether it changes with time alone."""

    fingerprint: bytes
    digest: bytes
    timed: bool

    def encode(self) -> bytes:
        return self.fingerprint + self.digest + (b"t" if self.timed else b"-")

    @classmethod
    def decode(cls, raw: bytes) -> Built | None:
        """The record ``encode`` wrote, or None for anything else (an older format, a damaged value):
        the rollout is then rebuilt, which is always correct."""
        if len(raw) != 2 * FINGERPRINT_SIZE + 1 or raw[-1:] not in (b"t", b"-"):
            return None
        return cls(raw[:FINGERPRINT_SIZE], raw[FINGERPRINT_SIZE:-1], raw[-1:] == b"t")


@functools.cache
def code_version(package: Path = _PACKAGE) -> bytes:
    """A hash of the package's Python source: any change to how views are built changes it (so does any
    other change, which only costs one rebuild of the fleet at the next start)."""
    hasher = hashlib.blake2b(digest_size=FINGERPRINT_SIZE)
    for path in sorted(package.rglob("*.py")):
        hasher.update(str(path.relative_to(package)).encode() + b"\0")
        hasher.update(path.read_bytes() + b"\0")
    return hasher.digest()


def build_salt(cluster: str, settings: Any, code: bytes | None = None) -> bytes:
    """What every view of ``cluster`` depends on beyond its inputs: the code and the settings it reads
    (their ``repr``: dataclasses of plain values)."""
    hasher = hashlib.blake2b(digest_size=FINGERPRINT_SIZE)
    for part in (code if code is not None else code_version(), cluster.encode(), repr(settings).encode()):
        hasher.update(part + b"\0")
    return hasher.digest()


def object_name(obj: Mapping[str, Any]) -> bytes:
    """What names one version of an object: its UID and resourceVersion (an API server gives every write
    a new one), or, for an object without both (never from an API server), its whole content."""
    meta = obj.get("metadata")
    uid = meta.get("uid") if isinstance(meta, Mapping) else None
    version = meta.get("resourceVersion") if isinstance(meta, Mapping) else None
    if isinstance(uid, str) and isinstance(version, str) and version:
        return f"{uid}\0{version}".encode()
    try:
        return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS, default=str)
    except TypeError:  # an integer beyond 64 bits, which orjson does not write (and no API server sends)
        return json.dumps(obj, sort_keys=True, default=str).encode()


def inputs_fingerprint(groups: Iterable[Iterable[bytes]], salt: bytes) -> bytes:
    """The fingerprint of a view's inputs, given as groups (the rollout, its ReplicaSets, its pods, …) of
    the names of the objects in them (``ClusterCache.fingerprint``: the JSON text the cache keeps of each,
    else ``object_name``), each group in sorted order, so the order the cache met them in does not
    count."""
    # SHA-256: on CPUs with SHA instructions (x86 since Zen and Ice Lake, ARMv8) twice as fast as BLAKE2b.
    hasher = hashlib.sha256(salt)
    for group in groups:
        hasher.update(b"\1".join(sorted(group)) + b"\2")
    return hasher.digest()[:FINGERPRINT_SIZE]
