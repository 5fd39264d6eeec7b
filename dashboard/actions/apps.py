from __future__ import annotations

from django.apps import AppConfig


class ActionsConfig(AppConfig):
    name = "dashboard.actions"
    label = "actions"
    verbose_name = "Actions and audit"
    default_auto_field = "django.db.models.BigAutoField"
