"""URLs of the Flagger gate server (included from ``rollouts_ui.urls``).

Point a Canary's gate webhooks at ``/api/v1/flagger/gates/<cluster>/<gate>/`` where gate is
confirm-rollout, confirm-promotion, confirm-traffic-increase or rollback, with a gate token in the
webhook's metadata (``token``) or the URL (``?token=``); see docs/operator-guide.md.
"""

from __future__ import annotations

from django.urls import path

from dashboard.flagger_gates import views

_CANARY = "api/v1/canaries/<str:cluster>/<str:namespace>/<str:name>"

urlpatterns = [
    path("api/v1/flagger/gates/<str:cluster>/<str:gate>/", views.gate_webhook, name="flagger-gate"),
    path(f"{_CANARY}/actions/<str:action>", views.canary_action, name="api-canary-action"),
    path(f"{_CANARY}/gates", views.canary_gates, name="api-canary-gates"),
]
