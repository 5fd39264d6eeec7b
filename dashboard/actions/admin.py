"""The audit log in the admin: readable and searchable, never editable or deletable."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from dashboard.actions.models import AuditEntry


@admin.register(AuditEntry)
class AuditEntryAdmin(admin.ModelAdmin):
    list_display = ("at", "actor", "action", "cluster", "namespace", "rollout", "outcome", "detail")
    list_filter = ("outcome", "action", "cluster")
    search_fields = ("actor", "namespace", "rollout", "detail", "idempotency_key")
    date_hierarchy = "at"
    actions = None

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [field.name for field in AuditEntry._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
