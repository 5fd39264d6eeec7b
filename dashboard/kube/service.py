"""Assembling a watcher from settings: the bus, the lease, the recorder — shared by ``watch``, ``replay``
and the benchmark so each runs the same pipeline.

Non-goals: argument parsing (the commands do it).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

from dashboard.domain.findings import Thresholds
from dashboard.history.recorder import Recorder
from dashboard.kube.watcher import PipelineSettings
from dashboard.live.bus import DEFAULT_PREFIX, LiveBus, get_bus
from dashboard.live.lease import Lease, MemoryLease, RedisLease


def live_bus(prefix: str | None = None) -> LiveBus:
    return get_bus(prefix=prefix)


def lease_for(cluster: str, prefix: str | None = None) -> Lease:
    if settings.REDIS_URL:
        prefix = prefix if prefix is not None else str(getattr(settings, "LIVE_REDIS_PREFIX", DEFAULT_PREFIX))
        return RedisLease(settings.REDIS_URL, prefix=prefix, cluster=cluster)
    return MemoryLease()


def pipeline_settings(**overrides: Any) -> PipelineSettings:
    """The watcher's settings with the diagnostics' thresholds from the Django settings."""
    thresholds = Thresholds(stuck_at_step_zero_seconds=float(settings.STUCK_AT_STEP_ZERO_SECONDS))
    overrides.setdefault("handoff_seconds", float(settings.WATCHER_HANDOFF_SECONDS))
    return PipelineSettings(thresholds=thresholds, **overrides)


def history_recorder() -> Recorder:
    return Recorder(retention_days=settings.HISTORY_RETENTION_DAYS).start()
