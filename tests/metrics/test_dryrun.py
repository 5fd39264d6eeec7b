"""The dry run's judgement of one metric (pure): verdicts, empty results, conditions that cannot fail."""

from __future__ import annotations

from dashboard.domain.analysis_eval import QueryAnswer
from dashboard.metrics.client import ERROR, OK, UNREACHABLE, Outcome
from dashboard.metrics.dryrun import can_fail, dry_run_verdict, judge_metric, stable_args


def _metric(success: str = "result[0] <= 0.05", failure: str = "") -> dict:
    return {
        "name": "m",
        "successCondition": success,
        "failureCondition": failure,
        "provider": {"prometheus": {"query": "q"}},
    }


def test_a_good_metric_is_successful_with_its_value() -> None:
    verdict = judge_metric(_metric(), Outcome(OK, QueryAnswer([0.01], "[0.01]", "vector")))
    assert (verdict.phase, verdict.value, verdict.problems) == ("Successful", "[0.01]", [])


def test_a_broken_query_is_an_error_that_would_block_every_rollout() -> None:
    verdict = judge_metric(_metric(), Outcome(ERROR, message="bad_data: parse error"))
    assert verdict.phase == "Error" and "block every rollout" in verdict.problems[0]


def test_an_empty_result_is_named() -> None:
    verdict = judge_metric(_metric(), Outcome(OK, QueryAnswer([], "[]", "vector")))
    assert verdict.phase == "Error" and "matches nothing" in verdict.problems[0]


def test_a_condition_that_cannot_fail_is_named() -> None:
    verdict = judge_metric(
        _metric("result[0] >= 0 || result[0] < 0 || isNaN(result[0])"),
        Outcome(OK, QueryAnswer([0.01], "[0.01]", "vector")),
    )
    assert verdict.phase == "Successful" and "can never fail" in verdict.problems[-1]
    assert can_fail("result[0] <= 0.05", "", "vector") and not can_fail("true", "", "vector")


def test_unreachable_prometheus_gives_no_verdict_but_says_why() -> None:
    verdict = judge_metric(_metric(), Outcome(UNREACHABLE, message="Prometheus at x is unreachable"))
    assert verdict.phase == "Error" and "unreachable" in verdict.problems[0]


def test_the_verdict_is_the_worst_metric_in_argo_order() -> None:
    ok = judge_metric(_metric(), Outcome(OK, QueryAnswer([0.01], "[0.01]", "vector")))
    bad = judge_metric(_metric(), Outcome(OK, QueryAnswer([0.2], "[0.2]", "vector")))
    err = judge_metric(_metric(), Outcome(ERROR, message="x"))
    assert dry_run_verdict([ok, err]) == "Error" and dry_run_verdict([err, bad]) == "Failed"


def test_hash_arguments_point_at_stable() -> None:
    args = [
        {"name": "h", "valueFrom": {"podTemplateHashValue": "Latest"}},
        {"name": "c", "value": "abc"},
        {"name": "n", "value": "shop"},
    ]
    assert stable_args(args, "stable1", "abc") == [
        {"name": "h", "value": "stable1"},
        {"name": "c", "value": "stable1"},
        {"name": "n", "value": "shop"},
    ]
