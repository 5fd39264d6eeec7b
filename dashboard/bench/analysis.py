"""Pure arithmetic of the benchmark: percentiles, write-to-client delays, time series and the loss check.

How a delay is attributed (no clocks other than this machine's wall clock, shared by all processes):

- the churn driver knows when it wrote each new image and the resourceVersion kubesim gave it;
- the stream monitor knows every bus entry: its id, rollout key, the view's resourceVersion and when it
  appeared. A write is *published* by the first entry of its rollout whose view has a resourceVersion at
  least the write's (a later state includes it);
- a websocket client notes every message's ``streamId``. Fleet and rollout consumers send contiguous
  ranges of the stream, so entry ``E`` reached a client with the first message whose ``streamId >= E``.

Non-goals: I/O of any kind, the figures' presentation (``report``).
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

StreamId = tuple[int, int]


def parse_stream_id(text: str) -> StreamId:
    ms, _, seq = text.partition("-")
    return int(ms), int(seq or 0)


def percentile(sorted_values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile of already sorted values (``p`` in 0..100)."""
    if not sorted_values:
        raise ValueError("percentile of no values")
    rank = max(1, math.ceil(p / 100 * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


def summarize(values: Iterable[float]) -> dict[str, Any]:
    """count, mean, p50, p95, p99 and max (milliseconds in, milliseconds out, one decimal)."""
    ordered = sorted(values)
    if not ordered:
        return {"count": 0, "mean": None, "p50": None, "p95": None, "p99": None, "max": None}
    return {
        "count": len(ordered),
        "mean": round(sum(ordered) / len(ordered), 1),
        "p50": round(percentile(ordered, 50), 1),
        "p95": round(percentile(ordered, 95), 1),
        "p99": round(percentile(ordered, 99), 1),
        "max": round(ordered[-1], 1),
    }


@dataclass(frozen=True)
class Write:
    key: str  # "{cluster}/{namespace}/{name}"
    resource_version: int
    at: float  # wall clock just before the request was sent (never flatters the delay)
    # When the API's answer arrived (None: not known). The write was committed between ``at`` and this,
    # so a delay counted from here is a lower bound where the one from ``at`` is an upper bound.
    answered: float | None = None
    # When the API server committed it, where it says so (kubesim's ``Kubesim-Committed-At``): the delay
    # from here is the pipeline's own, without the time the request waited to be read.
    committed: float | None = None


@dataclass(frozen=True)
class Entry:
    stream_id: StreamId
    key: str
    resource_version: int | None  # None for removals
    at: float  # wall clock when the monitor read it


@dataclass
class PublishIndex:
    """Per rollout key: its entries' resourceVersions, stream ids and read times, in stream order."""

    versions: dict[str, list[int]] = field(default_factory=dict)
    ids: dict[str, list[StreamId]] = field(default_factory=dict)
    times: dict[str, list[float]] = field(default_factory=dict)

    @classmethod
    def build(cls, entries: Iterable[Entry]) -> PublishIndex:
        index = cls()
        for entry in sorted(entries, key=lambda e: e.stream_id):
            if entry.resource_version is None:
                continue
            index.versions.setdefault(entry.key, []).append(entry.resource_version)
            index.ids.setdefault(entry.key, []).append(entry.stream_id)
            index.times.setdefault(entry.key, []).append(entry.at)
        return index

    def first_covering(self, write: Write) -> tuple[StreamId, float] | None:
        """The first entry of the write's rollout that includes it, as (stream id, read time)."""
        versions = self.versions.get(write.key)
        if not versions:
            return None
        # resourceVersions of one rollout only grow along the stream, but a relist may republish an
        # older view: scan forward from the first candidate instead of trusting strict order.
        for i in range(bisect.bisect_left(versions, write.resource_version), len(versions)):
            if versions[i] >= write.resource_version:
                return self.ids[write.key][i], self.times[write.key][i]
        return None


@dataclass
class ClientLog:
    """What one websocket client saw: each message's stream id and arrival time, in arrival order."""

    ids: list[StreamId]
    times: list[float]

    def arrival(self, stream_id: StreamId) -> float | None:
        """When the first message covering ``stream_id`` arrived (None: it never did)."""
        # Stream ids a client sees only grow; a resnapshot after trimming may repeat one — still sorted.
        i = bisect.bisect_left(self.ids, stream_id)
        return self.times[i] if i < len(self.ids) else None


@dataclass
class Delays:
    publish: list[tuple[float, float]] = field(default_factory=list)  # (write time, ms to the bus)
    end_to_end: list[tuple[float, float]] = field(default_factory=list)  # (write time, ms to a client)
    # The same from the API's answer to the write (a lower bound), and the write requests' own time.
    end_to_end_from_answer: list[float] = field(default_factory=list)
    end_to_end_from_commit: list[float] = field(default_factory=list)
    publish_from_commit: list[float] = field(default_factory=list)  # commit → bus
    requests: list[float] = field(default_factory=list)  # ms from sending a write to the API's answer
    unpublished: int = 0
    undelivered: int = 0  # (write, client) pairs that never arrived


def delays(writes: Iterable[Write], index: PublishIndex, clients: Sequence[ClientLog]) -> Delays:
    result = Delays()
    for write in writes:
        found = index.first_covering(write)
        if found is None:
            result.unpublished += 1
            result.undelivered += len(clients)
            continue
        stream_id, published_at = found
        result.publish.append((write.at, (published_at - write.at) * 1000))
        if write.answered is not None:
            result.requests.append((write.answered - write.at) * 1000)
        if write.committed is not None:
            result.publish_from_commit.append((published_at - write.committed) * 1000)
        for client in clients:
            arrived = client.arrival(stream_id)
            if arrived is None:
                result.undelivered += 1
                continue
            result.end_to_end.append((write.at, (arrived - write.at) * 1000))
            if write.answered is not None:
                result.end_to_end_from_answer.append((arrived - write.answered) * 1000)
            if write.committed is not None:
                result.end_to_end_from_commit.append((arrived - write.committed) * 1000)
    return result


def over_time(
    samples: Iterable[tuple[float, float]], start: float, bucket: float = 1.0
) -> list[dict[str, Any]]:
    """Percentiles per ``bucket`` seconds of write time, from ``start``: the latency-over-time series."""
    buckets: dict[int, list[float]] = {}
    for at, value in samples:
        buckets.setdefault(int((at - start) // bucket), []).append(value)
    series = []
    for n in sorted(buckets):
        values = sorted(buckets[n])
        series.append(
            {
                "t": round(n * bucket, 3),
                "count": len(values),
                "p50": round(percentile(values, 50), 1),
                "p95": round(percentile(values, 95), 1),
                "p99": round(percentile(values, 99), 1),
            }
        )
    return series


def rate_series(times: Iterable[float], start: float, bucket: float = 1.0) -> list[dict[str, Any]]:
    """Events per second per bucket, from ``start`` (empty buckets included, so gaps show)."""
    counts: dict[int, int] = {}
    for at in times:
        if at >= start:
            n = int((at - start) // bucket)
            counts[n] = counts.get(n, 0) + 1
    if not counts:
        return []
    return [{"t": round(n * bucket, 3), "rate": counts.get(n, 0) / bucket} for n in range(max(counts) + 1)]


def compare_tables(expected: Mapping[str, str], actual: Mapping[str, str]) -> dict[str, list[str]]:
    """Keys missing from ``actual``, extra in it, and present with a different (stale) value."""
    return {
        "missing": sorted(expected.keys() - actual.keys()),
        "extra": sorted(actual.keys() - expected.keys()),
        "stale": sorted(k for k in expected.keys() & actual.keys() if expected[k] != actual[k]),
    }


def largest_gap(times: Sequence[float], start: float, end: float) -> float:
    """The longest stretch in [start, end] without an event (seconds): a failover's blackout."""
    points = [start, *sorted(t for t in times if start <= t <= end), end]
    return max((b - a for a, b in itertools.pairwise(points)), default=0.0)


def profile_summary(lines: Iterable[str], top: int = 15) -> dict[str, Any]:
    """py-spy's collapsed stacks ("f1;f2;f3 COUNT") → where the time goes: top frames by own and total."""
    own: dict[str, int] = {}
    total: dict[str, int] = {}
    samples = 0
    for line in lines:
        stack, _, count_text = line.rstrip().rpartition(" ")  # a file's lines keep their newline
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        samples += count
        frames = stack.split(";")
        own[frames[-1]] = own.get(frames[-1], 0) + count
        for frame in set(frames):
            total[frame] = total.get(frame, 0) + count

    def ranked(table: dict[str, int]) -> list[dict[str, Any]]:
        best = sorted(table.items(), key=lambda item: -item[1])[:top]
        return [{"frame": frame, "percent": round(100 * n / samples, 1)} for frame, n in best]

    return {
        "samples": samples,
        "own": ranked(own) if samples else [],
        "total": ranked(total) if samples else [],
    }


def histogram_delta(
    before: Mapping[float, float], after: Mapping[float, float]
) -> dict[float, float]:
    """Cumulative bucket counts (upper bound → count, ``inf`` included) observed between two scrapes."""
    return {bound: after[bound] - before.get(bound, 0.0) for bound in sorted(after)}


def share_over(buckets: Mapping[float, float], bound: float) -> float | None:
    """The share of a histogram's observations above ``bound`` (one of its bucket bounds)."""
    total = buckets.get(math.inf, 0.0)
    if not total or bound not in buckets:
        return None
    return (total - buckets[bound]) / total
