"""The seeds' SEV-1 reproduced end to end on kubesim: raised, unwedged, cleared as the abort converges."""

from __future__ import annotations

from pathlib import Path

from dashboard.domain.findings import Finding, finding_changes
from kubesim.controller import actions
from tests.domain.findings.kubesim_runs import run

SCENARIO = str(Path(__file__).resolve().parents[2] / "data" / "diagnose" / "sev1-scenario.yaml")
CODES = {"rerender-race", "stuck-at-step-zero", "orphaned-canary-replicaset"}


def test_the_sev1_is_raised_unwedged_and_cleared_as_the_abort_converges() -> None:
    result = run(SCENARIO)
    events: list[dict] = []
    previous: list[Finding] = []

    def evaluate() -> list[Finding]:
        nonlocal previous
        current = result.findings("shop", "checkout")
        events.extend(finding_changes(previous, current, at=result.now()))
        previous = current
        return current

    for _ in range(80):  # 400 s: past the stuck-at-step-zero threshold (300 s after the re-render)
        result.sim.advance(5)
        evaluate()
    raised = {f.code: f for f in previous}
    assert raised.keys() >= CODES
    race, orphan = raised["rerender-race"], raised["orphaned-canary-replicaset"]
    assert race.action == "unwedge" and orphan.action == "unwedge"
    orphan_rs = orphan.subject
    assert race.evidence["orphanedReplicaSets"] == [orphan_rs]
    assert f"kubectl -n shop scale rs {orphan_rs} --replicas=0" in race.runbook
    assert orphan.runbook[0] == f"kubectl -n shop scale rs {orphan_rs} --replicas=0"
    assert raised["stuck-at-step-zero"].evidence["afterRerender"] is True

    # Unwedge: scale the orphaned canary to zero (as the runbook says) and abort the wedged update.
    result.store.patch("apps/replicasets", "shop", orphan_rs, {"spec": {"replicas": 0}}, manager="kubectl")
    actions.abort(result.store, "shop", "checkout")
    for _ in range(20):
        result.sim.advance(5)
        evaluate()
    assert not CODES & {f.code for f in previous}
    rs = result.store.get("apps/replicasets", "shop", f"checkout-{race.evidence['currentHash']}")
    assert rs["spec"]["replicas"] == 0  # the abort converged: the wedged canary is gone too

    timeline = [(e["kind"], e["data"]["code"]) for e in events if e["data"]["code"] in CODES]
    for code in CODES:
        assert ("finding.raised", code) in timeline and ("finding.cleared", code) in timeline
    assert timeline.index(("finding.raised", "rerender-race")) < timeline.index(
        ("finding.cleared", "rerender-race")
    )
