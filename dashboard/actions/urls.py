"""URLs of the actions API and the audit pages (included from ``rollouts_ui.urls``)."""

from __future__ import annotations

from django.urls import path

from dashboard.web import actions_api, audit_views

_ROLLOUT = "api/v1/rollouts/<str:cluster>/<str:namespace>/<str:name>"

urlpatterns = [
    path(f"{_ROLLOUT}/actions/<str:action>", actions_api.run_action, name="api-action"),
    path(f"{_ROLLOUT}/actions", actions_api.allowed_actions, name="api-actions"),
    path(f"{_ROLLOUT}/audit", actions_api.rollout_audit, name="api-rollout-audit"),
    path("audit/", audit_views.audit_page, name="audit"),
    path("audit/export.csv", audit_views.audit_export, {"fmt": "csv"}, name="audit-export-csv"),
    path("audit/export.json", audit_views.audit_export, {"fmt": "json"}, name="audit-export-json"),
]
