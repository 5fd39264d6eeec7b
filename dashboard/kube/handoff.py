"""A watcher's handoff: what its cache held of each watch, and the resourceVersion it held it as of, left on
the bus when it stops, so that the next watcher of the cluster (the same one restarted, or a replica taking
the lease) resumes each watch from there instead of listing every object again.

A restart used to list the whole cluster: at 10,000 rollouts 90,000 objects, most of a restart's time
(docs/benchmarks.md). Kubernetes lets a watch start at any resourceVersion its watch cache still holds and
sends every change since, deletions included; one too old gets 410 Gone, and the watch relists as it
always did (``watch.watch_kind``). So a handoff is never trusted beyond what the API server confirms:
at worst it costs the time to read it before the list it saved.

The handoff is one Redis hash per cluster (``LiveBus.save_handoff``): ``meta`` (the format, a hash of the
code that projects objects, the API server, when it was saved, each watch's resourceVersion and how many
parts it has) and each watch's objects as the cache keeps them (JSON texts; Events' compressed, LZ4, so a
restore does not compress them again), each after its length (4 bytes, big-endian), the whole compressed
(zlib at its fastest level) and cut into parts of about 256 KB (fields ``kind/namespace#0``, ``#1``,
…). ``fields`` makes the parts one at a time and the bus saves each as it comes: a stopping watcher holds
a part of its handoff at a time, whatever the size of the cluster (the whole handoff and its copies
on the way to Redis were its peak of memory, then one large watch's). It expires after
``PipelineSettings.handoff_seconds``: an API server's watch cache holds minutes, not hours, of changes.

Not kept: a watch whose list was under way when the watcher stopped (its copy was a mix of two moments),
one whose objects cannot be written as JSON, and anything the watcher learns over time (the detectors'
histories, Prometheus baselines), as before.
"""

from __future__ import annotations

import functools
import hashlib
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

import orjson

from dashboard.kube.cache import ClusterCache
from dashboard.kube.fingerprint import code_version

# 1: JSON texts one per line (an Event's compressed bytes may hold a newline); 2: Events deflated; 3: one
# field per watch
FORMAT = 4
META = "meta"
PIECE_BYTES = 1 << 18  # framed text compressed, or decompressed, at a time
PART_BYTES = 1 << 18  # compressed text in one field
WatchKey = tuple[str, str | None]  # (kind, namespace or None for all)


class HandoffRefused(ValueError):
    """A handoff that cannot be used (the message says why): the watcher lists everything instead."""


@functools.cache
def handoff_salt() -> bytes:
    """Names the code that projected the objects: a handoff from other code is not read."""
    return hashlib.blake2b(b"handoff\0" + code_version(), digest_size=16).digest()


def watch_field(key: WatchKey) -> str:
    kind, namespace = key
    return f"{kind}/{namespace or ''}"


def part_field(name: str, index: int) -> str:
    """The field of part ``index`` of the watch whose field name is ``name`` (``watch_field``)."""
    return f"{name}#{index}"


def watches_in(saved: Iterable[str]) -> int:
    """How many watches the handoff fields ``saved`` hold (each has a first part)."""
    return sum(1 for field in saved if field.endswith(part_field("", 0)))


def fields(
    cache: ClusterCache, versions: Mapping[WatchKey, str], *, server: str, saved_at: float
) -> Iterator[tuple[str, bytes]]:
    """The handoff of ``cache``, whose copy of each watch in ``versions`` is complete as of its version
    (watches without one are left out), watched on the API server at ``server``: each watch's field as it
    is made, part by part, then ``meta``."""
    kept: dict[str, str] = {}
    parts: dict[str, int] = {}
    for key, version in versions.items():
        objects = cache.kept_texts(*key) if version else None
        if objects is None:
            continue
        name = watch_field(key)
        count = 0
        for count, part in enumerate(_compressed_parts(objects), start=1):
            yield part_field(name, count - 1), part
        kept[name], parts[name] = version, count
    meta = {"format": FORMAT, "code": handoff_salt().hex(), "server": server, "savedAt": saved_at,
            "versions": kept, "parts": parts}
    yield META, orjson.dumps(meta)


def pack(
    cache: ClusterCache, versions: Mapping[WatchKey, str], *, server: str, saved_at: float
) -> dict[str, bytes]:
    """The whole handoff at once (``fields``)."""
    return dict(fields(cache, versions, server=server, saved_at=saved_at))


