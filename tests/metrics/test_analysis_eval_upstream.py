"""``analysis_eval`` pinned to upstream's own test vectors: kubesim and the dry run answer like Argo Rollouts.

SOURCE: test data transcribed from github.com/argoproj/argo-rollouts at commit
9f8d111d8f8e3e88b6d7f8bbdf62fd3cd863ef9d (Apache License 2.0):
- ``utils/evaluate/evaluate_test.go`` — EvaluateResult and EvalCondition cases (inputs, conditions, phases,
  error texts);
- ``metricproviders/prometheus/prometheus_test.go`` — processResponse cases (scalar, NaN, +Inf, vector,
  the range query's matrix, an unsupported answer), given here as the JSON a Prometheus server sends.
Each row names the Go test it comes from. Where upstream uses a construct this evaluator deliberately does
not implement (closures such as ``all(result, # > 10)``), the row asserts the refusal instead.
"""

from __future__ import annotations

from typing import Any

import pytest

from dashboard.domain.analysis_eval import (
    ERROR,
    FAILED,
    INCONCLUSIVE,
    SUCCESSFUL,
    ExpressionError,
    PrometheusResultError,
    UnsupportedExpression,
    evaluate_condition,
    evaluate_result,
    prometheus_result,
)

INVALID_REF = "a == true"
APDEX = {"service_apdex": {"label": None, "values": {"values": [2.0, 2.0]}}}

# (Go test, result, successCondition, failureCondition, phase, texts the error must contain)
EVALUATE_RESULT = [
    ("TestEvaluateResultWithSuccess", True, "true", "false", SUCCESSFUL, ()),
    ("TestEvaluateResultWithFailure", True, "true", "true", FAILED, ()),
    ("TestEvaluateResultInconclusive", True, "false", "false", INCONCLUSIVE, ()),
    ("TestEvaluateResultNoSuccessConditionAndNotFailing", True, "", "false", SUCCESSFUL, ()),
    ("TestEvaluateResultNoFailureConditionAndNotSuccessful", True, "false", "", FAILED, ()),
    ("TestEvaluateResultNoFailureConditionAndNoSuccessCondition", True, "", "", SUCCESSFUL, ()),
    ("TestEvaluateResultWithErrorOnSuccessCondition", True, INVALID_REF, "true", ERROR, ()),
    ("TestEvaluateResultWithErrorOnFailureCondition", True, "true", INVALID_REF, ERROR, ()),
    (
        "TestEvaluateResultErrorMessageWithNilResult",
        None,
        "result[0] >= 0.95",
        "",
        ERROR,
        ("metric result is nil or empty", "successCondition"),
    ),
    (
        "TestEvaluateResultErrorMessageWithEmptySlice",
        [],
        "result[0] >= 0.95",
        "",
        ERROR,
        ("metric result is nil or empty", "successCondition"),
    ),
    (
        "TestEvaluateResultErrorMessageWithInvalidExpression",
        True,
        INVALID_REF,
        "",
        ERROR,
        ("could not evaluate successCondition", INVALID_REF),
    ),
    (
        "TestEvaluateResultErrorMessageOnFailureCondition",
        True,
        "true",
        "invalidVar == true",
        ERROR,
        ("could not evaluate failureCondition", "invalidVar == true"),
    ),
]

# (Go test, result, condition, expected bool, or the texts an error must contain)
EVAL_CONDITION: list[tuple[str, Any, str, bool | tuple[str, ...]]] = [
    ("TestEvaluateConditionWithSuccess", True, "result == true", True),
    ("TestEvaluateConditionWithFailure", True, "result == false", False),
    ("TestErrorWithNonBoolReturn", True, "1", ("expected bool, but got int",)),
    ("TestErrorWithInvalidReference", True, "invalidVariable", ("unknown name", "invalidVariable")),
    ("TestEvaluateInOperator", [2.0, 2.0], "2 in result", True),
    ("TestEvaluateFloat64", 5.0, "result > 1", True),
    ("TestEvaluateInvalidStruct", True, "result.Name() == 'hi'", ()),
    ("TestEvaluateAsIntPanic", "1.1", "asInt(result) == 1.1", ()),
    ("TestEvaluateAsInt", "1", "asInt(result) == 1", True),
    ("TestEvaluateAsInt", 1, "asInt(result) == 1", True),
    ("TestEvaluateAsInt", 1.123, "asInt(result) == 1", True),
    (
        "TestEvaluateAsFloatError",
        "NotANum",
        "asFloat(result) == 1.1",
        ('strconv.ParseFloat: parsing "NotANum": invalid syntax',),
    ),
    (
        "TestEvaluateAsFloatError",
        "1.1",
        'asFloat(result) == "1.1"',
        ("invalid operation: == (mismatched types float64 and string)",),
    ),
    ("TestEvaluateAsFloat", "1.1", "asFloat(result) == 1.1", True),
    ("TestEvaluateAsFloat", "1.1", "asFloat(result) >= 1.1", True),
    ("TestEvaluateAsFloat", "1.1", "asFloat(result) <= 1.1", True),
    ("TestEvaluateAsFloat", 1.1, "asFloat(result) == 1.1", True),
    ("TestEvaluateAsFloat", 1, "asFloat(result) == 1", True),
    ("TestEvaluateAsFloat", 1, "asFloat(result) >= 1", True),
]


