from __future__ import annotations

from django.apps import AppConfig


class NotifyConfig(AppConfig):
    name = "dashboard.notify"
    label = "notify"
    verbose_name = "Notifications"
    default_auto_field = "django.db.models.BigAutoField"
