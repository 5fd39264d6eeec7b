"""Scenarios: the built-in ones and scenario files, loaded and validated into ``Scenario`` objects.

``load_scenarios(["healthy-canary", "./my.yaml"])`` accepts built-in names and paths to YAML/JSON files in
the format documented in ``kubesim.scenarios.schema`` (a sample is in ``kubesim/scenarios/examples/``). Any
problem raises ``ScenarioError`` with a message naming the file and field.

Non-goals: fetching scenarios from the network.
"""

from __future__ import annotations

import copy
from pathlib import Path

import yaml

from kubesim.scenarios.builtin import BUILTIN
from kubesim.scenarios.schema import Scenario, ScenarioError, parse_scenario

__all__ = ["Scenario", "ScenarioError", "builtin_names", "list_scenarios", "load_scenario", "load_scenarios"]


def builtin_names() -> list[str]:
    return [str(s["name"]) for s in BUILTIN]


def list_scenarios() -> list[tuple[str, str]]:
    return [(str(s["name"]), str(s["description"])) for s in BUILTIN]


def load_scenario(name_or_file: str) -> Scenario:
    for data in BUILTIN:
        if data["name"] == name_or_file:
            return parse_scenario(copy.deepcopy(data), f"built-in scenario {name_or_file}")
    path = Path(name_or_file)
    if path.suffix.lower() in (".yaml", ".yml", ".json") or path.exists():
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as error:
            raise ScenarioError(
                f"{name_or_file}: cannot read the scenario file: {error.strerror or error}"
            ) from None
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None)
            where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
            raise ScenarioError(
                f"{name_or_file}: not valid YAML{where}: {getattr(error, 'problem', None) or error}"
            ) from None
        return parse_scenario(data, name_or_file)
    raise ScenarioError(
        f"unknown scenario {name_or_file!r}: not a built-in scenario "
        f"({', '.join(builtin_names())}) and not a .yaml/.json file"
    )


def load_scenarios(names_or_files: list[str]) -> list[Scenario]:
    """Load several scenarios to run side by side; two that would collide are refused, naming both."""
    scenarios = [load_scenario(n) for n in names_or_files]
    seen: dict[tuple[str, str, str], str] = {}
    for scenario in scenarios:
        for key in _claims(scenario):
            if key in seen:
                what, namespace, name = key
                where = f"{namespace}/{name}" if namespace else name
                if seen[key] == scenario.name:
                    raise ScenarioError(f"scenario {scenario.name} is listed twice")
                raise ScenarioError(f"scenarios {seen[key]} and {scenario.name} both define {what} {where}")
        seen.update(dict.fromkeys(_claims(scenario), scenario.name))
    return scenarios


def _claims(scenario: Scenario) -> set[tuple[str, str, str]]:
    """(what, namespace, name) of everything the scenario creates or feeds, to find collisions."""
    claims = {("rollout", r.namespace, r.name) for r in scenario.rollouts}
    claims |= {("canary", c.namespace, c.name) for c in scenario.canaries}
    claims |= {("application", "argocd", a.name) for a in scenario.applications}
    claims |= {
        ("analysis template", str(t["metadata"].get("namespace", "")), str(t["metadata"]["name"]))
        for t in scenario.analysis_templates
    }
    # Metric series are looked up by (namespace, metric name): a second scenario's would replace them.
    claims |= {
        ("metric series", r.namespace, metric) for metric in scenario.metrics for r in scenario.rollouts
    }
    claims |= {
        (str(o["kind"]), str(o["metadata"].get("namespace", "")), str(o["metadata"]["name"]))
        for o in scenario.objects
    }
    if scenario.fleet is not None:
        claims.add(("fleet", "", "fleet-*"))
    return claims
