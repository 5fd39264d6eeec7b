"""RBAC rules and their evaluation, in the policy format Argo CD users know (pure, no Django).

A policy is a list of rules and role bindings::

    p, role:payments-release, rollouts, promote, prod/payments/*, allow
    p, alice,                 rollouts, abort,   */*/*,          allow
    g, payments-team, role:payments-release

``p, <subject>, <resource>, <action>, <object>, <effect>``: the subject is a role (``role:…``), a user name
or a group name; the resource is ``rollouts`` (or ``*``); the action is one of ``ACTIONS`` (or a glob such
as ``*``) — or, as in Argo CD, the resource ``logs`` with the action ``get``, which is the action
``logs`` (reading pods' logs); the object is a glob over ``"{cluster}/{namespace}/{rollout}"`` in which,
as in Argo CD, ``*`` also matches ``/``; the effect is ``allow`` or ``deny``.
``g, <user-or-group-or-role>, role:<name>`` binds a subject to a role (roles may include roles).
A matching ``deny`` always wins; nothing matching means no.

Subjects are typed (``Subject(kind, name)``) from the identity to the rule, so a user, a group and a role
can never be mistaken for each other whatever an identity provider sends: a user or SSO group literally
named ``role:admin`` is the user or group of that name, never the role. In a policy line, ``role:<name>``
is a role; ``user:<name>`` and ``group:<name>`` name only a user or only a group; any other text is, as in
Argo CD, a user *or* a group of exactly that name (commas and spaces need CSV quoting). Names are matched
exactly: ``*`` in a subject is the literal name ``*``.

Built-in roles: ``role:viewer`` (get, logs), ``role:operator`` (get, logs and the day-to-day rollout
actions) and ``role:admin`` (everything, including ``unwedge``).

Non-goals: Argo CD's other resources (applications, projects …) and its regex matcher mode.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from fnmatch import fnmatchcase

GET = "get"
# A permission, not a rollout action: run an action during a change freeze (with a reason).
BREAK_GLASS = "break-glass"
# Reading pods' logs (Argo CD's ``logs, get``): its own permission, never implied by ``get`` alone.
LOGS = "logs"
ACTIONS: tuple[str, ...] = (
    "promote",
    "promote-full",
    "skip-current-step",
    "abort",
    "retry",
    "pause",
    "resume",
    "restart",
    "undo",
    "unwedge",
)
ALL_ACTIONS: tuple[str, ...] = (GET, LOGS, *ACTIONS, BREAK_GLASS)
RESOURCE = "rollouts"
LOGS_RESOURCE = "logs"  # Argo CD's resource for it: ``p, <subject>, logs, get, <object>, allow``
# The guard-rail lines (approval, freeze, reason) share the policy file; ``dashboard.guardrails.rules``.
GUARD_KINDS = ("approval", "freeze", "reason")

ROLE_PREFIX = "role:"
USER_PREFIX = "user:"
GROUP_PREFIX = "group:"

BUILTIN_ROLES: Mapping[str, tuple[str, ...]] = {
    # As Argo CD's role:readonly, the viewer may read logs (a custom role may leave them out).
    "viewer": (GET, LOGS),
    "operator": (
        GET,
        LOGS,
        "promote",
        "promote-full",
        "skip-current-step",
        "abort",
        "retry",
        "pause",
        "resume",
        "restart",
        "undo",
    ),
    "admin": ALL_ACTIONS,
}


class PolicyError(ValueError):
    """A policy line or a grant is malformed; the message names the line and what is wrong."""


class Kind(StrEnum):
    USER = "user"
    GROUP = "group"
    ROLE = "role"


@dataclass(frozen=True, order=True)
class Subject:
    """Who a rule or a binding is about: the kind is part of the identity, never parsed from the name."""

    kind: Kind
    name: str

    def __str__(self) -> str:
        return f"{self.kind.value}:{self.name}"


def user(name: str) -> Subject:
    return Subject(Kind.USER, name)


def group(name: str) -> Subject:
    return Subject(Kind.GROUP, name)


def role(name: str) -> Subject:
    return Subject(Kind.ROLE, name)


@dataclass(frozen=True)
class Rule:
    subject: Subject
    action: str  # an action name or a glob over action names
    object: str  # a glob over "cluster/namespace/name"
    allow: bool = True

    def matches(self, action: str, key: str) -> bool:
        return fnmatchcase(action, self.action) and fnmatchcase(key, self.object)


@dataclass(frozen=True)
class Policy:
    rules: tuple[Rule, ...] = ()
    bindings: tuple[tuple[Subject, Subject], ...] = ()  # (member, role)

    def __add__(self, other: Policy) -> Policy:
        return Policy(self.rules + other.rules, self.bindings + other.bindings)

    def roles_of(self, subjects: Iterable[Subject]) -> frozenset[Subject]:
        """The subjects plus every role they hold, directly or through other roles."""
        held = set(subjects)
        frontier = list(held)
        while frontier:
            member = frontier.pop()
            for who, role in self.bindings:
                if who == member and role not in held:
                    held.add(role)
                    frontier.append(role)
        return frozenset(held)

    def object_patterns(self, subjects: Iterable[Subject], action: str) -> tuple[list[str], list[str]]:
        """The object globs that allow and that deny ``action`` to ``subjects``: ``allows`` as data, for
        filters that must run where the rows are (a key is allowed iff it matches an allow glob and no
        deny glob)."""
        allow: list[str] = []
        deny: list[str] = []
        for rule in _rules_for(self, self.roles_of(subjects)):
            if fnmatchcase(action, rule.action):
                (allow if rule.allow else deny).append(rule.object)
        return allow, deny

    def allows(self, subjects: Iterable[Subject], action: str, key: str) -> bool:
        """Whether ``subjects`` (user name, group names, default role) may do ``action`` on ``key``."""
        holders = self.roles_of(subjects)
        allowed = False
        for rule in _rules_for(self, holders):
            if rule.matches(action, key):
                if not rule.allow:
                    return False  # deny wins, whatever else matches
                allowed = True
        return allowed


@dataclass
class _Builder:
    rules: list[Rule] = field(default_factory=list)
    bindings: list[tuple[Subject, Subject]] = field(default_factory=list)


def _rules_for(policy: Policy, holders: frozenset[Subject]) -> Iterable[Rule]:
    for name, actions in BUILTIN_ROLES.items():
        if role(name) in holders:
            yield from (Rule(role(name), action, "*") for action in actions)
    yield from (rule for rule in policy.rules if rule.subject in holders)


def parse_subject(text: str) -> tuple[Subject, ...]:
    """The subjects a policy line's subject field names (a bare name is a user or a group, as in Argo CD)."""
    for prefix, kind in ((ROLE_PREFIX, Kind.ROLE), (USER_PREFIX, Kind.USER), (GROUP_PREFIX, Kind.GROUP)):
        if text.startswith(prefix):
            name = text[len(prefix) :]
            if not name:
                raise PolicyError(f"{text!r} names no {kind.value} (write {prefix}<name>)")
            return (Subject(kind, name),)
    if not text:
        raise PolicyError("the subject is empty")
    return (user(text), group(text))


