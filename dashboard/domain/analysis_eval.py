"""How Argo Rollouts judges one analysis measurement: args, the expr condition language, Prometheus results.

The one pure place for these rules, shared by kubesim's AnalysisRun controller and the dashboard's dry run
(kubesim imports this module; nothing here imports kubesim or Django). It follows argo-rollouts'
``utils/evaluate`` (EvaluateResult / EvalCondition), ``metricproviders/prometheus`` (how a query answer
becomes ``result`` and the measurement's value string) and ``utils/analysis`` (``{{args.…}}`` templating):

- ``resolve_metric_args(metric, args)`` — the whole metric is templated; a missing value or an unknown tag is
  an error, like ``ResolveQuotedArgs``.
- ``evaluate_condition`` / ``evaluate_result`` — a safe parser for the expr subset used by analysis
  conditions (no ``eval``): literals, ``result``, indexing and slices, member access, arithmetic including
  ``**``/``^``, comparisons, ``&&`` ``||`` ``!`` ``and`` ``or`` ``not`` ``in``, ternary ``c ? a : b``,
  ``??``, array literals, and the functions Argo adds (``isNaN isInf isNil default asInt asFloat``) plus expr
  builtins (``len abs ceil floor round min max int float``). ``isNil(_)`` and ``default(_, d)`` ignore their
  first argument and look at ``result``, exactly as upstream. Anything else is refused with a message
  naming the construct; the measurement then becomes Error, as an expr compile error does upstream.
- ``prometheus_result(payload)`` — scalar / vector / matrix answers as ``result`` plus the value string Go
  prints (``strconv.FormatFloat(v, 'f', -1, 64)``); an empty vector stays ``[]`` (not nil).
- ``scale_query_windows(query, speed)`` — PromQL range/subquery/offset durations divided by a simulation
  speed (the scenario-time vs wall-clock reconciliation), clamped to a minimum that ``rate()`` can answer.

Pinned to upstream's own vectors: ``tests/metrics/test_analysis_eval_upstream.py`` transcribes the cases of
argo-rollouts' ``utils/evaluate/evaluate_test.go`` and ``metricproviders/prometheus/prometheus_test.go``
(commit 9f8d111d8f8e), so the simulator and the dry run, which both use this module, are checked against
Argo Rollouts itself rather than only against each other. Comparing values whose types expr knows at
compile time (literals, ``asFloat``/``asInt``/``len``…) across kinds is a compile error, as upstream.

Non-goals: closures and predicates (``all(result, {# < 1})``), pipes, ranges, string helpers, dates; real
PromQL evaluation (a real Prometheus does that).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

Obj = dict[str, Any]

SUCCESSFUL, FAILED, INCONCLUSIVE, ERROR = "Successful", "Failed", "Inconclusive", "Error"
EMPTY_RESULT_MESSAGE = "metric result is nil or empty: no data returned from the metric provider"


class ExpressionError(Exception):
    """A condition could not be compiled or run; the message says what was wrong."""


class UnsupportedExpression(ExpressionError):
    """Valid expr, but a construct this evaluator deliberately does not implement."""


class ArgumentError(ValueError):
    """``{{args.…}}`` templating failed (upstream: 'Unable to resolve metric arguments')."""


class PrometheusResultError(ValueError):
    """A Prometheus answer that the provider cannot turn into a measurement."""


# --- {{args.name}} templating ------------------------------------------------------------------------------

_TAG = re.compile(r"\{\{(.*?)\}\}")


def resolve_metric_args(metric: Obj, args: list[Obj] | None) -> Obj:
    """Substitute ``{{args.name}}`` everywhere in a metric (query, conditions, interval, address, …).

    Like ``analysisutil.ResolveMetricArgs``: every argument must have a value; every ``{{ tag }}`` must name a
    supplied argument. Values are inserted literally (upstream JSON-quotes them into the marshalled metric,
    which nets out to the literal text).
    """
    values: dict[str, str] = {}
    for arg in args or []:
        name = str(arg.get("name", ""))
        if arg.get("value") is None:
            raise ArgumentError(f'argument "{name}" was not supplied')
        values[name] = str(arg["value"])
    errors: list[str] = []

    def substitute(text: str) -> str:
        def one(match: re.Match[str]) -> str:
            tag = match.group(1).strip()
            if tag.startswith("args.") and tag[5:] in values:
                return values[tag[5:]]
            errors.append(f"failed to resolve {{{{{tag}}}}}")
            return ""

        return _TAG.sub(one, text)

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return substitute(value)
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        return value

    resolved: Obj = walk(metric)
    if errors:
        raise ArgumentError(errors[0])
    return resolved


# --- the expr subset ---------------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"\s*(?:(?P<num>\d+\.(?!\.)\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|\d+(?:[eE][+-]?\d+)?)"
    r"|(?P<str>\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|`[^`]*`)"
    r"|(?P<name>[A-Za-z_$][A-Za-z0-9_]*)"
    r"|(?P<op>\?\?|\?\.|\.\.|==|!=|<=|>=|&&|\|\||\*\*|[-+*/%^<>!()\[\],.?:{}|#]))"
)
# Recognised expr syntax this evaluator refuses, with the name the refusal uses.
_UNSUPPORTED_OPS = {
    "?.": "optional chaining '?.'",
    "..": "ranges '..'",
    "|": "pipes '|'",
    "{": "closures and maps '{…}'",
    "#": "closure arguments '#'",
}
_UNSUPPORTED_NAMES = {
    "let": "let bindings",
    "if": "if/else blocks",
    "matches": "the 'matches' operator",
    "contains": "the 'contains' operator",
    "startsWith": "the 'startsWith' operator",
    "endsWith": "the 'endsWith' operator",
}
_UNSUPPORTED_FUNCTIONS = {
    "all", "any", "none", "one", "filter", "map", "count", "sum", "find", "findIndex", "findLast",
    "groupBy", "sortBy", "reduce", "now", "duration", "date", "upper", "lower", "split", "trim", "keys",
    "values", "string", "toJSON", "fromJSON", "median", "mean", "first", "last", "get", "type",
}  # fmt: skip

_BINARY = {
    "??": 1,
    "||": 2,
    "or": 2,
    "&&": 3,
    "and": 3,
    "==": 4,
    "!=": 4,
    "<": 4,
    "<=": 4,
    ">": 4,
    ">=": 4,
    "in": 4,
    "+": 6,
    "-": 6,
    "*": 7,
    "/": 7,
    "%": 7,
    "**": 8,
    "^": 8,
}
_RIGHT_ASSOC = {"**", "^"}

Env = Mapping[str, Any]
Node = Callable[[Env], Any]


def _tokenize(text: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise ExpressionError(f"unexpected character {text[pos:].strip()[:1]!r} at position {pos}")
        pos = m.end()
        kind = m.lastgroup or ""
        tok = m.group(kind)
        if kind == "op" and tok in _UNSUPPORTED_OPS:
            # Name the enclosing function when there is one: all(result, {# < 1}) is about all().
            calls = [
                t for (k, t), (_, n) in itertools.pairwise(tokens) if n == "(" and k == "name"
            ]
            named = [t for t in calls if t in _UNSUPPORTED_FUNCTIONS]
            what = f"the function {named[-1]}()" if named else _UNSUPPORTED_OPS[tok]
            raise UnsupportedExpression(f"expr construct not supported: {what}")
        if kind == "name" and tok in _UNSUPPORTED_NAMES:
            raise UnsupportedExpression(f"expr construct not supported: {_UNSUPPORTED_NAMES[tok]}")
        tokens.append((kind, tok))
    tokens.append(("end", ""))
    return tokens


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = _tokenize(text)
        self.i = 0

    def peek(self) -> tuple[str, str]:
        return self.tokens[self.i]

    def take(self) -> tuple[str, str]:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def expect(self, value: str) -> None:
        _, tok = self.take()
        if tok != value:
            raise ExpressionError(f"expected {value!r} but found {tok or 'end of expression'!r}")

    def parse(self) -> Node:
        node = self.ternary()
        kind, tok = self.peek()
        if kind != "end":
            raise ExpressionError(f"unexpected {tok!r} after a complete expression")
        return node

    def ternary(self) -> Node:
        cond = self.binary(0)
        if self.peek()[1] != "?":
            return cond
        self.take()
        then = self.ternary()
        self.expect(":")
        other = self.ternary()
        return lambda env: then(env) if _truth(cond(env)) else other(env)

    def binary(self, min_prec: int) -> Node:
        left = self.unary()
        while True:
            kind, tok = self.peek()
            negated = False
            if kind == "name" and tok == "not" and self.tokens[self.i + 1][1] == "in":
                negated, tok = True, "in"
            prec = _BINARY.get(tok) if kind in ("op", "name") else None
            if prec is None or prec < min_prec:
                return left
            self.take()
            if negated:
                self.take()
            right = self.binary(prec if tok in _RIGHT_ASSOC else prec + 1)
            node = _binary_node(tok, left, right)
            left = (lambda n: lambda env: not n(env))(node) if negated else node

    def unary(self) -> Node:
        _, tok = self.peek()
        if tok in ("!", "not"):
            self.take()
            operand = self.unary()
            return lambda env: not _truth(operand(env))
        if tok == "-":
            self.take()
            operand = self.unary()
            return lambda env: -_number(operand(env))
        if tok == "+":
            self.take()
            return self.unary()
        return self.postfix(self.primary())

    def primary(self) -> Node:
        kind, tok = self.take()
        if kind == "num":
            value: Any = float(tok) if any(c in tok for c in ".eE") else int(tok)
            return _typed(lambda env: value, "float64" if isinstance(value, float) else "int")
        if kind == "str":
            text = tok[1:-1] if tok.startswith("`") else bytes(tok[1:-1], "utf-8").decode("unicode_escape")
            return _typed(lambda env: text, "string")
        if tok == "(":
            node = self.ternary()
            self.expect(")")
            return node
        if tok == "[":
            items = self.arguments("]")
            return lambda env: [item(env) for item in items]
        if kind == "name":
            constants = {"true": True, "false": False, "nil": None}
            if tok in constants:
                constant = constants[tok]
                return lambda env: constant
            if self.peek()[1] == "(":
                return self.call(tok)
            name = tok

            def lookup(env: Env) -> Any:
                if name not in env:
                    raise ExpressionError(f"unknown name {name!r} (only 'result' is defined)")
                return env[name]

            return lookup
        raise ExpressionError(f"unexpected {tok or 'end of expression'!r}")

    def arguments(self, close: str) -> list[Node]:
        items: list[Node] = []
        if self.peek()[1] != close:
            items.append(self.ternary())
            while self.peek()[1] == ",":
                self.take()
                items.append(self.ternary())
        self.expect(close)
        return items

    def call(self, name: str) -> Node:
        if name in _UNSUPPORTED_FUNCTIONS:
            raise UnsupportedExpression(f"expr construct not supported: the function {name}()")
        if name not in _FUNCTIONS:
            raise ExpressionError(f"unsupported function {name}()")
        self.expect("(")
        args = self.arguments(")")
        fn, arity = _FUNCTIONS[name]
        if arity is not None and len(args) != arity:
            raise ExpressionError(f"{name}() takes {arity} argument(s), got {len(args)}")
        if name in ("isNil", "default"):
            # Upstream quirk: the first argument is evaluated but ignored; `result` decides.
            def quirk(env: Env) -> Any:
                values = [a(env) for a in args]
                return fn(env.get("result"), *values[1:])

            return quirk
        return _typed(lambda env: fn(*[a(env) for a in args]), _RETURNS.get(name))

    def postfix(self, node: Node) -> Node:
        while True:
            tok = self.peek()[1]
            if tok == "[":
                self.take()
                start: Node | None = None
                if self.peek()[1] != ":":
                    start = self.ternary()
                if self.peek()[1] == ":":
                    self.take()
                    stop = None if self.peek()[1] == "]" else self.ternary()
                    self.expect("]")
                    node = _slice_node(node, start, stop)
                    continue
                self.expect("]")
                assert start is not None
                node = _index_node(node, start)
            elif tok == ".":
                self.take()
                kind, name = self.take()
                if kind != "name":
                    raise ExpressionError(f"expected a field name after '.', found {name!r}")
                node = _member_node(node, name)
            else:
                return node


def _index_node(node: Node, index: Node) -> Node:
    def run(env: Env) -> Any:
        container, key = node(env), index(env)
        if isinstance(container, list) and isinstance(key, int | float) and not isinstance(key, bool):
            i = int(key)
            if -len(container) <= i < len(container):
                return container[i]
            raise ExpressionError(f"index out of range: {i} (array length is {len(container)})")
        if isinstance(container, dict):
            return container.get(key)
        raise ExpressionError(f"cannot fetch {key!r} from {_type_name(container)}")

    return run


def _slice_node(node: Node, start: Node | None, stop: Node | None) -> Node:
    def run(env: Env) -> Any:
        container = node(env)
        if not isinstance(container, list):
            raise ExpressionError(f"cannot slice {_type_name(container)}")
        a = int(_number(start(env))) if start else None
        b = int(_number(stop(env))) if stop else None
        return container[a:b]

    return run


def _member_node(node: Node, name: str) -> Node:
    def run(env: Env) -> Any:
        container = node(env)
        if isinstance(container, dict):
            return container.get(name)
        raise ExpressionError(f"type {_type_name(container)} has no field {name}")

    return run


def _type_name(value: Any) -> str:
    """Go's %T for the values a condition sees."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "[]float64" if all(isinstance(v, float) for v in value) else "[]interface {}"
    if isinstance(value, dict):
        return "map[string]interface {}"
    return type(value).__name__


