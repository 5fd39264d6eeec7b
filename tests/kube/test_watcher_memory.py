"""What the watcher keeps per change: nothing beyond the objects it holds.

Every change passes through the cache, a rebuild, the inputs' fingerprint and a publish, and most of that
runs compiled (``dashboard/compiled.py``). A reference dropped in any of them — mypy 1.20's mypyc leaked the
left side of every ``bytes + bytes``, 6.6 KB per fingerprint — grows the watcher by a little on each change
until it is stopped; a few hundred changes show it, where a benchmark's minute shows only a larger peak.
"""

from __future__ import annotations

import asyncio
import gc
import tracemalloc
from datetime import UTC, datetime
from typing import Any

import orjson

from dashboard import compiled
from dashboard.bench.builds import mid_release_watcher
from dashboard.domain.timeline import timeline_basis
from dashboard.kube.handoff import PIECE_BYTES, pack, unpack
from dashboard.kube.watcher import Watcher, _basis_of, _kept_basis
from dashboard.live.bus import MemoryBus
from dashboard.live.lease import MemoryLease

ROLLOUTS = 10


def change_every_rollout(watcher: Watcher, round_: int) -> None:
    """A new version of each rollout: a new resourceVersion and an annotation only this round has."""
    for uid in list(watcher.cache.rollouts()):
        rollout: Any = watcher.cache.get("Rollout", uid)
        meta = rollout["metadata"]
        meta["resourceVersion"] = f"{meta['resourceVersion']}-{round_}"
        meta.setdefault("annotations", {})["bench/round"] = str(round_)
        watcher.changed("Rollout", "MODIFIED", rollout)


async def traced_after(watcher: Watcher, rounds: range) -> int:
    for round_ in rounds:
        change_every_rollout(watcher, round_)
        await watcher.flush(force=True)
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


async def churned(watcher: Watcher) -> tuple[int, int]:
    """The traced memory once the watcher has settled, and after 500 more changes built and published."""
    await watcher.renew_once()  # the lease: it publishes
    settled = await traced_after(watcher, range(10))  # whatever fills once: metrics, per-rollout state
    published = watcher.stats.published
    after = await traced_after(watcher, range(10, 60))
    assert watcher.stats.published - published == 50 * ROLLOUTS  # each change built and published
    return settled, after


def test_a_watcher_changing_its_rollouts_again_and_again_grows_by_nothing() -> None:
    # A bus whose stream keeps one round of updates: what it keeps stops growing in the first round.
    watcher, _ = mid_release_watcher(ROLLOUTS, namespaces=2, bus=MemoryBus(prefix="memory:", maxlen=ROLLOUTS))
    at = datetime.now(UTC)
    watcher.clock = lambda: at  # one moment: the views' times are not new strings each round
    tracemalloc.start()
    try:
        settled, after = asyncio.run(churned(watcher))
    finally:
        tracemalloc.stop()
    grown = after - settled
    # Leaking one fingerprint's texts per change would be 3 MB here; a bus's tail or a metric's sample
    # is a few hundred bytes.
    assert grown < 64 * 1024, f"{grown} bytes more after 500 changes ({compiled.running()})"


def test_each_rollouts_timeline_basis_is_kept_at_under_half_its_json_and_reads_back_as_it_was() -> None:
    bus = MemoryBus(prefix="basis:", maxlen=ROLLOUTS)
    watcher, _ = mid_release_watcher(ROLLOUTS, namespaces=2, bus=bus)

    async def published() -> dict[str, dict[str, Any]]:
        await watcher.renew_once()
        await watcher.flush(force=True)
        return await bus.snapshots(watcher.cluster)

    views = list(asyncio.run(published()).values())
    assert len(views) == ROLLOUTS
    for view in views:
        text = orjson.dumps(timeline_basis(view), default=str)
        kept = _kept_basis(view)
        assert len(kept) < len(text) / 2
        assert _basis_of(kept) == orjson.loads(text)
    assert _basis_of(None) is None


def test_resuming_from_a_handoff_holds_each_kind_at_its_peak_as_little_more_than_it_keeps() -> None:
    fleet, _ = mid_release_watcher(1000, namespaces=2)
    fields = pack(fleet.cache, {(kind, None): "1" for kind in fleet.cache.objects}, server="s", saved_at=1.0)
    del fleet
    watcher = Watcher("resumed", bus=MemoryBus(prefix="resumed:"), lease=MemoryLease())
    watches = unpack(fields, server="s")
    tracemalloc.start()
    try:
        for key in sorted(watches, key=lambda key: key[0] != "Rollout"):  # the Rollouts first, as the watcher
            before = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
            assert watcher._resume(watches.pop(key))
            kept, peak = (size - before for size in tracemalloc.get_traced_memory())
            # Beyond what it keeps, a few pieces of text decompressed at a time. Holding every decoded
            # Rollout until the last was read took three times what they keep.
            assert peak < 1.2 * kept + 8 * PIECE_BYTES, f"{key[0]}: kept {kept} bytes, peaked {peak} above"
    finally:
        tracemalloc.stop()
    assert len(watcher.cache.rollouts()) == 1000
