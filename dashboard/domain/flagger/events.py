"""Flagger's Kubernetes Events about a Canary, with Flagger's message formats parsed.

Flagger reports almost everything through Events (all with reason Synced). ``parse_event_message`` names
a message's kind (``metric-failed``, ``waiting-promotion`` …) and fields, and says when client-go's
aggregator folded older messages away; ``canary_events`` picks this Canary's Events (kind, name,
namespace, uid), oldest first. ``HALTS`` are the kinds that hold an analysis where it is.

Non-goals: what an event means for the view (``phase``, ``notes``, ``analysis`` decide), other kinds' Events.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ..objects import as_str, dig, dig_map, dig_str, opt_int, parse_time, rfc3339
from .spec import KIND

_COMBINED = "(combined from similar events): "


# Flagger's message formats (pkg/controller/scheduler*.go, pkg/canary/*_ready.go), most specific first.
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern))
    for kind, pattern in (
        ("waiting-rollout", r"^Halt (?P<canary>\S+) advancement waiting for approval (?P<hook>\S+)$"),
        (
            "waiting-promotion",
            r"^Halt (?P<canary>\S+) advancement waiting for promotion approval (?P<hook>\S+)$",
        ),
        (
            "waiting-traffic",
            r"^Halt (?P<canary>\S+) advancement waiting for traffic increase approval (?P<hook>\S+)$",
        ),
        (
            "pre-rollout-failed",
            r"^Halt (?P<canary>\S+) advancement pre-rollout check (?P<hook>\S+) failed (?P<error>.*)$",
        ),
        (
            "rollout-hook-failed",
            r"^Halt (?P<canary>\S+) advancement external check (?P<hook>\S+) failed (?P<error>.*)$",
        ),
        (
            "metric-failed",
            r"^Halt (?P<canary>\S+) advancement success rate (?P<value>[-\d.]+)% < (?P<threshold>\S+)%$",
        ),
        (
            "metric-failed",
            r"^Halt (?P<canary>\S+) advancement request duration (?P<value>\S+) > (?P<threshold>\S+)$",
        ),
        (
            "metric-failed",
            r"^Halt (?P<canary>\S+) advancement (?P<metric>\S+) "
            r"(?P<value>[-\d.eE+]+|NaN) (?P<op>[<>]) (?P<threshold>\S+)$",
        ),
        (
            "metric-no-values",
            r"^Halt advancement no values found for (?P<provider>\S+) metric (?P<metric>\S+)",
        ),
        ("metric-error", r"^(?:Metric query failed|Error checking metric providers)"),
        (
            "hook-passed",
            r"^(?P<hooktype>Pre-rollout|Confirm-rollout|Confirm-promotion|Post-rollout) "
            r"check (?P<hook>\S+) passed$",
        ),
        ("rollback-passed", r"^Rollback check (?P<hook>\S+) passed$"),
        ("rollback-idle", r"^Rollback hook (?P<hook>\S+) not signaling a rollback$"),
        ("post-rollout-failed", r"^Post-rollout hook (?P<hook>\S+) failed (?P<error>.*)$"),
        ("weight", r"^Advance (?P<canary>\S+) canary weight (?P<weight>\d+)$"),
        ("iteration", r"^Advance (?P<canary>\S+) canary iteration (?P<iteration>\d+)/(?P<of>\d+)$"),
        ("primary-weight", r"^Advance (?P<canary>\S+) primary weight (?P<weight>\d+)$"),
        (
            "rollback-threshold",
            r"^Rolling back (?P<canary>\S+) failed checks threshold reached (?P<checks>\d+)$",
        ),
        ("rollback-manual", r"^Rolling back (?P<canary>\S+) manual webhook invoked$"),
        ("rollback-deadline", r"^Rolling back (?P<canary>\S+) progress deadline exceeded (?P<error>.*)$"),
        ("failed", r"^Canary failed! Scaling down (?P<target>\S+)$"),
        ("promotion-failed", r"^Promotion of (?P<canary>\S+) failed, primary not ready: (?P<error>.*)$"),
        ("canary-not-ready", r"^canary (?:deployment|daemonset) (?P<target>\S+) not ready(?P<error>.*)$"),
        ("primary-not-ready", r"^(?P<target>\S+)-primary\.(?P<ns>\S+) not ready(?P<error>.*)$"),
        ("new-revision", r"^New revision detected! Scaling up (?P<target>\S+)$"),
        ("restarted", r"^New revision detected! Restarting analysis for (?P<target>\S+)$"),
        ("started", r"^Starting canary analysis for (?P<target>\S+)$"),
        ("copying", r"^Copying (?P<target>\S+) template spec to (?P<primary>\S+)$"),
        ("routing-primary", r"^Routing all traffic to primary$"),
        ("succeeded", r"^Promotion completed! Scaling down (?P<target>\S+)$"),
        ("skipped", r"^Promotion completed! Canary analysis was skipped for (?P<target>\S+)$"),
        ("initialized", r"^Initialization done! (?P<target>\S+)$"),
        ("suspended", r"^skipping canary run as object is suspended$"),
        ("terminating", r"^Terminating canary (?P<canary>\S+)$"),
    )
)
HALTS = frozenset(
    {
        "waiting-rollout",
        "waiting-promotion",
        "waiting-traffic",
        "pre-rollout-failed",
        "rollout-hook-failed",
        "metric-failed",
        "metric-no-values",
        "metric-error",
        "canary-not-ready",
        "primary-not-ready",
        "suspended",
    }
)


@dataclass(frozen=True)
class CanaryEvent:
    """One Kubernetes Event about the Canary, with Flagger's message parsed."""

    type: str  # Normal | Warning
    message: str
    kind: str  # what the message says, e.g. "metric-failed"; "" when not one of Flagger's formats
    fields: Mapping[str, str]
    count: int
    first: datetime | None
    last: datetime | None
    combined: bool  # client-go's aggregator rewrote it: older distinct messages were folded away

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "message": self.message,
            "kind": self.kind or None,
            "count": self.count,
            "firstTimestamp": rfc3339(self.first),
            "lastTimestamp": rfc3339(self.last),
            "combined": self.combined,
        }