def _truth(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ExpressionError(f"expected a bool, got {_type_name(value)}")
    return value


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ExpressionError(f"expected a number, got {_type_name(value)}")
    return value


def _divide(a: float, b: float) -> float:
    if b:
        return a / b
    # Go float division: x/0 is ±Inf and 0/0 is NaN, never a panic.
    return math.nan if a == 0 or math.isnan(a) else math.copysign(math.inf, a) * math.copysign(1, b)


def _power(a: float, b: float) -> float:
    try:
        return float(a) ** float(b)
    except OverflowError:
        return math.inf
    except ZeroDivisionError:
        return math.inf


# What expr knows at compile time: the type of literals and of Argo's typed functions (``result`` itself is
# ``interface{}``, so only these can make a comparison fail to compile, as ``asFloat(result) == "1.1"`` does).
_RETURNS = {"asFloat": "float64", "asInt": "int", "len": "int", "isNaN": "bool", "isInf": "bool"}
_KINDS = {"int": "number", "float64": "number", "string": "string", "bool": "bool"}


def _typed(node: Node, expr_type: str | None) -> Node:
    if expr_type is not None:
        setattr(node, "expr_type", expr_type)  # noqa: B010 - a function attribute, read by _binary_node
    return node


def _static_mismatch(op: str, left: Node, right: Node) -> None:
    types = (getattr(left, "expr_type", None), getattr(right, "expr_type", None))
    if None not in types and _KINDS[str(types[0])] != _KINDS[str(types[1])]:
        raise ExpressionError(f"invalid operation: {op} (mismatched types {types[0]} and {types[1]})")


def _binary_node(op: str, left: Node, right: Node) -> Node:
    if op in ("==", "!="):
        _static_mismatch(op, left, right)
    if op in ("&&", "and"):
        return lambda env: _truth(left(env)) and _truth(right(env))
    if op in ("||", "or"):
        return lambda env: _truth(left(env)) or _truth(right(env))
    if op == "??":
        return lambda env: right(env) if left(env) is None else left(env)
    if op == "==":
        return lambda env: left(env) == right(env)
    if op == "!=":
        return lambda env: left(env) != right(env)
    if op == "in":

        def contains(env: Env) -> bool:
            item, container = left(env), right(env)
            if isinstance(container, list | dict):
                return item in container
            raise ExpressionError(f"operator in not defined on {_type_name(container)}")

        return contains
    arithmetic: dict[str, Callable[[float, float], Any]] = {
        "<": lambda a, b: a < b,
        "<=": lambda a, b: a <= b,
        ">": lambda a, b: a > b,
        ">=": lambda a, b: a >= b,
        "+": lambda a, b: a + b,
        "-": lambda a, b: a - b,
        "*": lambda a, b: a * b,
        "/": lambda a, b: _divide(float(a), float(b)),
        "%": lambda a, b: _modulo(a, b),
        "**": _power,
        "^": _power,
    }
    fn = arithmetic[op]

    def run(env: Env) -> Any:
        a, b = left(env), right(env)
        if isinstance(a, str) and isinstance(b, str) and op in ("+", "<", "<=", ">", ">="):
            return fn(a, b)  # type: ignore[arg-type]
        if (
            not isinstance(a, int | float)
            or isinstance(a, bool)
            or not isinstance(b, int | float)
            or (isinstance(b, bool))
        ):
            raise ExpressionError(
                f"invalid operation: {op} (mismatched types {_type_name(a)} and {_type_name(b)})"
            )
        return fn(a, b)

    return run


def _modulo(a: float, b: float) -> float:
    if not (isinstance(a, int) and isinstance(b, int)):
        raise ExpressionError("invalid operation: % on float64 (expr allows % on integers only)")
    if b == 0:
        raise ExpressionError("integer divide by zero")
    return math.fmod(a, b)


def _len(value: Any) -> int:
    if isinstance(value, list | str | dict):
        return len(value)
    raise ExpressionError(f"invalid argument for len (type {_type_name(value)})")


def _round(value: Any) -> float:
    """expr's round(): half away from zero (Python's round() is banker's rounding)."""
    x = float(_number(value))
    if math.isnan(x) or math.isinf(x):
        return x
    return math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)


