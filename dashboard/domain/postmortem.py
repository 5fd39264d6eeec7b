"""A release's post-mortem, as JSON and Markdown, from what the history recorded (pure, no I/O).

``postmortem(key, detail, chain, ...)`` reads the same data the release page shows — the release, its
recorded timeline events merged with the audit's user actions (``dashboard.web.data.release_detail_sync``,
which also brings in the release it superseded, so a re-render race shows both renders and the hash
change) and the GitOps chain behind it — and returns one document: a summary, the renders (each new pod
template: a ``release.started``), hash changes with the step reset, steps and weights, analysis
measurements against their conditions, findings with their evidence, every user action (who, why, outcome),
approvals (promotions past a pause), the Kubernetes Events, and the whole timeline. Every time is given in
UTC and in the reader's time zone; links lead back to the pages. ``to_markdown`` renders that document
for a post-mortem write-up; every value from a cluster, a webhook or a user is escaped so it reads as
text wherever the Markdown is rendered.

Non-goals: reading the database or the clock (the callers pass ``detail`` and ``generated_at``), judging
the release (the findings did), prose beyond what the data says.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

SCHEMA = "rollouts-ui/postmortem/v1"

_SECTIONS = {
    "release.started": "render",
    "release.rerendered": "hash-change",
    "release.superseded": "render",
    "release.aborted": "outcome",
    "release.promoted": "approval",
    "release.fully_promoted": "outcome",
    "step.changed": "step",
    "weight.changed": "weight",
    "pause.started": "step",
    "pause.ended": "step",
    "analysis.started": "analysis",
    "analysis.measurement": "analysis",
    "analysis.finished": "analysis",
    "phase.changed": "phase",
    "finding.raised": "finding",
    "finding.cleared": "finding",
    "kube.event": "kube-event",
    "action": "action",
}


class BadTimeZone(ValueError):
    """The time zone is not an IANA name this system knows."""


def time_zone(name: str | None) -> ZoneInfo:
    """The reader's zone (``UTC`` when none is given); ``BadTimeZone`` names a bad one."""
    try:
        return ZoneInfo(name or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        raise BadTimeZone(f"unknown time zone {name!r} (use an IANA name such as Europe/Berlin)") from None


def rollout_path(key: str) -> str:
    return "/rollouts/" + "/".join(quote(p, safe="") for p in key.split("/", 2)) + "/"


def postmortem(
    key: str,
    detail: Mapping[str, Any],
    chain: Mapping[str, Any] | None,
    *,
    generated_at: datetime,
    zone: ZoneInfo,
    base_url: str = "",
) -> dict[str, Any]:
    """The post-mortem document of the release in ``detail`` (see the module docstring)."""
    release = dict(detail.get("release") or {})
    pod_hash = str(release.get("podHash") or "")
    base = base_url.rstrip("/")
    page = rollout_path(key)
    links = {
        "rollout": base + page,
        "history": base + page + "history/",
        "release": base + page + "releases/" + quote(pod_hash, safe="") + "/",
    }
    events = [e for e in detail.get("events") or [] if isinstance(e, Mapping)]
    timeline = [_entry(e, zone) for e in events]
    renders = [t for t in timeline if t["kind"] == "release.started"]
    document: dict[str, Any] = {
        "schema": SCHEMA,
        "rollout": dict(zip(("cluster", "namespace", "name"), key.split("/", 2), strict=True)) | {"key": key},
        "release": release
        | {
            "startedAtLocal": _local(release.get("startedAt"), zone),
            "endedAtLocal": _local(release.get("endedAt"), zone),
            "previousPodHash": detail.get("previousPodHash"),
            "stablePodHash": detail.get("stable"),
        },
        "generatedAt": _utc(generated_at),
        "timeZone": zone.key,
        "links": links,
        "chain": _chain(chain),
        "renders": renders,
        "hashChanges": [t for t in timeline if t["kind"] == "release.rerendered"],
        "stepResets": _step_resets(timeline),
        "steps": [t for t in timeline if t["section"] == "step"],
        "weights": [t for t in timeline if t["section"] == "weight"],
        "analysis": [t for t in timeline if t["section"] == "analysis"],
        "findings": [t for t in timeline if t["section"] == "finding"],
        "actions": [t for t in timeline if t["kind"] == "action"],
        "approvals": [
            t
            for t in timeline
            if t["kind"] == "release.promoted"
            or (
                t["kind"] == "action"
                and t["data"].get("action") in ("promote", "promote-full")
                and t["data"].get("outcome") == "done"
            )
        ],
        "kubeEvents": [t for t in timeline if t["kind"] == "kube.event"],
        "timeline": timeline,
    }
    document["summary"] = _summary(document)
    return document


def _step_resets(timeline: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Every time the step index went back: within a release (a retry, a restart), or across a hash change
    (the re-render race: the new revision starts again at step 0)."""
    resets = []
    for entry in timeline:
        data = entry["data"]
        if entry["kind"] == "step.changed" and _int(data.get("toIndex")) < _int(data.get("fromIndex")):
            resets.append(dict(entry))
        elif entry["kind"] == "release.rerendered":
            resets.append(
                dict(entry)
                | {
                    "text": f"Step index went back from {data.get('previousStepIndex')} to 0: release "
                    f"{data.get('previousPodHash')} was replaced by {entry['podHash']} mid-rollout"
                }
            )
    return resets


def _entry(event: Mapping[str, Any], zone: ZoneInfo) -> dict[str, Any]:
    kind = str(event.get("kind") or "")
    data = dict(event.get("data") or {}) if isinstance(event.get("data"), Mapping) else {}
    return {
        "at": _utc_text(event.get("at")),
        "atLocal": _local(event.get("at"), zone),
        "kind": kind,
        "section": _SECTIONS.get(kind, "other"),
        "podHash": str(event.get("podHash") or ""),
        "title": str(event.get("title") or ""),
        "text": _text(kind, str(event.get("title") or ""), data),
        "data": data,
    }


def _text(kind: str, title: str, data: Mapping[str, Any]) -> str:
    """One line saying what happened, with the facts the recorded event carries."""
    if kind == "release.started":
        images = ", ".join(str(i) for i in data.get("images") or [])
        return (
            title
            + (f"; images {images}" if images else "")
            + (f"; after {data['previousPodHash']}" if data.get("previousPodHash") else "")
        )
    if kind == "analysis.measurement":
        parts = []
        for metric in data.get("metrics") or []:
            if not isinstance(metric, Mapping):
                continue
            condition = metric.get("successCondition") or metric.get("failureCondition")
            against = "success when " if metric.get("successCondition") else "failure when "
            parts.append(
                f"{metric.get('metric')} = {metric.get('value')} ({metric.get('phase')})"
                + (f", {against}{condition}" if condition else "")
            )
        return title + (": " + "; ".join(parts) if parts else "")
    if kind == "finding.raised":
        evidence = data.get("evidence")
        shown = ""
        if isinstance(evidence, Mapping) and evidence:
            shown = "; evidence: " + ", ".join(f"{k}={_short(v)}" for k, v in list(evidence.items())[:8])
        return (
            f"[{data.get('severity') or 'info'}] {title}"
            + (f" — {data['explanation']}" if data.get("explanation") else "")
            + shown
        )
    if kind == "action":
        why = data.get("reason") or data.get("detail") or ""
        return f"{data.get('actor')} asked {data.get('action')}: {data.get('outcome')}" + (
            f" ({why})" if why else ""
        )
    if kind == "kube.event":
        return f"{data.get('type') or 'Normal'} {title}"
    return title


def _summary(document: Mapping[str, Any]) -> list[str]:
    release = document["release"]
    reached, count = release.get("stepsReached"), release.get("stepCount")
    lines = [
        f"Release {release.get('podHash')} (revision {release.get('revision')}) of "
        f"{document['rollout']['key']}: {release.get('outcome')}, {reached} of {count} steps reached.",
        f"Started {release.get('startedAt')} ({release.get('startedAtLocal')} {document['timeZone']})"
        + (f", ended {release.get('endedAt')}" if release.get("endedAt") else ", still running")
        + ".",
    ]
    if release.get("images"):
        lines.append("Images: " + ", ".join(str(i) for i in release["images"]) + ".")
    if len(document["renders"]) > 1:
        lines.append(
            f"Rendered {len(document['renders'])} times: "
            + " → ".join(r["podHash"] for r in document["renders"])
            + "."
        )
    for change in document["hashChanges"]:
        lines.append(change["text"] + ".")
    analysis_failed = [a for a in document["analysis"] if a["kind"] == "analysis.finished"]
    for finished in analysis_failed:
        lines.append(finished["text"] + ".")
    if document["actions"]:
        lines.append(
            f"{len(document['actions'])} user action(s): "
            + ", ".join(a["text"] for a in document["actions"])
            + "."
        )
    return lines


def _chain(chain: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if not isinstance(chain, Mapping):
        return None
    return {
        stage: dict(chain[stage])
        for stage in ("merge", "commit", "pipeline", "sync")
        if isinstance(chain.get(stage), Mapping)
    }


# --- Markdown -------------------------------------------------------------------------------------------


def to_markdown(document: Mapping[str, Any]) -> str:
    """The post-mortem as Markdown: summary, chain, then one section per kind of fact, then the timeline."""
    rollout, release, zone = document["rollout"], document["release"], document["timeZone"]
    links = document["links"]
    started = f"{_md(release.get('startedAt'))} UTC · {_md(release.get('startedAtLocal'))} {_md(zone)}"
    out = [
        f"# Post-mortem: {_md(rollout['key'])} release {_md(release.get('podHash'))}",
        "",
        f"Generated {document['generatedAt']} · times in UTC and {_md(zone)} · "
        f"[release page]({_url(links['release'])}) · [history]({_url(links['history'])}) · "
        f"[rollout]({_url(links['rollout'])})",
        "",
        "## Summary",
        "",
        *[f"- {_md(line)}" for line in document["summary"]],
        "",
        "| Field | Value |",
        "|---|---|",
        f"| Outcome | {_md(release.get('outcome'))} |",
        f"| Revision | {_md(release.get('revision'))} |",
        f"| Started | {started} |",
        f"| Ended | {_md(release.get('endedAt') or '—')} |",
        f"| Images | {_md(', '.join(str(i) for i in release.get('images') or []) or '—')} |",
        f"| Git revision | {_md(release.get('gitRevision') or '—')} |",
        f"| Superseded release | {_md(release.get('previousPodHash') or '—')} |",
        f"| Stable before | {_md(release.get('stablePodHash') or '—')} |",
        "",
    ]
    chain = document.get("chain")
    if chain:
        out += ["## Commit, sync and renders", "", "| Stage | What was seen |", "|---|---|"]
        for stage, facts in chain.items():
            shown = (
                facts.get("reason")
                if not facts.get("observed")
                else ", ".join(
                    f"{k}={_short(v)}"
                    for k, v in facts.items()
                    if k not in ("observed",) and v not in (None, "")
                )
            )
            out.append(f"| {_md(stage)} | {_md(shown)} |")
        out.append("")
    sections = (
        ("Renders", "renders"),
        ("Hash changes", "hashChanges"),
        ("Step resets", "stepResets"),
        ("Steps and pauses", "steps"),
        ("Weights", "weights"),
        ("Analysis measurements", "analysis"),
        ("Findings", "findings"),
        ("Actions (who, why, outcome)", "actions"),
        ("Approvals", "approvals"),
        ("Kubernetes Events", "kubeEvents"),
    )
    for heading, field in sections:
        entries = document.get(field) or []
        out += [f"## {heading}", ""]
        out += _table(entries, zone) if entries else ["None recorded.", ""]
    out += ["## Timeline", ""]
    out += _table(document["timeline"], zone, with_kind=True)
    return "\n".join(out).rstrip() + "\n"


def _table(entries: Sequence[Mapping[str, Any]], zone: str, *, with_kind: bool = False) -> list[str]:
    head = f"| UTC | {_md(zone)} |" + (" Kind |" if with_kind else "") + " Release | What happened |"
    rule = "|---|---|" + ("---|" if with_kind else "") + "---|---|"
    rows = [
        f"| {_md(e['at'])} | {_md(e['atLocal'])} |"
        + (f" {_md(e['kind'])} |" if with_kind else "")
        + f" {_md(e['podHash'] or '—')} | {_md(e['text'])} |"
        for e in entries
    ]
    return [head, rule, *rows, ""]


_MD_SPECIAL = re.compile(r"([\\`*_\[\]|#])")


def _md(value: object) -> str:
    """Text for a Markdown table cell or line: one line, Markdown's specials escaped, no raw HTML."""
    text = " ".join(str("" if value is None else value).split())
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_SPECIAL.sub(r"\\\1", text)


def _url(value: str) -> str:
    """A link target: only http(s) or site paths, with characters that would end the link escaped."""
    if not (value.startswith(("http://", "https://", "/"))):
        return "#"
    return (
        value.replace(" ", "%20")
        .replace("(", "%28")
        .replace(")", "%29")
        .replace("<", "%3C")
        .replace(">", "%3E")
    )


def _short(value: object) -> str:
    text = str(value)
    return text if len(text) <= 80 else text[:77] + "…"


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _parse(value: object) -> datetime | None:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _utc(moment: datetime) -> str:
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _utc_text(value: object) -> str:
    moment = _parse(value)
    return _utc(moment) if moment else ""


def _local(value: object, zone: ZoneInfo) -> str:
    moment = _parse(value)
    return moment.astimezone(zone).strftime("%Y-%m-%d %H:%M:%S %Z") if moment else ""
