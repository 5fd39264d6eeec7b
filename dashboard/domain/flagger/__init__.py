"""Flagger ``Canary`` objects seen the way the Argo side sees a Rollout (all of it in ``view`` for now).

Non-goals: findings (``dashboard.domain.findings.flagger``), I/O.
"""

from __future__ import annotations

from .view import (
    CONTROLLER,
    CanaryEvent,
    CanaryView,
    Check,
    FlaggerMetrics,
    Gate,
    Note,
    Workload,
    analysis_spec,
    canary_events,
    canary_health,
    canary_view,
    canary_views,
    deployment_strategy,
    is_canary,
    max_weight,
    parse_event_message,
    parse_flagger_metrics,
    render_canary,
    routing_object,
    service_names,
    step_weights,
)

__all__ = [
    "CONTROLLER",
    "CanaryEvent",
    "CanaryView",
    "Check",
    "FlaggerMetrics",
    "Gate",
    "Note",
    "Workload",
    "analysis_spec",
    "canary_events",
    "canary_health",
    "canary_view",
    "canary_views",
    "deployment_strategy",
    "is_canary",
    "max_weight",
    "parse_event_message",
    "parse_flagger_metrics",
    "render_canary",
    "routing_object",
    "service_names",
    "step_weights",
]