def _as_int(value: Any) -> int:
    if isinstance(value, str):
        try:
            return int(value, 10)
        except ValueError:
            raise ExpressionError(f'strconv.ParseInt: parsing "{value}": invalid syntax') from None
    if isinstance(value, int | float) and not isinstance(value, bool):
        if math.isnan(value) or math.isinf(value):
            raise ExpressionError(f"asInt() not supported on float64 {value}")
        return int(value)
    raise ExpressionError(f"asInt() not supported on {_type_name(value)} {value}")


def _as_float(value: Any) -> float:
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            raise ExpressionError(f'strconv.ParseFloat: parsing "{value}": invalid syntax') from None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    raise ExpressionError(f"asFloat() not supported on {_type_name(value)} {value}")


def _is_nil(result: Any) -> bool:
    return result is None


def _default(result: Any, fallback: Any) -> Any:
    return fallback if result is None else result


def _is_nan(value: Any) -> bool:
    return math.isnan(_number(value))


def _is_inf(value: Any) -> bool:
    return math.isinf(_number(value))


def _minmax(pick: Callable[..., float]) -> Callable[..., float]:
    def run(*values: Any) -> float:
        flat = values[0] if len(values) == 1 and isinstance(values[0], list) else list(values)
        if not flat:
            raise ExpressionError("not enough arguments")
        return pick(_number(v) for v in flat)

    return run


