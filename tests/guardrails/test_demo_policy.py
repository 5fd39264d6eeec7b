"""The demo ships guard rails on namespaces its scenarios use, and a freeze that switches on."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dashboard.demo import CLUSTER, demo_policy
from dashboard.guardrails.loader import current_rules
from dashboard.guardrails.rules import guard_for
from kubesim.scenarios.builtin import BUILTIN

NOW = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)


def test_the_demo_rules_guard_namespaces_the_demo_scenarios_use(tmp_path: Path, settings: Any) -> None:
    settings.RBAC_POLICY_FILE = ""
    path = demo_policy(str(tmp_path))
    assert path == settings.RBAC_POLICY_FILE
    namespaces = {r["namespace"]: s["name"] for s in BUILTIN for r in s.get("rollouts", [])}
    assert (
        namespaces["billing"] == "failed-analysis-abort" and namespaces["search"] == "paused-reads-degraded"
    )
    rules = current_rules()
    for namespace in ("billing", "search"):
        approval = guard_for(rules, "promote", f"{CLUSTER}/{namespace}/x", {}, NOW).approval
        assert approval is not None and approval.count == 1 and approval.approvers == ("role:admin",)
    assert guard_for(rules, "promote", f"{CLUSTER}/shop/checkout", {}, NOW).freeze is None


def test_uncommenting_the_demo_freeze_switches_it_on_for_promote_but_not_abort(
    tmp_path: Path, settings: Any
) -> None:
    import os

    settings.RBAC_POLICY_FILE = ""
    path = Path(demo_policy(str(tmp_path)))
    path.write_text(path.read_text().replace("# freeze, ", "freeze, "))
    os.utime(path, (3, 3))
    rules = current_rules()
    frozen = guard_for(rules, "promote", f"{CLUSTER}/shop/checkout", {}, NOW).freeze
    assert frozen is not None and frozen.name == "Demo change freeze"
    assert guard_for(rules, "abort", f"{CLUSTER}/shop/checkout", {}, NOW).freeze is None
