"""Permission checks: ``can(user, action, key)`` and the per-user ``Access`` they are answered from.

A user's ``Access`` is their typed subjects (their user name as a user; their Django groups and the groups
claim of their last single sign-on as groups; ``RBAC_DEFAULT_ROLE`` as a role: a name is never read as
another kind of subject) and the policy that applies to them: the policy file
(``RBAC_POLICY_FILE``, re-read when it changes) plus the grants stored in the database. Superusers may do
everything; anonymous users may only read, and only when ``ANONYMOUS_READ_ONLY`` is on. Deny by default.

The Access is cached on the user object for ``ACCESS_CACHE_SECONDS`` so that filtering a fleet of
thousands of rows costs no query per row. Async code (views, websocket consumers) calls ``aaccess_for``;
the synchronous ``access_for`` still works there by loading on a helper thread, because Django refuses
database calls on an event loop's thread.

Non-goals: what the checks protect (views, consumers and the action service call them).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connections

from dashboard.access.policy import (
    GET,
    Kind,
    Policy,
    PolicyError,
    Rule,
    Subject,
    group,
    parse_policy,
    role,
    role_rules,
)

log = logging.getLogger(__name__)
_CACHE_ATTR = "_rollouts_access"


@dataclass(frozen=True)
class Access:
    subjects: frozenset[Subject] = frozenset()
    policy: Policy = field(default_factory=Policy)
    everything: bool = False  # superusers
    read_all: bool = False  # anonymous read-only viewing
    granted_roles: tuple[tuple[str, str], ...] = ()  # (role name, scope glob) of the stored grants

    def holds(self, key: str) -> frozenset[Subject]:
        """The user's subjects and every role they hold on ``key`` (policy bindings and stored grants):
        whom a guard rail's ``approvers=`` is matched against."""
        held = set(self.policy.roles_of(self.subjects))
        held |= {role(name) for name, scope in self.granted_roles if fnmatchcase(key, scope)}
        return frozenset(held)

    @property
    def groups(self) -> tuple[str, ...]:
        """The names of the user's groups (Django and SSO), sorted: what the audit log records."""
        return tuple(sorted(s.name for s in self.subjects if s.kind is Kind.GROUP))

    def can(self, action: str, key: str) -> bool:
        if self.everything:
            return True
        if action == GET and self.read_all:
            return True
        return bool(self.subjects) and self.policy.allows(self.subjects, action, key)

    def actions_on(self, key: str, actions: Iterable[str]) -> list[str]:
        return [action for action in actions if self.can(action, key)]


NOBODY = Access()


# --- the policy file ----------------------------------------------------------------------------------

_file_lock = threading.Lock()
_file_cache: dict[str, tuple[float, Policy]] = {}


def file_policy() -> Policy:
    """The policy file's rules (empty when no file is configured), re-parsed when its mtime changes."""
    path = str(getattr(settings, "RBAC_POLICY_FILE", "") or "")
    if not path:
        return Policy()
    try:
        mtime = Path(path).stat().st_mtime
    except OSError as error:
        raise PolicyError(f"RBAC_POLICY_FILE {path!r} cannot be read: {error.strerror}") from None
    with _file_lock:
        cached = _file_cache.get(path)
        if cached is not None and cached[0] == mtime:
            return cached[1]
    policy = parse_policy(Path(path).read_text(encoding="utf-8"), source=path)
    with _file_lock:
        _file_cache[path] = (mtime, policy)
    return policy


def _safe_file_policy() -> Policy:
    try:
        return file_policy()
    except PolicyError:
        # The system check reports a broken file at start-up; at run time a file edited into a broken
        # state must not open anything up, so its rules are dropped (deny by default) and it is logged.
        log.exception("the RBAC policy file is invalid; its rules are ignored until it is fixed")
        return Policy()


# --- per-user access -------------------------------------------------------------------------------------


def _is_authenticated(user: Any) -> bool:
    return bool(getattr(user, "is_authenticated", False) and getattr(user, "is_active", False))


