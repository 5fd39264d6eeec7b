"""Who may read which rollout: the single check every page, API view and websocket goes through.

``may_read`` is the login gate: an active signed-in user, or anyone when ``ANONYMOUS_READ_ONLY`` is on.
``can_view`` and ``visible`` apply the RBAC scopes (``dashboard.access.rbac``): a signed-in user sees
the rollouts some grant, policy line or ``RBAC_DEFAULT_ROLE`` lets them ``get``; superusers see all.
Deny by default. Non-goal: write permissions (``rbac.can`` with an action name).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol, TypeVar

from django.conf import settings

from dashboard.access.policy import GET
from dashboard.access.rbac import access_for

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
    return may_read(user) and access_for(user).can(GET, key)


def visible(user: UserLike | None, rows: Iterable[Row]) -> list[Row]:
    """The rows (anything with a ``key``) this user may see, in their original order."""
    if not may_read(user):
        return []
    access = access_for(user)
    return [row for row in rows if access.can(GET, str(row.get("key", "")))]
