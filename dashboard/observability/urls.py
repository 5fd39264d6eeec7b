"""``/metrics`` (Prometheus) of the web process and ``/api/v1/live-status`` (freshness for the pages)."""

from __future__ import annotations

from django.urls import path

from dashboard.observability import views

urlpatterns = [
    path("metrics", views.metrics, name="metrics"),
    path("api/v1/live-status", views.live_status, name="live-status"),
]
