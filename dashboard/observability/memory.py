"""How the watcher's C allocator hands memory back (glibc only; elsewhere nothing is changed).

glibc serves a block of 128 KiB or more with its own ``mmap`` and unmaps it when freed, but each time such
a block is freed it raises that threshold to the block's size (up to 32 MiB). The watcher's large blocks
are short-lived (a list page's body and its decoded objects, a publish batch's pipeline, a handoff's
texts): once the threshold has risen they come from the heap, and the heap, interleaved with the cache's
long-lived objects, cannot shrink. At 10,000 rollouts that left ~12 MB of freed pages resident for the
process's life (``bench_watch --cold-start``: peak RSS 256.5 → 244.8 MB, the same CPU). Fixing the
threshold at glibc's default keeps every large block in its own mapping, returned when freed.

Non-goals: other allocators (musl, jemalloc), and pymalloc's small-object arenas.
"""

from __future__ import annotations

import ctypes
import os

M_MMAP_THRESHOLD = -3  # malloc.h
LARGE_BLOCK = 128 * 1024  # glibc's default threshold, kept from now on


def return_large_blocks_when_freed(threshold: int = LARGE_BLOCK) -> bool:
    """Fix glibc's mmap threshold at ``threshold`` bytes; False where the C library is not glibc or the
    operator chose a threshold (``MALLOC_MMAP_THRESHOLD_``, which glibc has applied already)."""
    if "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return False
    libc = ctypes.CDLL(None)  # the C library this process is linked with: no search, no subprocess
    if not hasattr(libc, "gnu_get_libc_version"):  # musl's mallopt does nothing; macOS has none
        return False
    libc.mallopt.argtypes, libc.mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(libc.mallopt(M_MMAP_THRESHOLD, threshold) == 1)
