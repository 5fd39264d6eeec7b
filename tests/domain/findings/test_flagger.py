"""A failed Flagger canary has its finding and the failed checks it really had (issue 16 §6, §10)."""

from __future__ import annotations

from dashboard.domain.attention import attention
from dashboard.domain.flagger import canary_view
from dashboard.web.canary import present_canary
from tests.flagger.test_simulation import Run


def test_a_failed_canary_raises_analysis_failed_with_the_checks_before_the_reset() -> None:
    run = Run("flagger-failed")
    canary = run.until(140, "frontend")
    view = canary_view(canary, events=run.events(), now=run.clock.now(), cluster="kubesim").to_dict()
    assert canary["status"]["failedChecks"] == 0  # what Flagger's status says after the rollback
    [finding] = view["findings"]
    assert (finding["code"], finding["severity"]) == ("analysis-failed", "critical")
    assert finding["evidence"]["failedChecks"] == 5
    page = present_canary(view, run.clock.now())
    assert page["header"]["failedChecks"] == 5
    assert page["findings"]
    assert attention(view)["attention"] == "critical"
    assert attention(view)["reason"] == finding["title"]


def test_a_canary_that_succeeds_has_no_finding() -> None:
    run = Run("flagger-canary")
    canary = run.until(160, "podinfo")
    assert canary["status"]["phase"] == "Succeeded"
    view = canary_view(canary, events=run.events(), now=run.clock.now()).to_dict()
    assert view["findings"] == []


def test_a_canary_waiting_for_approval_is_waiting_for_promotion_without_findings() -> None:
    run = Run("flagger-waiting-approval")
    canary = run.until(120, "backend")
    view = canary_view(canary, events=run.events(), now=run.clock.now()).to_dict()
    assert (view["findings"], attention(view)["attention"]) == ([], "waiting")
