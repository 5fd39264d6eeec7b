"""Subscriptions are edited in the admin; notifications are a read-only delivery log."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from dashboard.notify.models import Notification, Subscription


@admin.register(Subscription)
class SubscriptionAdmin(admin.ModelAdmin):
    list_display = ("name", "channel", "cluster", "namespace", "rollout", "min_severity", "findings",
                    "actions", "enabled")
    list_filter = ("channel", "enabled", "min_severity")


@admin.register(Notification)
class NotificationAdmin(admin.ModelAdmin):
    list_display = ("created_at", "kind", "cluster", "namespace", "rollout", "severity", "subscription",
                    "status", "attempts", "last_error")
    list_filter = ("status", "kind", "severity")
    readonly_fields = [f.name for f in Notification._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
