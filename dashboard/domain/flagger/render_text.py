"""A Canary as text in the style of ``kubectl argo rollouts get rollout``, for ``manage.py inspect``.

``render_canary`` prints the header fields (``%-17s`` labels), then the notes, gates, checks and events
as tabwriter-style tables.

Non-goals: colours, watch mode, matching any Flagger tool byte for byte (Flagger has no such view).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from ..objects import rfc3339
from .spec import API_VERSION, KIND
from .view import CanaryView


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], indent: str = "  ") -> str:
    """Columns padded by two spaces, like kubectl's tabwriter tables."""
    table = [list(header), *[list(r) for r in rows]]
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    lines = [
        indent + "  ".join(c.ljust(w) for c, w in zip(r[:-1], widths[:-1], strict=True)) + "  " + r[-1]
        for r in table
    ]
    return "\n".join(line.rstrip() for line in lines) + "\n"


def render_canary(view: CanaryView, now: datetime | None = None) -> str:
    """A Canary in the style of ``kubectl argo rollouts get rollout``: header fields, then sections."""

    def line(label: str, value: object) -> str:
        return f"{label:<17}{value}\n"

    out = line("Name:", view.name)
    out += line("Namespace:", view.namespace)
    out += line("Controller:", f"flagger ({KIND} {API_VERSION})")
    out += line("Status:", f"{view.icon} {view.status}" + (" (suspended)" if view.suspended else ""))
    out += line("Phase:", view.phase or "(none)")
    if view.message:
        out += line("Message:", view.message)
    out += line("Strategy:", f"{view.strategy} ({view.flagger_strategy}, provider {view.provider})")
    out += line("  Step:", view.step or "")
    out += line("  SetWeight:", "" if view.set_weight is None else view.set_weight)
    actual = "" if view.actual_weight is None else str(view.actual_weight)
    if view.weight_source and view.weight_source != "status.canaryWeight":
        actual += f" (from {view.weight_source})"
    out += line("  ActualWeight:", actual)
    out += line("  FailedChecks:", f"{view.failed_checks}/{view.threshold}")
    out += line("  Interval:", view.interval)
    images = view.images
    if images:
        out += line("Images:", _image_label(images[0]))
        for image in images[1:]:
            out += line("", _image_label(image))
    out += "Revisions:\n"
    out += line("  Applied:", view.last_applied_spec or "(none)")
    out += line("  Promoted:", view.last_promoted_spec or "(none)")
    out += line("Argo CD health:", f"{view.argocd_health['status']} ({view.argocd_health['message']})")
    if view.notes:
        out += "\nNotes (where the status misleads):\n"
        for note in view.notes:
            out += (
                f"  ⚠ {note.field}: {_show(note.status_value)} → {_show(note.value)} (from {note.source})\n"
            )
            out += f"    {note.text}\n"
    if view.gates:
        out += "\nGates:\n" + _table(
            ("NAME", "TYPE", "STATE", "WAITING FOR"),
            [(g.name, g.type, g.state, g.waiting_for) for g in view.gates],
        )
    if view.checks:
        out += "\nChecks:\n" + _table(
            ("NAME", "KIND", "THRESHOLD", "LAST", "RESULT"),
            [
                (c.name, f"{c.kind}/{c.type}", c.threshold or "-", c.last_value or "-", c.last_result or "-")
                for c in view.checks
            ],
        )
    if view.events:
        out += "\nEvents:\n" + _table(
            ("LAST SEEN", "TYPE", "COUNT", "MESSAGE"),
            [(rfc3339(e.last) or "-", e.type, str(e.count), e.message) for e in view.events],
        )
    return out


def _image_label(image: Mapping[str, Any]) -> str:
    tags = list(image.get("tags") or [])
    return f"{image['image']} ({', '.join(tags)})" if tags else str(image["image"])


def _show(value: Any) -> str:
    return "(none)" if value is None else str(value)