def _answer(kind: str, result: Any) -> dict[str, Any]:
    return {"status": "success", "data": {"resultType": kind, "result": result}}


def _scalar(text: str) -> dict[str, Any]:
    return _answer("scalar", [0, text])


VECTOR = _answer("vector", [{"metric": {}, "value": [0, "10"]}, {"metric": {}, "value": [0, "11"]}])
# newMatrix(10): two series of two samples each, baseline + 1 … baseline + 4.
MATRIX = _answer(
    "matrix",
    [
        {"metric": {}, "values": [[1.234, "11"], [1.234, "12"]]},
        {"metric": {}, "values": [[1.234, "13"], [1.234, "14"]]},
    ],
)

# (Go test, Prometheus answer, successCondition, failureCondition, measurement value, phase)
PROCESS_RESPONSE = [
    ("TestProcessScalarResponse", _scalar("10"), "result == 10", "result != 10", "10", SUCCESSFUL),
    (
        "TestProcessNaNResponse/inconclusive",
        _scalar("NaN"),
        "result >= 0.9",
        "result < 0.9",
        "NaN",
        INCONCLUSIVE,
    ),
    (
        "TestProcessNaNResponse/success",
        _scalar("NaN"),
        "result >= 0.9 || isNaN(result)",
        "",
        "NaN",
        SUCCESSFUL,
    ),
    ("TestProcessNaNResponse/failure", _scalar("NaN"), "result >= 0.9", "", "NaN", FAILED),
    ("TestProcessInfResponse/success", _scalar("+Inf"), "result >= 0.9", "", "+Inf", SUCCESSFUL),
    ("TestProcessInfResponse/failure", _scalar("+Inf"), "", "isInf(result)", "+Inf", FAILED),
    ("TestProcessVectorResponse", VECTOR, "10 in result", "len(result) != 2", "[10,11]", SUCCESSFUL),
]


def _phase(result: Any, success: str, failure: str) -> tuple[str, str]:
    try:
        return evaluate_result(result, success, failure), ""
    except ExpressionError as error:
        return ERROR, str(error)


@pytest.mark.parametrize(
    ("test", "result", "success", "failure", "phase", "texts"),
    EVALUATE_RESULT,
    ids=[c[0] for c in EVALUATE_RESULT],
)
def test_evaluate_result_matches_upstream(
    test: str, result: Any, success: str, failure: str, phase: str, texts: tuple[str, ...]
) -> None:
    got, message = _phase(result, success, failure)
    assert got == phase, test
    for text in texts:
        assert text in message, (test, message)


@pytest.mark.parametrize(
    ("test", "result", "condition", "expected"), EVAL_CONDITION, ids=[c[0] for c in EVAL_CONDITION]
)
def test_eval_condition_matches_upstream(
    test: str, result: Any, condition: str, expected: bool | tuple[str, ...]
) -> None:
    if isinstance(expected, bool):
        assert evaluate_condition(condition, result) is expected, test
        return
    with pytest.raises(ExpressionError) as error:
        evaluate_condition(condition, result)
    for text in expected:
        assert text in str(error.value), (test, str(error.value))


def test_closures_upstream_accepts_are_refused_by_name() -> None:
    # TestEvaluateArray: upstream answers true; closures are a documented non-goal of this evaluator.
    with pytest.raises(UnsupportedExpression, match=r"the function all\(\)"):
        evaluate_condition("all(result.service_apdex.values.values, {# > 1})", APDEX)


@pytest.mark.parametrize(
    ("test", "payload", "success", "failure", "value", "phase"),
    PROCESS_RESPONSE,
    ids=[c[0] for c in PROCESS_RESPONSE],
)
def test_prometheus_answers_match_upstream(
    test: str, payload: dict[str, Any], success: str, failure: str, value: str, phase: str
) -> None:
    answer = prometheus_result(payload)
    assert answer.value == value, test
    assert _phase(answer.result, success, failure)[0] == phase, test


def test_the_range_querys_matrix_prints_every_sample_in_order() -> None:
    # TestRunSuccessfullyWithRangeQuery: the value is "[11,12,13,14]"; its all(...) conditions are closures.
    answer = prometheus_result(MATRIX)
    assert answer.value == "[11,12,13,14]" and answer.result == [11.0, 12.0, 13.0, 14.0]
    assert _phase(answer.result, "all(result, # > 10)", "all(result, # < 10)")[0] == ERROR


def test_an_answer_of_an_unsupported_type_is_the_providers_error() -> None:
    # TestRunWithEvaluationError / TestProcessInvalidResponse: the measurement is an Error with this text.
    with pytest.raises(PrometheusResultError, match=r"^Prometheus metric type not supported$"):
        prometheus_result(_answer("string", [0, "10"]))
