"""``manage.py diagnose PATH… [--format json|text]``: findings from object dumps and watch recordings.

Dumps are diagnosed as one snapshot; ``.jsonl`` recordings are replayed and every finding raised on the way
is reported with when it cleared (``clearedAt``, null while still active), followed by the timeline of
raises and clears in ``text``. ``--format json`` prints a JSON list of Finding documents (DESIGN §3).
Unreadable input is reported on stderr naming the file, the rest is still diagnosed, and the exit
status is 1. Non-goals: talking to a cluster, performing the offered actions.
"""

from __future__ import annotations

import json
import sys
import textwrap
from argparse import ArgumentParser
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from dashboard.diagnose import Diagnosed, Diagnosis, diagnose_paths
from dashboard.domain.findings import Thresholds
from dashboard.domain.objects import parse_time, rfc3339

SEVERITY_MARKS = {"critical": "✖ CRITICAL", "warning": "⚠ WARNING", "info": "ℹ INFO"}


class Command(BaseCommand):
    help = "Print the findings for every Rollout in object dumps (YAML/JSON) and watch recordings (.jsonl)."
    requires_system_checks: list[str] = []  # reads files only: a review must work whatever else is configured

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("paths", nargs="+", metavar="PATH", help="dumps, recordings, or directories")
        parser.add_argument("--format", choices=("json", "text"), default="text", help="output format")
        parser.add_argument(
            "--now", metavar="RFC3339", help="judge dumps at this time (default: the newest time in them)"
        )
        parser.add_argument(
            "--pipeline",
            action="append",
            default=[],
            metavar="SHA=STATE",
            help="a commit's pipeline state (e.g. 9a2c7e5=failed); repeatable",
        )
        parser.add_argument("--cluster", default="", help="cluster name to report for dumps")

    def handle(self, *args: Any, **options: Any) -> None:
        now = _parse_now(options["now"])
        pipelines = _parse_pipelines(options["pipeline"])
        thresholds = Thresholds(stuck_at_step_zero_seconds=float(settings.STUCK_AT_STEP_ZERO_SECONDS))
        try:
            result = diagnose_paths(
                options["paths"], now=now, thresholds=thresholds, pipelines=pipelines,
                cluster=options["cluster"],
            )
        except RecursionError:  # a recording line nested beyond the JSON parser (dumps are checked first)
            self.stderr.write(f"error: {', '.join(options['paths'])}: nested too deeply to read")
            sys.exit(1)
        output = render_json(result) if options["format"] == "json" else render_text(result)
        self.stdout.write(output, ending="")
        for problem in result.errors:
            self.stderr.write(f"error: {problem}")
        if result.errors:
            sys.exit(1)


def _parse_now(value: str | None) -> datetime | None:
    if value is None:
        return None
    moment = parse_time(value)
    if moment is None:
        raise CommandError(f"--now: {value!r} is not an RFC 3339 time such as 2026-11-29T10:00:00Z")
    return moment


def _parse_pipelines(values: Sequence[str]) -> dict[str, str]:
    pipelines = {}
    for value in values:
        sha, sep, state = value.partition("=")
        if not sep or not sha.strip() or not state.strip():
            raise CommandError(f"--pipeline: expected SHA=STATE (e.g. 9a2c7e5=failed), got {value!r}")
        pipelines[sha.strip()] = state.strip()
    return pipelines


def _document(item: Diagnosed, recorded: bool) -> dict[str, Any]:
    document = item.finding.to_dict()
    if recorded:
        document["clearedAt"] = rfc3339(item.cleared_at)
    return document


def render_json(result: Diagnosis) -> str:
    documents = [_document(item, bool(item.source)) for item in result.findings]
    return json.dumps(documents, indent=2, ensure_ascii=False) + "\n"


def render_text(result: Diagnosis) -> str:
    lines: list[str] = []
    by_rollout: dict[tuple[str, str, str], list[Diagnosed]] = {}
    for item in result.findings:
        f = item.finding
        by_rollout.setdefault((f.cluster, f.namespace, f.rollout), []).append(item)
    for key in sorted(set(result.rollouts) | set(by_rollout)):
        cluster, namespace, name = key
        items = by_rollout.get(key, [])
        lines.append(f"{cluster + '/' if cluster else ''}{namespace}/{name}: {_count(items)}")
        for item in items:
            lines += _finding_lines(item)
        lines.append("")
    if not result.rollouts and not result.findings and not result.errors:
        lines.append("No Rollouts found.")  # with errors, they say why (on stderr), in one line each
    if result.events:
        lines.append("Timeline:")
        for event in result.events:
            data = event["data"]
            verb = "raised " if event["kind"] == "finding.raised" else "cleared"
            subject = f" ({data['subject']})" if data.get("subject") else ""
            lines.append(f"  {event['at']}  {verb}  {event['key']}  {data['code']}{subject}")
        lines.append("")
    return "\n".join(lines) + ("\n" if lines and lines[-1] != "" else "")


def _count(items: list[Diagnosed]) -> str:
    if not items:
        return "no findings"
    return f"{len(items)} finding{'s' if len(items) != 1 else ''}"


def _finding_lines(item: Diagnosed) -> list[str]:
    f = item.finding
    state = f"cleared {rfc3339(item.cleared_at)}" if item.cleared_at else "active" if item.source else ""
    head = f"  {SEVERITY_MARKS.get(f.severity, f.severity)}  {f.code}  since {rfc3339(f.since)}"
    lines = [head + (f"  ({state})" if state else ""), f"    {f.title}"]
    lines += textwrap.wrap(f.explanation, width=100, initial_indent="    ", subsequent_indent="    ")
    lines.append("    Evidence:")
    for key, value in f.evidence.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        lines.append(f"      {key}: {text}")
    if f.runbook:
        lines.append("    Runbook:")
        lines += [f"      $ {command}" for command in f.runbook]
    if f.action:
        lines.append(f"    Action offered: {f.action}")
    return lines
