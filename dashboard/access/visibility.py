"""Who may read which rollout: the single check every page, API view and websocket goes through.

Today any authenticated user sees every rollout, and anonymous users see everything only when
``settings.ANONYMOUS_READ_ONLY`` is true. Per-rollout RBAC scopes slot in here later (``can_view`` and
``visible`` grow a scope filter); callers do not change. Non-goal: write permissions (the actions issue
owns those).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol, TypeVar

from django.conf import settings

Row = TypeVar("Row", bound=Mapping[str, Any])


class UserLike(Protocol):
    @property
    def is_authenticated(self) -> bool: ...

    @property
    def is_active(self) -> bool: ...


def may_read(user: UserLike | None) -> bool:
    """Whether this user may read anything at all (the login gate)."""
    if user is not None and user.is_authenticated and user.is_active:
        return True
    return bool(settings.ANONYMOUS_READ_ONLY)


def can_view(user: UserLike | None, key: str) -> bool:
    """Whether the user may see the rollout ``"{cluster}/{namespace}/{name}"``."""
    return may_read(user)


def visible(user: UserLike | None, rows: Iterable[Row]) -> list[Row]:
    """The rows (anything with a ``key``) this user may see, in their original order."""
    if not may_read(user):
        return []
    return [row for row in rows if can_view(user, str(row.get("key", "")))]
