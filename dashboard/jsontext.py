"""JSON text that is kept in memory: caches, indexes, a watcher's state per rollout."""

from __future__ import annotations


def exact(data: bytes) -> bytes:
    """``data`` in an allocation of its own size. What orjson returns holds the capacity it was written
    into, 4–8 KB whatever its length (orjson 3.x, measured with tracemalloc): 50,000 kept fleet rows took
    390 MB instead of 20 MB, and 10,000 rollouts' timeline bases 80 MB instead of 12 MB."""
    return bytes(memoryview(data))