def role_rules(subject: Subject, actions: Iterable[str], obj: str, allow: bool = True) -> tuple[Rule, ...]:
    """One rule per action: how a grant (subject → role on a scope) becomes rules."""
    return tuple(Rule(subject, action, obj, allow) for action in actions)


def check_action_pattern(pattern: str) -> str:
    """The pattern, if it is a known action or a glob matching at least one; else ``PolicyError``."""
    pattern = pattern.strip()
    if not pattern or not any(fnmatchcase(action, pattern) for action in ALL_ACTIONS):
        known = ", ".join(ALL_ACTIONS)
        raise PolicyError(f"unknown action {pattern!r} (known: {known}, or a glob such as *)")
    return pattern


def _action_patterns(resource: str, action: str) -> tuple[str, ...]:
    """The rule actions a ``p`` line's resource and action mean: ``logs, get`` is the ``logs`` action;
    under ``*`` a pattern matching ``get`` covers logs too, as Argo CD's ``*, get`` does."""
    if resource == LOGS_RESOURCE:
        if not fnmatchcase(GET, action.strip()):
            raise PolicyError(f"the logs resource has one action, get (got {action!r})")
        return (LOGS,)
    pattern = check_action_pattern(action)
    if resource == "*" and fnmatchcase(GET, pattern) and not fnmatchcase(LOGS, pattern):
        return (pattern, LOGS)
    return (pattern,)


def parse_policy(text: str, *, source: str = "policy") -> Policy:
    """Parse policy CSV; ``PolicyError`` names the line number and the problem."""
    built = _Builder()
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        fields = [f.strip() for f in next(csv.reader(io.StringIO(stripped), skipinitialspace=True))]
        where = f"{source} line {number}"
        try:
            _parse_line(fields, built)
        except PolicyError as error:
            raise PolicyError(f"{where}: {error}") from None
    return Policy(tuple(built.rules), tuple(built.bindings))


def _parse_line(fields: list[str], built: _Builder) -> None:
    kind = fields[0]
    if kind == "p":
        if len(fields) not in (5, 6):
            raise PolicyError(
                "a 'p' line has 5 or 6 fields (p, subject, resource, action, object[, effect]), "
                f"got {len(fields)}"
            )
        _, subject, resource, action, obj, *rest = fields
        effect = rest[0].lower() if rest else "allow"
        subjects = parse_subject(subject)
        if resource not in (RESOURCE, LOGS_RESOURCE, "*"):
            raise PolicyError(
                f"unknown resource {resource!r} (this dashboard knows {RESOURCE!r} and {LOGS_RESOURCE!r})"
            )
        if effect not in ("allow", "deny"):
            raise PolicyError(f"the effect must be 'allow' or 'deny', got {effect!r}")
        if not obj:
            raise PolicyError("the object is empty (use */*/* or cluster/namespace/name globs)")
        patterns = _action_patterns(resource, action)
        built.rules.extend(Rule(who, p, obj, effect == "allow") for who in subjects for p in patterns)
    elif kind == "g":
        if len(fields) != 3:
            raise PolicyError(f"a 'g' line has 3 fields (g, user-or-group, role:name), got {len(fields)}")
        _, member, target = fields
        if not member:
            raise PolicyError("the user or group is empty")
        if not target.startswith(ROLE_PREFIX) or len(target) == len(ROLE_PREFIX):
            raise PolicyError(f"{target!r} is not a role (roles are written role:<name>)")
        bound = role(target[len(ROLE_PREFIX) :])
        built.bindings.extend((who, bound) for who in parse_subject(member))
    elif kind in GUARD_KINDS:
        return  # a guard-rail rule: dashboard.guardrails.rules parses these lines
    else:
        raise PolicyError(
            f"a line starts with 'p' or 'g' (or a guard rail: {', '.join(GUARD_KINDS)}), not {kind!r}"
        )