# name -> (function, fixed arity or None)
_FUNCTIONS: dict[str, tuple[Callable[..., Any], int | None]] = {
    "len": (_len, 1),
    "isNaN": (_is_nan, 1),
    "isInf": (_is_inf, 1),
    "isNil": (_is_nil, 1),
    "default": (_default, 2),
    "asInt": (_as_int, 1),
    "asFloat": (_as_float, 1),
    "abs": (lambda v: abs(_number(v)), 1),
    "ceil": (lambda v: float(math.ceil(_number(v))) if math.isfinite(_number(v)) else v, 1),
    "floor": (lambda v: float(math.floor(_number(v))) if math.isfinite(_number(v)) else v, 1),
    "round": (_round, 1),
    "float": (lambda v: _as_float(v), 1),
    "int": (lambda v: _as_int(v), 1),
    "min": (_minmax(min), None),
    "max": (_minmax(max), None),
}


def compile_condition(text: str) -> Node:
    """Parse once; raises ExpressionError (or UnsupportedExpression) naming what was wrong."""
    if not isinstance(text, str) or not text.strip():
        raise ExpressionError("empty condition")
    return _Parser(text).parse()


def evaluate_condition(text: str, result: Any) -> bool:
    """``EvalCondition``: the condition's value for ``result``; it must be a bool, like upstream."""
    try:
        value = compile_condition(text)({"result": result})
    except ExpressionError:
        raise
    except (TypeError, ValueError, ZeroDivisionError, OverflowError, RecursionError) as error:
        raise ExpressionError(str(error)) from error
    if not isinstance(value, bool):
        raise ExpressionError(f"expected bool, but got {_type_name(value)}")
    return value


