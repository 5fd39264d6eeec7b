from __future__ import annotations

from django.urls import path

from dashboard.web import health

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
]
