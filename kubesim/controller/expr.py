"""Analysis conditions: re-exported from ``dashboard.domain.analysis_eval``, their one home.

The evaluator moved there so that the dashboard's dry run and kubesim's AnalysisRuns judge measurements with
the same code (kubesim may import the pure domain; the dashboard never imports kubesim).
"""

from __future__ import annotations

from dashboard.domain.analysis_eval import (
    ExpressionError,
    UnsupportedExpression,
    assess,
    compile_condition,
    evaluate_condition,
    evaluate_result,
)

__all__ = [
    "ExpressionError",
    "UnsupportedExpression",
    "assess",
    "compile_condition",
    "evaluate_condition",
    "evaluate_result",
]
