"""Who may read which rollout: the single check every page, API view and websocket goes through.

``may_read`` is the login gate: an active signed-in user, or anyone when ``ANONYMOUS_READ_ONLY`` is on.
``can_view`` and ``visible`` apply the RBAC scopes (``dashboard.access.rbac``): a signed-in user sees
the rollouts some grant, policy line or ``RBAC_DEFAULT_ROLE`` lets them ``get``; superusers see all.
Deny by default. ``visible_rows`` is the same rule as a database filter, for queries that count rows
where they are (insights). Non-goal: write permissions (``rbac.can`` with an action name).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol, TypeVar

from django.conf import settings
from django.db.models import CharField, Q, QuerySet, Value
from django.db.models.functions import Concat

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


M = TypeVar("M", bound=QuerySet[Any])


def visible_rows(user: UserLike | None, rows: M) -> M:
    """``rows`` (a queryset of a model with ``cluster``, ``namespace`` and ``rollout`` columns) narrowed in
    the database to the rollouts ``can_view`` would let this user see: an allow glob matches the key
    ``cluster/namespace/rollout`` and no deny glob does."""
    if not may_read(user):
        return rows.none()
    access = access_for(user)
    if access.everything or access.read_all:
        return rows
    if not access.subjects:
        return rows.none()
    allow, deny = access.policy.object_patterns(access.subjects, GET)
    if not allow:
        return rows.none()
    key = Concat("cluster", Value("/"), "namespace", Value("/"), "rollout", output_field=CharField())
    allowed = Q()
    for pattern in allow:
        allowed |= Q(_visible_key__regex=glob_regex(pattern))
    denied = Q()
    for pattern in deny:
        denied |= Q(_visible_key__regex=glob_regex(pattern))
    rows = rows.alias(_visible_key=key).filter(allowed)
    return rows.exclude(denied) if deny else rows


def glob_regex(pattern: str) -> str:
    """An ``fnmatchcase`` glob as an anchored regular expression that PostgreSQL (and Python) read alike:
    ``*`` any text (``/`` included, as in Argo CD), ``?`` one character, ``[...]`` / ``[!...]`` a set."""
    out, i, n = ["^"], 0, len(pattern)
    while i < n:
        char = pattern[i]
        i += 1
        if char == "*":
            out.append(".*")
        elif char == "?":
            out.append(".")
        elif char == "[":
            j = i
            if j < n and pattern[j] == "!":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 1
            if j >= n:
                out.append("\\[")  # an unclosed [ is a literal, as fnmatch reads it
                continue
            body = pattern[i:j].replace("\\", "\\\\")
            i = j + 1
            if body.startswith("!"):
                body = "^" + body[1:]
            elif body.startswith("^"):
                body = "\\" + body
            out.append(f"[{body}]")
        elif char.isalnum() or char == "_":
            out.append(char)
        else:
            out.append("\\" + char)
    out.append("$")
    return "".join(out)