def _is_nil_or_empty(result: Any) -> bool:
    return result is None or (isinstance(result, list) and not result)


def _condition(result: Any, kind: str, text: str) -> bool:
    try:
        return evaluate_condition(text, result)
    except ExpressionError as error:
        if _is_nil_or_empty(result) and not isinstance(error, UnsupportedExpression):
            raise ExpressionError(f'could not evaluate {kind} "{text}": {EMPTY_RESULT_MESSAGE}') from error
        raise ExpressionError(f'could not evaluate {kind} "{text}": {error}') from error


def evaluate_result(result: Any, success: str | None, failure: str | None) -> str:
    """``EvaluateResult``: a measurement's phase; raises ExpressionError (→ an Error measurement)."""
    ok = bad = False
    if success:
        ok = _condition(result, "successCondition", success)
    if failure:
        bad = _condition(result, "failureCondition", failure)
    if not success and not failure:
        return SUCCESSFUL
    if success and not failure:
        bad = not ok
    elif failure and not success:
        ok = not bad
    if bad:
        return FAILED
    if not ok:
        return INCONCLUSIVE
    return SUCCESSFUL


# The analysis controller's historical name for evaluate_result.
assess = evaluate_result


# --- Prometheus answers ----------------------------------------------------------------------------------


def format_go_float(value: float) -> str:
    """``strconv.FormatFloat(v, 'f', -1, 64)``: shortest digits, never exponent form."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    text = format(Decimal(repr(float(value))), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _sample(raw: Any) -> float:
    try:
        return float(raw[1])
    except (TypeError, ValueError, IndexError) as error:
        raise PrometheusResultError(f"malformed sample {raw!r}") from error


@dataclass(frozen=True)
class QueryAnswer:
    """What one instant (or range) query gave the provider: the condition input and its printed value."""

    result: Any
    value: str
    result_type: str
    series: list[Obj] = field(default_factory=list)  # label sets, in Prometheus' order
    warnings: list[str] = field(default_factory=list)


def prometheus_result(payload: Any) -> QueryAnswer:
    """Turn a ``/api/v1/query`` (or ``query_range``) JSON body into what the conditions see.

    Raises PrometheusResultError with the text the Go client would give (``<errorType>: <error>`` for an
    API error, ``Prometheus metric type not supported`` for a string result).
    """
    if not isinstance(payload, dict):
        raise PrometheusResultError("the Prometheus answer is not a JSON object")
    if payload.get("status") == "error":
        raise PrometheusResultError(f"{payload.get('errorType', 'error')}: {payload.get('error', '')}")
    data = payload.get("data")
    if not isinstance(data, dict):
        raise PrometheusResultError("the Prometheus answer has no data")
    kind, raw = data.get("resultType"), data.get("result")
    warnings = [str(w) for w in payload.get("warnings") or []]
    if kind == "scalar":
        value = _sample(raw)
        return QueryAnswer(value, format_go_float(value), "scalar", [], warnings)
    if kind in ("vector", "matrix"):
        if not isinstance(raw, list):
            raise PrometheusResultError(f"malformed {kind} result")
        values: list[float] = []
        series: list[Obj] = []
        for item in raw:
            if not isinstance(item, dict):
                raise PrometheusResultError(f"malformed {kind} result")
            series.append(dict(item.get("metric") or {}))
            if kind == "vector":
                values.append(_sample(item.get("value")))
            else:
                values.extend(_sample(s) for s in item.get("values") or [])
        text = "[" + ",".join(format_go_float(v) for v in values) + "]"
        return QueryAnswer(values, text, kind, series, warnings)
    raise PrometheusResultError("Prometheus metric type not supported")


# --- scenario time vs wall-clock windows ------------------------------------------------------------------

_DURATION_UNITS = {
    "ms": 0.001,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
    "d": 86400.0,
    "w": 604800.0,
    "y": 31536000.0,
}
_PROM_DURATION = r"(?:\d+(?:ms|s|m|h|d|w|y))+"
_RANGE = re.compile(rf"\[\s*({_PROM_DURATION})\s*(?::\s*({_PROM_DURATION})?\s*)?\]")
_OFFSET = re.compile(rf"\boffset\s+(-?)({_PROM_DURATION})")
_PART = re.compile(r"(\d+)(ms|s|m|h|d|w|y)")


def promql_seconds(text: str) -> float:
    return sum(int(n) * _DURATION_UNITS[u] for n, u in _PART.findall(text))


def _promql_duration(seconds: float) -> str:
    millis = max(1, round(seconds * 1000))
    return f"{millis // 1000}s" if millis % 1000 == 0 else f"{millis}ms"


@dataclass(frozen=True)
class ScaledQuery:
    query: str
    clamped: list[str]  # e.g. ["30s→4s"], shown with the measurement


def scale_query_windows(query: str, speed: float, min_window_seconds: float = 4.0) -> ScaledQuery:
    """Divide PromQL range, subquery and offset durations by ``speed`` (scenario seconds → wall seconds).

    Prometheus stamps samples with wall time, so a ``[5m]`` window in a template running at speed 10 must
    look at the last 30 wall seconds. Windows never go below ``min_window_seconds`` (4 scrapes at 1 s), the
    smallest a rate() answers reliably; every clamp is reported. At speed 1 the query is returned unchanged.
    """
    if speed == 1:
        return ScaledQuery(query, [])
    clamped: list[str] = []

    def window(text: str) -> str:
        wall = promql_seconds(text) / speed
        if wall < min_window_seconds:
            clamped.append(f"{text}→{_promql_duration(min_window_seconds)}")
            wall = min_window_seconds
        return _promql_duration(wall)

    def range_sub(m: re.Match[str]) -> str:
        if m.group(0).count(":"):
            step = m.group(2)
            resolution = _promql_duration(max(promql_seconds(step) / speed, 0.001)) if step else ""
            return f"[{window(m.group(1))}:{resolution}]"
        return f"[{window(m.group(1))}]"

    def offset_sub(m: re.Match[str]) -> str:
        return f"offset {m.group(1)}{_promql_duration(promql_seconds(m.group(2)) / speed)}"

    scaled = _OFFSET.sub(offset_sub, _RANGE.sub(range_sub, query))
    return ScaledQuery(scaled, clamped)
