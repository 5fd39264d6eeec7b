from __future__ import annotations

from django.apps import AppConfig


class NotifyConfig(AppConfig):
    name = "dashboard.notify"
    label = "notify"
    verbose_name = "Notifications"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.db.models.signals import post_delete, post_save

        from dashboard.notify.models import Subscription
        from dashboard.notify.service import forget_subscribed

        post_save.connect(forget_subscribed, sender=Subscription, dispatch_uid="notify-subscribed-save")
        post_delete.connect(forget_subscribed, sender=Subscription, dispatch_uid="notify-subscribed-delete")
