"""Admin pages for roles, grants and single-sign-on identities."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from dashboard.access.models import Grant, Role, SingleSignOnIdentity


@admin.register(Role)
class RoleAdmin(admin.ModelAdmin):
    list_display = ("name", "effective_actions", "description")
    search_fields = ("name", "description")

    @admin.display(description="actions")
    def effective_actions(self, role: Role) -> str:
        return ", ".join(role.action_list())

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        # Built-in roles' actions come from the code; renaming one would orphan that.
        return ("name", "actions") if obj is not None and obj.builtin else ()

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return not (obj is not None and obj.builtin) and super().has_delete_permission(request, obj)


@admin.register(Grant)
class GrantAdmin(admin.ModelAdmin):
    list_display = ("subject_display", "role", "cluster", "namespace", "rollout", "deny", "created_at")
    list_filter = ("role", "deny", "cluster")
    search_fields = ("user__username", "group", "cluster", "namespace", "rollout")
    autocomplete_fields = ("user",)
    fieldsets = (
        ("Who (exactly one)", {"fields": ("user", "group")}),
        ("What", {"fields": ("role", "deny")}),
        ("Where (globs: *, ?, [abc])", {"fields": ("cluster", "namespace", "rollout")}),
    )

    @admin.display(description="user or group")
    def subject_display(self, grant: Grant) -> str:
        return f"user {grant.user}" if grant.user_id else f"group {grant.group}"


@admin.register(SingleSignOnIdentity)
class SingleSignOnIdentityAdmin(admin.ModelAdmin):
    list_display = ("user", "issuer", "subject", "groups", "last_login")
    readonly_fields = ("user", "issuer", "subject", "groups", "last_login")
    search_fields = ("user__username", "subject")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
