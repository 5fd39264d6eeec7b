"""``manage.py inspect PATH…``: print Rollout views from object dumps, as JSON or as kubectl's text.

Reads files or directories of Kubernetes objects, builds every Rollout's view with the pure domain
and prints it: ``--format text`` is byte-for-byte ``kubectl argo rollouts get rollout NAME --no-color``,
``--format json`` the RolloutView document. ``--experiment NAME`` prints an Experiment the way
``get experiment`` does. Unreadable input (missing, binary, empty, truncated, too deeply nested) is
reported on stderr, one line naming file and cause, the rest is still printed,
and the exit status is 1. Non-goals: talking to a cluster, findings.
"""

from __future__ import annotations

import json
import sys
from argparse import ArgumentParser
from collections import defaultdict
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from dashboard.domain import rollout_views
from dashboard.domain.experiments import experiment_view
from dashboard.domain.flagger import canary_views, render_canary
from dashboard.domain.objects import dig_str, parse_time
from dashboard.domain.render_text import render_experiment, render_rollout
from dashboard.kube.loading import LoadedObject, load_paths


class Command(BaseCommand):
    help = "Print the view of every Rollout found in files or directories of Kubernetes objects."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("paths", nargs="+", metavar="PATH", help="YAML/JSON files or directories")
        parser.add_argument("--rollout", metavar="NAME", help="print only the Rollout with this name")
        parser.add_argument("--experiment", metavar="NAME", help="print this Experiment instead of Rollouts")
        parser.add_argument("--format", choices=("json", "text"), default="text", help="output format")
        parser.add_argument("--now", metavar="RFC3339", help="the time to compute ages and countdowns at")

    def handle(self, *args: Any, **options: Any) -> None:
        now = _parse_now(options["now"])
        loaded = load_paths(options["paths"])
        problems = [str(error) for error in loaded.errors]
        problems.extend(_status_problems(loaded.objects))
        objects = [item.object for item in loaded.objects]

        try:
            if options["experiment"]:
                output = _experiments(objects, options["experiment"], options["format"], now)
            else:
                output = _rollouts(objects, options["rollout"], options["format"], now)
        except CommandError:
            if not loaded.errors:
                raise
            output = ""  # the input could not be read: that is the error to show, not "nothing found"

        if output:
            self.stdout.write(output, ending="")
        for problem in problems:
            self.stderr.write(f"error: {problem}")
        if problems:
            sys.exit(1)


def _parse_now(value: str | None) -> datetime:
    if value is None:
        return datetime.now(UTC)
    moment = parse_time(value)
    if moment is None:
        raise CommandError(f"--now must be an RFC3339 time such as 2026-11-29T10:00:00Z, not {value!r}")
    return moment


def _status_problems(objects: tuple[LoadedObject, ...]) -> list[str]:
    """A Rollout without status is still shown (everything reads as empty) but is reported."""
    return [
        f"{item.where}: Rollout {dig_str(item.object, 'metadata', 'name') or '(unnamed)'} has no status"
        for item in objects
        if item.object.get("kind") == "Rollout" and not isinstance(item.object.get("status"), Mapping)
    ]


def _rollouts(objects: list[Mapping[str, Any]], name: str | None, fmt: str, now: datetime) -> str:
    views = rollout_views(objects, now=now)
    canaries = canary_views(objects, now=now)  # Flagger Canaries are shown beside Rollouts
    if name is not None:
        views = [view for view in views if view.name == name]
        canaries = [view for view in canaries if view.name == name]
        if not views and not canaries:
            raise CommandError(f"no Rollout named {name!r} (nor a Canary) in the given paths")
    if not views and not canaries:
        raise CommandError("no Rollout found in the given paths (nor a Canary)")
    if fmt == "json":
        documents = [view.to_dict() for view in views] + [view.to_dict() for view in canaries]
        return _json(documents[0] if len(documents) == 1 else documents)
    texts = [render_rollout(view) for view in views] + [render_canary(view, now) for view in canaries]
    return "\n".join(texts)


def _experiments(objects: list[Mapping[str, Any]], name: str, fmt: str, now: datetime) -> str:
    by_namespace: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for obj in objects:
        by_namespace[(dig_str(obj, "metadata", "namespace"), str(obj.get("kind")))].append(obj)
    views = [
        experiment_view(
            exp,
            by_namespace[(namespace, "ReplicaSet")],
            by_namespace[(namespace, "AnalysisRun")],
            by_namespace[(namespace, "Pod")],
            now,
        )
        for exp in objects
        if exp.get("kind") == "Experiment" and dig_str(exp, "metadata", "name") == name
        for namespace in [dig_str(exp, "metadata", "namespace")]
    ]
    if not views:
        raise CommandError(f"no Experiment named {name!r} in the given paths")
    if fmt == "json":
        documents = [view.to_dict() for view in views]
        return _json(documents[0] if len(documents) == 1 else documents)
    return "\n".join(render_experiment(view) for view in views)


def _json(document: Any) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
