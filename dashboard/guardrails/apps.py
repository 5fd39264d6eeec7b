from __future__ import annotations

from django.apps import AppConfig


class GuardrailsConfig(AppConfig):
    name = "dashboard.guardrails"
    label = "guardrails"
    verbose_name = "Guard rails"
    default_auto_field = "django.db.models.BigAutoField"
