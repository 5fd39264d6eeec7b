"""The shared evaluation rules: Argo's expr conditions, EvaluateResult, Prometheus answers, args, windows."""

from __future__ import annotations

import math
import re

import pytest

from dashboard.domain.analysis_eval import (
    ArgumentError,
    ExpressionError,
    PrometheusResultError,
    UnsupportedExpression,
    evaluate_condition,
    evaluate_result,
    format_go_float,
    prometheus_result,
    resolve_metric_args,
    scale_query_windows,
)

EMPTY = "metric result is nil or empty: no data returned from the metric provider"


@pytest.mark.parametrize(
    ("result", "success", "failure", "phase"),
    [
        ([0.01], "result[0] <= 0.05", None, "Successful"),
        ([0.2], "result[0] <= 0.05", None, "Failed"),
        ([], "len(result) == 0 || result[0] <= 0.05", None, "Successful"),
        (math.nan, "result >= 0.9", None, "Failed"),
        (math.nan, "result >= 0.9", "result < 0.9", "Inconclusive"),
        (math.nan, "result >= 0.9 || isNaN(result)", None, "Successful"),
        (math.inf, "result >= 0.9", None, "Successful"),
        ([0.07], "result[0] < 0.05", "result[0] > 0.1", "Inconclusive"),
        ([0.5], None, None, "Successful"),
    ],
)
def test_it_follows_the_upstream_table(result: object, success: str, failure: str, phase: str) -> None:
    assert evaluate_result(result, success, failure) == phase


@pytest.mark.parametrize(
    ("result", "condition", "message"),
    [
        ([], "result[0] <= 0.05", EMPTY),
        ([], "default(result, 0) < 0.05", EMPTY),
        ([0.1], "1", "expected bool, but got int"),
        ([0.1], "invalidVariable", "unknown name 'invalidVariable'"),
        ([0.1], "result < 0.05", "mismatched types []float64 and float64"),
    ],
)
def test_errors_carry_the_upstream_wording(result: object, condition: str, message: str) -> None:
    with pytest.raises(ExpressionError) as caught:
        evaluate_result(result, condition, None)
    assert str(caught.value).startswith(f'could not evaluate successCondition "{condition}": ')
    assert message in str(caught.value)


def test_isnil_and_default_look_at_result_not_their_argument() -> None:
    assert evaluate_condition("isNil(1)", None) is True
    assert evaluate_condition("isNil(result)", []) is False  # an empty vector is not nil
    assert evaluate_condition("default(result, 7) == 7", None) is True


def test_it_handles_operators_expr_has_and_python_spells_differently() -> None:
    assert evaluate_condition("2 ^ 10 == 1024 && !(1 > 2) and not false", None)
    assert evaluate_condition("result[0] > 0 ? true : false", [1.0])
    assert evaluate_condition("round(2.5) == 3 && round(-2.5) == -3", None)
    assert evaluate_condition("result[-1] == 3 && result[1:] == [2, 3]", [1.0, 2.0, 3.0])
    assert evaluate_condition("isInf(result[0] / 0)", [1.0])


@pytest.mark.parametrize(
    ("condition", "construct"),
    [
        ("all(result, {# < 0.05})", "all()"),
        ("result | len() > 0", "pipes"),
        ("result?.x", "optional chaining"),
        ("1..3 == result", "ranges"),
        ("let x = 1; x > 0", "let"),
        ('"a" matches "b"', "matches"),
    ],
)
def test_unsupported_constructs_are_refused_by_name(condition: str, construct: str) -> None:
    with pytest.raises(
        UnsupportedExpression, match=rf"expr construct not supported: .*{re.escape(construct)}"
    ):
        evaluate_condition(condition, [0.1])


def test_nothing_reaches_python() -> None:
    for attack in ("__import__('os')", "().__class__", "open('/etc/passwd')", "result.__class__ == 1"):
        with pytest.raises(ExpressionError):
            evaluate_condition(attack, [1.0])
    assert evaluate_condition("result.__class__ == nil", {"a": 1})  # a map key lookup, never an attribute


def test_prometheus_answers_become_results_and_go_formatted_values() -> None:
    vector = {
        "status": "success",
        "data": {
            "resultType": "vector",
            "result": [{"metric": {"version": "canary"}, "value": [1, "0.009999999999999993"]}],
        },
    }
    answer = prometheus_result(vector)
    assert answer.result == [0.009999999999999993] and answer.value == "[0.009999999999999993]"
    empty = prometheus_result({"status": "success", "data": {"resultType": "vector", "result": []}})
    assert empty.result == [] and empty.value == "[]"
    scalar = prometheus_result({"status": "success", "data": {"resultType": "scalar", "result": [1, "NaN"]}})
    assert math.isnan(scalar.result) and scalar.value == "NaN"
    matrix = prometheus_result(
        {
            "status": "success",
            "data": {
                "resultType": "matrix",
                "result": [
                    {"metric": {}, "values": [[1, "1"], [2, "2"]]},
                    {"metric": {}, "values": [[1, "+Inf"]]},
                ],
            },
        }
    )
    assert matrix.result == [1.0, 2.0, math.inf] and matrix.value == "[1,2,+Inf]"
    with pytest.raises(PrometheusResultError, match=r"^bad_data: parse error"):
        prometheus_result({"status": "error", "errorType": "bad_data", "error": "parse error"})
    with pytest.raises(PrometheusResultError, match="Prometheus metric type not supported"):
        prometheus_result({"status": "success", "data": {"resultType": "string", "result": [1, "x"]}})
    assert [format_go_float(v) for v in (1e-05, 1e21, 3.0, -math.inf)] == [
        "0.00001",
        "1000000000000000000000",
        "3",
        "-Inf",
    ]


def test_args_are_resolved_strictly_like_upstream() -> None:
    metric = {
        "name": "m",
        "interval": "{{ args.every }}",
        "provider": {"prometheus": {"query": 'x{a="{{args.a}}"}'}},
    }
    resolved = resolve_metric_args(metric, [{"name": "a", "value": "b"}, {"name": "every", "value": "5s"}])
    assert resolved["provider"]["prometheus"]["query"] == 'x{a="b"}' and resolved["interval"] == "5s"
    with pytest.raises(ArgumentError, match='argument "a" was not supplied'):
        resolve_metric_args(metric, [{"name": "a"}])
    with pytest.raises(ArgumentError, match=r"failed to resolve \{\{args.every\}\}"):
        resolve_metric_args(metric, [{"name": "a", "value": "b"}])


def test_windows_are_divided_by_speed_and_clamped() -> None:
    scaled = scale_query_windows("rate(x[5m]) + rate(x[10m:30s] offset 1h) + rate(y[20s])", 10)
    assert scaled.query == "rate(x[30s]) + rate(x[60s:3s] offset 360s) + rate(y[4s])"
    assert scaled.clamped == ["20s→4s"]
    assert scale_query_windows("rate(x[5m])", 1).query == "rate(x[5m])"