def _load(user: Any) -> Access:
    if not _is_authenticated(user):
        return Access(read_all=bool(settings.ANONYMOUS_READ_ONLY))
    if getattr(user, "is_superuser", False):
        return Access(everything=True)
    subjects: set[Subject] = set()
    username = str(getattr(user, "username", "") or "")
    if username:
        subjects.add(Subject(Kind.USER, username))
    default_role = str(getattr(settings, "RBAC_DEFAULT_ROLE", "") or "")
    if default_role:
        subjects.add(role(default_role))
    policy = _safe_file_policy()
    granted: tuple[tuple[str, str], ...] = ()
    if getattr(user, "pk", None) is not None:
        groups, grants, granted = _stored(user)
        subjects |= {group(name) for name in groups}
        policy = policy + grants
    return Access(subjects=frozenset(subjects), policy=policy, granted_roles=granted)


def _stored(user: Any) -> tuple[set[str], Policy, tuple[tuple[str, str], ...]]:
    """The user's group names (Django groups + last SSO claim), the policy of their stored grants and
    the roles those grants hold (with their scopes)."""
    from django.db.models import Q

    from dashboard.access.models import Grant, SingleSignOnIdentity

    groups = set(user.groups.values_list("name", flat=True))
    sso = SingleSignOnIdentity.objects.filter(user=user).values_list("groups", flat=True).first()
    groups |= {str(g) for g in sso or () if g}
    rules: list[Rule] = []
    held: list[tuple[str, str]] = []
    for grant in Grant.objects.filter(Q(user=user) | Q(group__in=groups)).select_related("role", "user"):
        rules.extend(role_rules(grant.subject, grant.role.action_list(), grant.scope, allow=not grant.deny))
        if not grant.deny:
            held.append((grant.role.name, grant.scope))
    return groups, Policy(tuple(rules)), tuple(held)


_loader = ThreadPoolExecutor(max_workers=2, thread_name_prefix="access-loader")


def _load_off_loop(user: Any) -> Access:
    def run() -> Access:
        try:
            return _load(user)
        finally:
            connections.close_all()  # this helper thread must not hold a connection between loads

    return _loader.submit(run).result(timeout=30)


def _in_event_loop() -> bool:
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _cached(user: Any) -> Access | None:
    entry = getattr(user, _CACHE_ATTR, None) if user is not None else None
    if entry is not None and time.monotonic() - entry[0] < float(settings.ACCESS_CACHE_SECONDS):
        return entry[1]
    return None


def _remember(user: Any, access: Access) -> Access:
    if user is not None:
        # AnonymousUser-like objects without a __dict__ are cheap to recompute
        with contextlib.suppress(AttributeError):
            setattr(user, _CACHE_ATTR, (time.monotonic(), access))
    return access


def access_for(user: Any) -> Access:
    """The user's Access (cached on the user object for ``ACCESS_CACHE_SECONDS``)."""
    cached = _cached(user)
    if cached is not None:
        return cached
    needs_db = _is_authenticated(user) and getattr(user, "pk", None) is not None
    access = _load_off_loop(user) if needs_db and _in_event_loop() else _load(user)
    return _remember(user, access)


async def aaccess_for(user: Any) -> Access:
    cached = _cached(user)
    if cached is not None:
        return cached
    return _remember(user, await sync_to_async(_load)(user))


def forget(user: Any) -> None:
    """Drop the cached Access (after a login or a change to the user's grants)."""
    if user is not None and hasattr(user, _CACHE_ATTR):
        delattr(user, _CACHE_ATTR)


def can(user: Any, action: str, key: str) -> bool:
    """Whether ``user`` may do ``action`` (``get`` = see) on the rollout ``"cluster/namespace/name"``."""
    return access_for(user).can(action, key)


async def acan(user: Any, action: str, key: str) -> bool:
    return (await aaccess_for(user)).can(action, key)
