"""Guard-rail rules, their policy-file lines, and the decision for one action (pure, no Django).

The rules live in the RBAC policy file (``RBAC_POLICY_FILE``) beside its ``p`` and ``g`` lines, one rule a
line: ``<kind>, <actions>, <object>, <option>=<value>…``. ``<actions>`` is a space-separated list of action
names or globs, ``<object>`` a glob over ``cluster/namespace/rollout`` as in ``p`` lines, and every rule
may add ``selector=`` (Kubernetes label-selector equality syntax: ``team=billing,tier!=web,canary,!legacy``;
quote the field when it has commas)::

    approval, promote promote-full, */billing/*, count=1, approvers=role:admin role:operator, expires=4h
    freeze, promote promote-full skip-current-step resume retry, prod/*/*, name=Weekend freeze, \
        weekly=Fri 16:00 - Mon 08:00, tz=Europe/Berlin
    freeze, *, */*/*, name=Year end, from=2026-12-24 00:00, until=2027-01-04 08:00, tz=Europe/Berlin
    freeze, *, */*/*, name=Public holidays, holidays=2026-12-25 2026-12-26, tz=Europe/Berlin
    reason, promote, prod/*/*, pattern=CHG-[0-9]+, hint=a change id such as CHG-1234

*approval*: ``count`` approvals (default 1) from ``approvers`` (subjects as in ``p`` lines: ``role:``,
``group:``, ``user:`` or a bare user-or-group name), never the requester's own; the request expires after
``expires`` (``30m``, ``4h``, ``2d``; default 24h). When several rules match, the strictest wins: the
highest count, from the approvers of the rules asking for it, with the shortest expiry.
*freeze*: the listed actions are refused while the window is on; **abort and pause are never frozen** (a
line naming them is an error; ``*`` means every other action). *reason*: the action needs a reason; with
``pattern`` it must match it whole (a change or ticket id), and every matching rule's pattern must match.

``guard_for(rules, action, key, labels, now)`` says what stands between an action and its running: the
freeze that is on (and until when), the approvals it needs, the reason it asks for. The action service
enforces it and the rollout page's buttons say it, from this one answer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from fnmatch import fnmatchcase
from zoneinfo import ZoneInfo

from dashboard.access.policy import ACTIONS, PolicyError, Subject, parse_subject
from dashboard.guardrails import windows

KINDS = ("approval", "freeze", "reason")
NEVER_FROZEN = frozenset({"abort", "pause"})
DEFAULT_EXPIRY = timedelta(hours=24)
UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


@dataclass(frozen=True)
class Scope:
    object: str  # a glob over "cluster/namespace/rollout"
    selector: tuple[tuple[str, str, str], ...] = ()  # (label, "=" | "!=" | "exists" | "!exists", value)

    def covers(self, key: str, labels: Mapping[str, str]) -> bool:
        if not fnmatchcase(key, self.object):
            return False
        for label, op, value in self.selector:
            if op == "=" and labels.get(label) != value:
                return False
            if op == "!=" and labels.get(label) == value:
                return False
            if op == "exists" and label not in labels:
                return False
            if op == "!exists" and label in labels:
                return False
        return True

    def describe(self) -> str:
        if not self.selector:
            return self.object
        words = {"=": "{}={}", "!=": "{}!={}", "exists": "{}", "!exists": "!{}"}
        return f"{self.object} with labels " + ",".join(words[op].format(k, v) for k, op, v in self.selector)


@dataclass(frozen=True)
class ApprovalRule:
    actions: tuple[str, ...]
    scope: Scope
    count: int
    approvers: tuple[str, ...]  # as written: role:admin, group:sre, alice
    expires: timedelta = DEFAULT_EXPIRY


@dataclass(frozen=True)
class FreezeRule:
    name: str
    actions: tuple[str, ...]
    scope: Scope
    schedule: windows.Schedule
    zone: str
    text: str  # the schedule as written, for the rules page

    @property
    def tz(self) -> ZoneInfo:
        return ZoneInfo(self.zone)


@dataclass(frozen=True)
class ReasonRule:
    actions: tuple[str, ...]
    scope: Scope
    pattern: str = ""  # matched whole; "" = any non-empty text
    hint: str = ""


@dataclass(frozen=True)
class GuardRules:
    approvals: tuple[ApprovalRule, ...] = ()
    freezes: tuple[FreezeRule, ...] = ()
    reasons: tuple[ReasonRule, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.approvals or self.freezes or self.reasons)


# --- the decision --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Freeze:
    name: str
    until: datetime  # UTC
    zone: str

    def until_text(self, now: datetime) -> str:
        """``Mon 08:00 Europe/Berlin``; with the date when it is a week or more away."""
        local = self.until.astimezone(ZoneInfo(self.zone))
        shape = "%a %H:%M" if self.until - now < timedelta(days=6) else "%a %d %b %Y %H:%M"
        return f"{local.strftime(shape)} {self.zone}"


@dataclass(frozen=True)
class Approval:
    count: int
    approvers: tuple[str, ...]
    expires: timedelta


@dataclass(frozen=True)
class Guard:
    action: str
    freeze: Freeze | None = None
    approval: Approval | None = None
    reasons: tuple[ReasonRule, ...] = field(default=())

    @property
    def reason_required(self) -> bool:
        return bool(self.reasons)

    @property
    def reason_hint(self) -> str:
        hints = [r.hint or (f"text matching {r.pattern}" if r.pattern else "") for r in self.reasons]
        return "; ".join(h for h in hints if h) or "why you are doing this"

    def reason_problem(self, reason: str) -> str:
        """Why ``reason`` does not do for this action ("" when it does)."""
        text = reason.strip()
        if not self.reasons:
            return ""
        if not text:
            return f"{self.action} needs a reason here: {self.reason_hint}"
        for rule in self.reasons:
            if rule.pattern and not re.fullmatch(rule.pattern, text):
                return f"the reason must be {rule.hint or 'text matching ' + rule.pattern} (got {text!r})"
        return ""


def guard_for(rules: GuardRules, action: str, key: str, labels: Mapping[str, str], now: datetime) -> Guard:
    freeze = frozen_by(rules, action, key, labels, now)
    approvals = [r for r in rules.approvals if action in r.actions and r.scope.covers(key, labels)]
    approval = None
    if approvals:
        count = max(r.count for r in approvals)
        strictest = [r for r in approvals if r.count == count]
        approvers = tuple(dict.fromkeys(a for r in strictest for a in r.approvers))
        approval = Approval(count, approvers, min(r.expires for r in strictest))
    reasons = tuple(r for r in rules.reasons if action in r.actions and r.scope.covers(key, labels))
    return Guard(action, freeze, approval, reasons)


def frozen_by(
    rules: GuardRules, action: str, key: str, labels: Mapping[str, str], now: datetime
) -> Freeze | None:
    """The freeze on ``action`` at ``now`` (its name and when the run of windows it is in ends)."""
    if action in NEVER_FROZEN:
        return None
    applying = [r for r in rules.freezes if action in r.actions and r.scope.covers(key, labels)]
    on = [r for r in applying if r.schedule.span_at(now.astimezone(UTC), r.tz) is not None]
    if not on:
        return None
    span = windows.active_span([(r.schedule, r.tz) for r in applying], now)
    assert span is not None
    first = min(on, key=lambda r: (r.schedule.span_at(now.astimezone(UTC), r.tz) or span)[1])
    return Freeze(first.name, span[1], first.zone)


def may_approve(approval: Approval, subjects: Iterable[Subject]) -> bool:
    """Whether someone holding ``subjects`` (user, groups and every role held) is among the approvers."""
    held = set(subjects)
    return any(s in held for text in approval.approvers for s in parse_subject(text))


# --- the policy-file lines -----------------------------------------------------------------------------


def parse_rules(text: str, *, source: str = "policy") -> GuardRules:
    """The guard-rail lines of a policy file (``p`` and ``g`` lines are the RBAC parser's)."""
    import csv
    import io

    approvals: list[ApprovalRule] = []
    freezes: list[FreezeRule] = []
    reasons: list[ReasonRule] = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        fields = [f.strip() for f in next(csv.reader(io.StringIO(stripped), skipinitialspace=True))]
        if fields[0] not in KINDS:
            continue
        try:
            rule = _parse_line(fields)
        except (PolicyError, ValueError) as error:
            raise PolicyError(f"{source} line {number}: {error}") from None
        if isinstance(rule, ApprovalRule):
            approvals.append(rule)
        elif isinstance(rule, FreezeRule):
            freezes.append(rule)
        else:
            reasons.append(rule)
    return GuardRules(tuple(approvals), tuple(freezes), tuple(reasons))


def _parse_line(fields: Sequence[str]) -> ApprovalRule | FreezeRule | ReasonRule:
    kind = fields[0]
    if len(fields) < 3:
        raise PolicyError(
            f"a '{kind}' line is: {kind}, <actions>, <cluster/namespace/rollout>, option=value…"
        )
    options = _options(fields[3:])
    scope = Scope(fields[2] or "*", parse_selector(options.pop("selector", "")))
    actions = _actions(fields[1])
    if kind == "approval":
        rule: ApprovalRule | FreezeRule | ReasonRule = _approval(actions, scope, options)
    elif kind == "freeze":
        rule = _freeze(actions, scope, options)
    else:
        pattern = options.pop("pattern", "")
        try:
            re.compile(pattern)
        except re.error as error:
            raise PolicyError(f"pattern={pattern!r} is not a regular expression: {error}") from None
        rule = ReasonRule(actions, scope, pattern, options.pop("hint", ""))
    if options:
        raise PolicyError(f"unknown option {sorted(options)[0]!r} for a '{kind}' line")
    return rule


def _options(fields: Sequence[str]) -> dict[str, str]:
    options: dict[str, str] = {}
    for text in fields:
        name, sep, value = text.partition("=")
        if not sep or not name.strip():
            raise PolicyError(f"{text!r} is not option=value")
        if name.strip() in options:
            raise PolicyError(f"option {name.strip()!r} is given twice")
        options[name.strip()] = value.strip()
    return options


def _actions(text: str) -> tuple[str, ...]:
    names: list[str] = []
    for pattern in text.split():
        matched = [a for a in ACTIONS if fnmatchcase(a, pattern)]
        if not matched:
            raise PolicyError(f"unknown action {pattern!r} (known: {', '.join(ACTIONS)}, or a glob)")
        names.extend(a for a in matched if a not in names)
    if not names:
        raise PolicyError("list at least one action")
    return tuple(names)


def _approval(actions: tuple[str, ...], scope: Scope, options: dict[str, str]) -> ApprovalRule:
    count_text = options.pop("count", "1")
    if not count_text.isdigit() or int(count_text) < 1:
        raise PolicyError(f"count={count_text!r} must be a whole number of approvals, 1 or more")
    approvers = tuple(options.pop("approvers", "").split())
    if not approvers:
        raise PolicyError("approvers= names who may approve (role:…, group:…, user:… or a name)")
    for text in approvers:
        parse_subject(text)
    expires = parse_duration(options.pop("expires", "24h"))
    return ApprovalRule(actions, scope, int(count_text), approvers, expires)


def _freeze(actions: tuple[str, ...], scope: Scope, options: dict[str, str]) -> FreezeRule:
    never = sorted(NEVER_FROZEN & set(actions))
    explicit = [a for a in actions if a in never]
    if explicit and len(actions) != len(ACTIONS):
        verb = "is" if len(explicit) == 1 else "are"
        raise PolicyError(f"{' and '.join(explicit)} {verb} never frozen: leave them out of a freeze")
    actions = tuple(a for a in actions if a not in NEVER_FROZEN)
    name = options.pop("name", "")
    if not name:
        raise PolicyError("name= names the window (it is what a refused user reads)")
    zone_name = options.pop("tz", "")
    if not zone_name:
        raise PolicyError("tz= gives the window's IANA time zone, such as Europe/Berlin")
    windows.zone_named(zone_name)
    given = [k for k in ("weekly", "from", "holidays") if k in options]
    if len(given) != 1:
        raise PolicyError("a freeze has one of weekly=…, from=… until=…, or holidays=…")
    schedule: windows.Schedule
    if given[0] == "weekly":
        text = options.pop("weekly")
        schedule = windows.parse_weekly(text)
    elif given[0] == "from":
        begins, ends = options.pop("from"), options.pop("until", "")
        if not ends:
            raise PolicyError("a freeze with from= needs until=")
        schedule = windows.OneOff(windows.parse_local(begins, "from"), windows.parse_local(ends, "until"))
        if schedule.ends <= schedule.begins:
            raise PolicyError(f"until={ends!r} is not after from={begins!r}")
        text = f"{begins} – {ends}"
    else:
        text = options.pop("holidays")
        schedule = windows.Holidays(windows.parse_days(text))
    return FreezeRule(name, actions, scope, schedule, zone_name, f"{text} {zone_name}")


def parse_duration(text: str) -> timedelta:
    match = re.fullmatch(r"(\d+)([smhd])", text.strip())
    if not match or int(match.group(1)) == 0:
        raise PolicyError(f"expires={text!r} is not a duration such as 30m, 4h or 2d")
    return timedelta(seconds=int(match.group(1)) * UNITS[match.group(2)])


def parse_selector(text: str) -> tuple[tuple[str, str, str], ...]:
    terms = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if "!=" in part:
            label, value = part.split("!=", 1)
            terms.append((label.strip(), "!=", value.strip()))
        elif "=" in part:
            label, value = part.split("=", 1)
            terms.append((label.strip().rstrip("="), "=", value.strip()))
        elif part.startswith("!"):
            terms.append((part[1:].strip(), "!exists", ""))
        else:
            terms.append((part, "exists", ""))
        if not terms[-1][0]:
            raise PolicyError(f"selector term {part!r} names no label")
    return tuple(terms)
