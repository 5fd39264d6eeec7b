"""``/metrics`` (Prometheus) of the web process."""

from __future__ import annotations

from django.urls import path

from dashboard.observability import views

urlpatterns = [path("metrics", views.metrics, name="metrics")]
