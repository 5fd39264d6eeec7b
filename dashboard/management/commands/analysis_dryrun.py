"""``python manage.py analysis-dryrun TEMPLATE.yaml``: what verdict would this AnalysisTemplate give now?

Evaluates every Prometheus metric of an AnalysisTemplate (or ClusterAnalysisTemplate) once, against the stable
version's current data, with the same evaluator kubesim's AnalysisRuns use, and prints each metric's value,
phase and the traps it found (an Error that would block every rollout, a query matching nothing, conditions
that could never fail). Exit status: 0 when the verdict is Successful, 1 otherwise, 2 for bad input.

The command is ``analysis_dryrun`` (a Python module name); ``analysis-dryrun.py`` beside it re-exports it
so the hyphenated name from the issue works too — Django finds commands by file name and imports them with
``importlib``, which accepts the hyphen.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import yaml
from django.core.management.base import BaseCommand, CommandError, CommandParser

from dashboard.metrics.client import PrometheusClient
from dashboard.metrics.config import MetricsConfigError, from_settings
from dashboard.metrics.dryrun import DryRun, run_dry_run

TEMPLATE_KINDS = ("AnalysisTemplate", "ClusterAnalysisTemplate")


def load_template(path: str, name: str | None) -> dict[str, Any]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise CommandError(f"{path}: cannot read: {error.strerror or error}", returncode=2) from None
    try:
        docs = [d for d in yaml.safe_load_all(text) if d]
    except yaml.YAMLError as error:
        raise CommandError(
            f"{path}: not valid YAML: {getattr(error, 'problem', None) or error}", returncode=2
        ) from None
    items: list[Any] = []
    for doc in docs:
        items.extend(doc.get("items") or [] if isinstance(doc, dict) and doc.get("kind") == "List" else [doc])
    templates = [d for d in items if isinstance(d, dict) and d.get("kind") in TEMPLATE_KINDS]
    if name:
        templates = [t for t in templates if (t.get("metadata") or {}).get("name") == name]
    if not templates:
        what = f"named {name!r} " if name else ""
        raise CommandError(f"{path}: no AnalysisTemplate {what}found", returncode=2)
    if len(templates) > 1:
        names = ", ".join(str((t.get("metadata") or {}).get("name")) for t in templates)
        raise CommandError(f"{path}: several templates ({names}); choose one with --name", returncode=2)
    metrics = (templates[0].get("spec") or {}).get("metrics")
    if not isinstance(metrics, list) or not metrics:
        raise CommandError(f"{path}: the template has no spec.metrics", returncode=2)
    return templates[0]


def parse_args(pairs: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise CommandError(f"--arg {pair!r}: expected NAME=VALUE", returncode=2)
        out[name] = value
    return out


def render_text(template: str, result: DryRun) -> str:
    lines = [
        f"AnalysisTemplate {template} against {result.prometheus}"
        + (f" (stable pod-template-hash {result.stable_hash})" if result.stable_hash else "")
    ]
    width = max((len(m.name) for m in result.metrics), default=4)
    for m in result.metrics:
        condition = " / ".join(c for c in (m.success_condition, m.failure_condition) if c) or "(no condition)"
        lines.append(f"  {m.name:<{width}}  {m.phase:<12} {m.value or '-':<14} {condition}")
        if m.message:
            lines.append(f"  {'':<{width}}  message: {m.message}")
        lines.extend(f"  {'':<{width}}  ! {problem}" for problem in m.problems)
    lines.append(f"Verdict now: {result.verdict}")
    return "\n".join(lines)


class Command(BaseCommand):
    help = "Dry-run an AnalysisTemplate's Prometheus queries and conditions against the stable version now."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("template", help="YAML/JSON file holding the AnalysisTemplate")
        parser.add_argument("--name", help="the template's name, when the file holds several")
        parser.add_argument("--arg", action="append", default=[], metavar="NAME=VALUE", help="argument value")
        parser.add_argument(
            "--stable-hash", help="the stable ReplicaSet's pod-template-hash (for podTemplateHashValue args)"
        )
        where = parser.add_mutually_exclusive_group()
        where.add_argument("--prometheus", metavar="URL", help="Prometheus base URL")
        where.add_argument("--cluster", help="use this cluster's Prometheus from PROMETHEUS_URLS")
        parser.add_argument("--timeout", type=float, default=None, help="seconds per query")
        parser.add_argument("--format", choices=("text", "json"), default="text")

    def handle(self, *args: Any, **options: Any) -> None:
        template = load_template(options["template"], options.get("name"))
        values = parse_args(options["arg"])
        spec = template.get("spec") or {}
        template_args = [dict(a) for a in spec.get("args") or [] if isinstance(a, dict)]
        known = {str(a.get("name")) for a in template_args}
        unknown = sorted(set(values) - known)
        if unknown:
            raise CommandError(f"--arg {', '.join(unknown)}: the template has no such argument", returncode=2)
        for arg in template_args:
            if str(arg.get("name")) in values:
                arg.pop("valueFrom", None)
                arg["value"] = values[str(arg["name"])]
        try:
            config = from_settings()
        except MetricsConfigError as error:
            raise CommandError(str(error), returncode=2) from None
        url = options.get("prometheus") or config.url_for(options.get("cluster") or "")
        if not url:
            raise CommandError(
                "no Prometheus: give --prometheus URL, or --cluster NAME with PROMETHEUS_URLS set",
                returncode=2,
            )
        client = PrometheusClient(url, options.get("timeout") or config.timeout)
        result = asyncio.run(
            run_dry_run(client, spec["metrics"], template_args, stable_hash=options.get("stable_hash"))
        )
        name = str((template.get("metadata") or {}).get("name", "?"))
        if options["format"] == "json":
            self.stdout.write(json.dumps({"template": name, **result.to_dict()}, indent=2))
        else:
            self.stdout.write(render_text(name, result))
        if result.verdict != "Successful":
            raise SystemExit(1)
