"""URLs of the guard rails (included from ``rollouts_ui.urls``)."""

from __future__ import annotations

from django.urls import path

from dashboard.guardrails import views

urlpatterns = [
    path("api/v1/requests", views.requests_collection, name="api-requests"),
    path("api/v1/requests/awaiting", views.awaiting, name="api-requests-awaiting"),
    path("api/v1/requests/<int:request_id>", views.request_detail, name="api-request"),
    path(
        "api/v1/requests/<int:request_id>/approve",
        views.request_vote,
        {"vote": "approve"},
        name="api-request-approve",
    ),
    path(
        "api/v1/requests/<int:request_id>/deny", views.request_vote, {"vote": "deny"}, name="api-request-deny"
    ),
    path("api/v1/guardrails", views.guardrails_rules, name="api-guardrails"),
    path("api/v1/freezes", views.freezes, name="api-freezes"),
    path("guardrails/", views.rules_page, name="guardrails"),
]
