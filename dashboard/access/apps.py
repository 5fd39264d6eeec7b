from __future__ import annotations

from django.apps import AppConfig


class AccessConfig(AppConfig):
    name = "dashboard.access"
    label = "access"
    verbose_name = "Access control"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from dashboard.access import checks  # noqa: F401  (registers the policy-file check)
