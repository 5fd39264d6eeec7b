from __future__ import annotations

from django.apps import AppConfig


class FlaggerGatesConfig(AppConfig):
    name = "dashboard.flagger_gates"
    label = "flagger_gates"
    verbose_name = "Flagger gates"
    default_auto_field = "django.db.models.BigAutoField"
