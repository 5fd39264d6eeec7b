"""Admin page for gate tokens: list and revoke them; adding one shows its secret once."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.http import HttpRequest

from dashboard.flagger_gates.models import GateToken
from dashboard.flagger_gates.services import issue_token


@admin.register(GateToken)
class GateTokenAdmin(admin.ModelAdmin):
    list_display = ("cluster", "namespace", "canary", "label", "created_at")
    fields = ("cluster", "namespace", "canary", "label")
    search_fields = ("cluster", "namespace", "canary", "label")

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        return ("cluster", "namespace", "canary") if obj is not None else ()  # re-issue to change a scope

    def save_model(self, request: HttpRequest, obj: GateToken, form: Any, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        row, token = issue_token(obj.cluster, namespace=obj.namespace, canary=obj.canary, label=obj.label)
        obj.pk, obj.digest, obj.created_at = row.pk, row.digest, row.created_at
        messages.warning(request, f"The new gate token (shown only now): {token}")