def _compressed_parts(objects: Iterable[bytes]) -> Iterator[bytes]:
    """``objects``, each after its length, compressed a piece at a time into one stream, given in parts of
    about ``PART_BYTES`` (at least one): neither a kind's framed text (tens of MB at 10,000 rollouts) nor
    its compressed text is ever whole in memory, which made stopping the watcher its peak of memory
    (docs/benchmarks.md, "Eighteenth session")."""
    deflate = zlib.compressobj(1)
    part = bytearray()
    piece = bytearray()
    for data in objects:
        piece += len(data).to_bytes(4, "big")
        piece += data
        if len(piece) >= PIECE_BYTES:
            # Flushed: what zlib holds back would otherwise land in a later part, unmeasured here.
            part += deflate.compress(piece) + deflate.flush(zlib.Z_SYNC_FLUSH)
            piece.clear()
            if len(part) >= PART_BYTES:
                yield bytes(part)
                part.clear()
    part += deflate.compress(piece)
    part += deflate.flush()
    yield bytes(part)


@dataclass(frozen=True)
class Resumable:
    """One watch of a handoff: its objects (compressed, in ``parts``) as of ``version``."""

    kind: str
    namespace: str | None
    version: str
    parts: tuple[bytes, ...]

    def kept(self) -> list[bytes]:
        """Its objects as the cache kept them (``ClusterCache.restore`` reads them), decompressed a piece
        at a time (the whole framed text of a kind beside its objects was a restart's peak of memory).
        Raises ValueError when the field is damaged (the watcher then lists this watch instead)."""
        inflate = zlib.decompressobj()
        found: list[bytes] = []
        rest = b""
        step = PIECE_BYTES // 8  # of compressed text: about a piece of framed text
        try:
            for part in self.parts:
                for start in range(0, len(part), step):
                    rest = _take_frames(rest + inflate.decompress(part[start : start + step]), found)
        except zlib.error as error:
            raise ValueError(f"the handoff's {self.kind} cannot be decompressed: {error}") from None
        if not inflate.eof:
            raise ValueError(f"the handoff's {self.kind} cannot be decompressed: its end is missing")
        if rest:
            raise ValueError(f"the handoff's {self.kind} is cut short")
        return found


def _take_frames(framed: bytes, found: list[bytes]) -> bytes:
    """Append each whole object of ``framed`` (after its length) to ``found``; returns what is left, the
    beginning of the next one."""
    at = 0
    while len(framed) - at >= 4:
        end = at + 4 + int.from_bytes(framed[at : at + 4], "big")
        if end > len(framed):
            break
        found.append(framed[at + 4 : end])
        at = end
    return framed[at:]


def unpack(fields: Mapping[str, bytes], *, server: str) -> dict[WatchKey, Resumable]:
    """The watches of a handoff (``pack``'s fields). Raises HandoffRefused when the handoff as a whole
    cannot be used (no ``meta``, another format, another code's projections, another API server's
    resourceVersions)."""
    raw = fields.get(META)
    if raw is None:
        raise HandoffRefused("it has no meta field")
    try:
        meta = orjson.loads(raw)
    except orjson.JSONDecodeError as error:
        raise HandoffRefused(f"its meta field is not JSON ({error})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise HandoffRefused(f"it is not in format {FORMAT}")
    if meta.get("code") != handoff_salt().hex():
        raise HandoffRefused("it was written by another version of the code")
    if meta.get("server") != server:
        raise HandoffRefused(f"it was watched on another API server ({meta.get('server')!r})")
    versions, counts = meta.get("versions"), meta.get("parts")
    if not isinstance(versions, dict) or not isinstance(counts, dict):
        raise HandoffRefused("its meta field names no versions and parts")
    found: dict[WatchKey, Resumable] = {}
    for name, version in versions.items():
        kind, _, namespace = str(name).partition("/")
        count = counts.get(name)
        indexes = range(count if isinstance(count, int) else 0)
        parts = [fields.get(part_field(name, index)) for index in indexes]
        # A watch with a part missing is not resumed: it is listed.
        if isinstance(version, str) and version and parts and None not in parts:
            found[(kind, namespace or None)] = Resumable(
                kind, namespace or None, version, tuple(bytes(part) for part in parts if part is not None)
            )
    return found


