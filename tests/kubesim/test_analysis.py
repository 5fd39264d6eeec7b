"""Analysis: the condition language subset and Argo's metric/run assessment rules."""

from __future__ import annotations

import math

import pytest

from kubesim.clock import ManualClock
from kubesim.controller.analysis import AnalysisController, metric_failure, metric_phase
from kubesim.controller.common import Cache
from kubesim.controller.expr import ExpressionError, assess, evaluate_condition
from kubesim.metrics import MetricsError, Series, SeriesProvider, parse_series


@pytest.mark.parametrize(
    ("condition", "result", "expected"),
    [
        ("result[0] < 0.05", [0.01], True),
        ("result < 0.05 && !isNaN(result)", 0.2, False),
        ("len(result) == 0 || result[0] >= 0.95", [0.99], True),
        ("default(result, 0) == 0", None, True),  # upstream: default() looks at result, not its 1st arg
        ("isNaN(result)", math.nan, True),
        ("isInf(result[0])", [math.inf], True),
        ("result > 1 or not (result < 0)", 0.5, True),
        ("(result[0] + result[1]) / 2 <= 10", [5, 15], True),
    ],
)
def test_it_evaluates_the_supported_subset(condition: str, result: object, expected: bool) -> None:
    assert evaluate_condition(condition, result) is expected


@pytest.mark.parametrize(
    ("condition", "message"),
    [
        ("result ~ 3", "unexpected character"),
        ("system('rm')", "unsupported function system()"),
        ("result[", "unexpected"),
        ("x > 1", "unknown name 'x'"),
        ("result", "expected bool"),
        ("__import__('os')", "unsupported function __import__"),
    ],
)
def test_it_refuses_unsupported_constructs_with_a_clear_message(condition: str, message: str) -> None:
    with pytest.raises(ExpressionError, match=message):
        evaluate_condition(condition, 1)


def test_assess_follows_evaluate_result() -> None:
    assert assess([0.2], "result[0] < 0.05", None) == "Failed"
    assert assess([0.2], None, "result[0] > 0.1") == "Failed"
    assert assess([0.07], "result[0] < 0.05", "result[0] > 0.1") == "Inconclusive"
    assert assess([0.01], None, None) == "Successful"


def test_metric_limits_decide_the_metric_phase() -> None:
    metric = {"name": "m", "count": 3, "failureLimit": 1}
    assert (
        metric_phase(metric, {"failed": 1, "count": 1, "measurements": [{"phase": "Failed"}]}, False)
        == "Running"
    )
    assert (
        metric_phase(metric, {"failed": 2, "count": 2, "measurements": [{"phase": "Failed"}]}, False)
        == "Failed"
    )
    assert (
        metric_phase(metric, {"successful": 3, "count": 3, "measurements": [{"phase": "Successful"}]}, False)
        == "Successful"
    )
    assert metric_failure({"name": "m"}, {"consecutiveError": 5}) == (
        "Error",
        "consecutiveErrors (5) > consecutiveErrorLimit (4)",
    )
    assert metric_phase({"name": "m", "interval": "10s"}, {"measurements": []}, True) == "Successful"


class _Store:
    def __init__(self) -> None:
        self.patches: list[dict] = []

    def patch(self, *args: object, **kwargs: object) -> None:
        self.patches.append(args[3])  # type: ignore[arg-type]


def _controller(series: dict[str, Series]) -> tuple[AnalysisController, ManualClock, list[float]]:
    clock = ManualClock()
    requeues: list[float] = []
    ctl = AnalysisController(
        _Store(), Cache([]), clock, SeriesProvider(series), lambda kind, key, delay: requeues.append(delay)
    )
    return ctl, clock, requeues


def _run(metric: dict) -> dict:
    return {"metadata": {"name": "r", "namespace": "n", "uid": "u"}, "spec": {"metrics": [metric]}}


def test_it_measures_on_the_interval_until_count_and_reports_the_run() -> None:
    ctl, clock, _ = _controller({"err": Series([0.01, 0.02])})
    metric = {
        "name": "err",
        "interval": "30s",
        "count": 2,
        "successCondition": "result[0] < 0.05",
        "provider": {"prometheus": {"query": "q"}},
    }
    run = _run(metric)
    status, wait = ctl.compute(run)
    assert status["phase"] == "Running" and wait == 30
    run["status"] = status
    clock.advance(30)
    status, _ = ctl.compute(run)
    result = status["metricResults"][0]
    assert status["phase"] == "Successful" and result["count"] == 2
    assert [m["value"] for m in result["measurements"]] == ["[0.01]", "[0.02]"]
    assert status["runSummary"] == {"count": 1, "successful": 1}


def test_a_failing_measurement_fails_the_run_with_the_upstream_message() -> None:
    ctl, _, _ = _controller({"err": Series([0.5])})
    status, _ = ctl.compute(
        _run({"name": "err", "successCondition": "result[0] < 0.05", "provider": {"prometheus": {}}})
    )
    assert status["phase"] == "Failed"
    assert status["message"] == 'Metric "err" assessed Failed due to failed (1) > failureLimit (0)'


def test_a_bad_condition_is_an_error_measurement() -> None:
    ctl, _, _ = _controller({"err": Series([0.5])})
    status, _ = ctl.compute(
        _run(
            {
                "name": "err",
                "interval": "5s",
                "successCondition": "result ~ 1",
                "provider": {"prometheus": {}},
            }
        )
    )
    measurement = status["metricResults"][0]["measurements"][0]
    assert measurement["phase"] == "Error" and "unexpected character" in measurement["message"]


def test_args_are_substituted_into_queries() -> None:
    seen: list[dict] = []

    class Recorder(SeriesProvider):
        def measure(self, run: dict, metric: dict, index: int):  # type: ignore[no-untyped-def]
            seen.append(metric)
            return super().measure(run, metric, index)

    ctl = AnalysisController(
        _Store(), Cache([]), ManualClock(), Recorder({"err": Series([0.0])}), lambda *a: None
    )
    run = _run({"name": "err", "provider": {"prometheus": {"query": 'rate{svc="{{args.svc}}"}'}}})
    run["spec"]["args"] = [{"name": "svc", "value": "web"}]
    ctl.compute(run)
    assert seen[0]["provider"]["prometheus"]["query"] == 'rate{svc="web"}'


def test_series_are_validated() -> None:
    assert parse_series("m", [1, 2]).values == [1.0, 2.0]
    with pytest.raises(MetricsError, match=r"metrics\.m: give at least one value"):
        parse_series("m", {})
    with pytest.raises(MetricsError, match=r"metrics\.m\.format"):
        parse_series("m", {"values": [1], "format": "table"})