def parse_event_message(message: str) -> tuple[str, dict[str, str], bool]:
    """(kind, fields, combined) for one of Flagger's event messages."""
    combined = message.startswith(_COMBINED)
    text = message[len(_COMBINED) :] if combined else message
    for kind, pattern in _PATTERNS:
        match = pattern.match(text)
        if match:
            return kind, {k: v for k, v in match.groupdict().items() if v is not None}, combined
    return "", {}, combined


def _event_time(event: Mapping[str, Any]) -> datetime | None:
    return (
        parse_time(event.get("lastTimestamp"))
        or parse_time(dig(event, "series", "lastObservedTime"))
        or parse_time(event.get("eventTime"))
        or parse_time(event.get("firstTimestamp"))
        or parse_time(dig(event, "metadata", "creationTimestamp"))
    )


def canary_events(canary: Mapping[str, Any], events: Iterable[Mapping[str, Any]]) -> tuple[CanaryEvent, ...]:
    """The Events whose involvedObject is this Canary, oldest first (ties keep their given order)."""
    name = dig_str(canary, "metadata", "name")
    namespace = dig_str(canary, "metadata", "namespace")
    uid = dig_str(canary, "metadata", "uid")
    picked: list[tuple[datetime, int, CanaryEvent]] = []
    epoch = datetime.min.replace(tzinfo=UTC)
    for index, event in enumerate(events):
        if not isinstance(event, Mapping):
            continue
        involved = dig_map(event, "involvedObject") or dig_map(event, "regarding")
        if as_str(involved.get("kind")) != KIND or as_str(involved.get("name")) != name:
            continue
        event_ns = as_str(involved.get("namespace")) or dig_str(event, "metadata", "namespace")
        if namespace and event_ns and event_ns != namespace:
            continue
        event_uid = as_str(involved.get("uid"))
        if uid and event_uid and event_uid != uid:
            continue  # an event about an earlier Canary of the same name
        message = as_str(event.get("message")) or as_str(event.get("note"))
        kind, fields, combined = parse_event_message(message)
        last = _event_time(event)
        first = parse_time(event.get("firstTimestamp")) or last
        count = opt_int(event.get("count")) or opt_int(dig(event, "series", "count")) or 1
        item = CanaryEvent(
            as_str(event.get("type"), "Normal"), message, kind, fields, count, first, last, combined
        )
        picked.append((last or epoch, index, item))
    picked.sort(key=lambda entry: (entry[0], entry[1]))
    return tuple(item for _, _, item in picked)
