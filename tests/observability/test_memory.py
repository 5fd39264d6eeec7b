"""The watcher's allocator setting: glibc keeps large blocks in their own mappings, returned when freed."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import textwrap

import pytest

from dashboard.observability.memory import return_large_blocks_when_freed


def test_the_threshold_is_set_on_glibc_unless_the_operator_chose_one(monkeypatch: pytest.MonkeyPatch) -> None:
    assert hasattr(ctypes.CDLL(None), "gnu_get_libc_version"), "these machines run glibc (Debian)"
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    assert return_large_blocks_when_freed() is True
    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "1048576")
    assert return_large_blocks_when_freed() is False


def test_a_freed_large_block_leaves_the_process_once_the_threshold_is_fixed() -> None:
    # Without the fix, freeing a 1 MiB block raises glibc's threshold, and the next ones (as a list's pages
    # are) come from the heap and stay resident after they are freed.
    script = textwrap.dedent(
        """
        import ctypes, sys
        from dashboard.observability.memory import return_large_blocks_when_freed
        if sys.argv[1] == "fixed":
            return_large_blocks_when_freed()
        libc = ctypes.CDLL(None)
        libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, (ctypes.c_size_t,)
        libc.free.argtypes = (ctypes.c_void_p,)
        def rss_kb():
            return int(next(l for l in open("/proc/self/status") if l.startswith("VmRSS")).split()[1])
        libc.free(libc.malloc(1 << 20))  # the first large block: mmapped either way
        blocks = [libc.malloc(200 * 1024) for _ in range(100)]
        for block in blocks:
            ctypes.memset(block, 1, 200 * 1024)
        keep = libc.malloc(100 * 1024)  # a long-lived block above them pins the heap's top
        ctypes.memset(keep, 1, 100 * 1024)
        before = rss_kb()
        for block in blocks:
            libc.free(block)
        print(before - rss_kb())
        """
    )

    def returned_kb(mode: str) -> int:
        env = {k: v for k, v in os.environ.items() if k != "MALLOC_MMAP_THRESHOLD_"}
        run = subprocess.run(
            [sys.executable, "-c", script, mode], capture_output=True, text=True, check=True, env=env
        )
        return int(run.stdout)

    assert returned_kb("fixed") > 15_000  # the 20 MB of blocks, returned as they were freed
    assert returned_kb("default") < 5_000  # freed into the heap below a live block: still resident
