"""Flagger ``Canary`` (flagger.app/v1beta1) objects seen the way the Argo side sees a Rollout, by concern.

``view`` builds the CanaryView (``canary_view``, ``canary_views``) from the modules beside it: ``spec``
(what the spec implies: strategy, weights, services, routing object), ``events`` (Flagger's Event
messages parsed), ``metrics`` (Flagger's ``/metrics``), ``phase`` (status, message and step from the
phase), ``notes`` (where Flagger's status misleads), ``analysis`` (checks and gates), ``argocd_health``
(Argo CD's health for a Canary) and ``render_text`` (the kubectl-style text). This package re-exports the
names the rest of the project imports. All pure.

Non-goals: findings (``dashboard.domain.findings.flagger``), I/O.
"""

from __future__ import annotations

from .analysis import Check, Gate
from .argocd_health import canary_health
from .events import CanaryEvent, canary_events, parse_event_message
from .metrics import FlaggerMetrics, parse_flagger_metrics
from .notes import Note
from .render_text import render_canary
from .spec import (
    CONTROLLER,
    analysis_spec,
    deployment_strategy,
    max_weight,
    routing_object,
    service_names,
    step_weights,
)
from .view import CanaryView, Workload, canary_view, canary_views, is_canary

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
