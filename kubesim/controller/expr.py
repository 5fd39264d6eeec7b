"""A safe evaluator for the subset of Argo's expression language used by analysis conditions.

Argo Rollouts evaluates ``successCondition`` / ``failureCondition`` with antonmedv/expr against ``result``.
This module parses the common subset without ``eval``: numbers, strings, ``true``/``false``/``nil``,
``result``, indexing (``result[0]``), member access (``result.x``), arithmetic (+ - * / %), comparisons,
``&&`` / ``||`` / ``!`` (and ``and``/``or``/``not``), parentheses, array literals, and the functions
``len``, ``isNaN``, ``isInf``, ``default``, ``abs``, ``all``-free builtins ``min``/``max``/``float``/``int``.
Anything else raises ``ExpressionError`` with a message saying what was not understood; the analysis
controller turns that into an Error measurement, like a compile error upstream.

Non-goals: closures, pipes, ``matches``, ``in`` ranges, string helpers.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any


class ExpressionError(Exception):
    pass


_TOKEN = re.compile(
    r"\s*(?:(?P<num>\d+\.\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|\d+(?:[eE][+-]?\d+)?)"
    r"|(?P<str>\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*')"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<op>==|!=|<=|>=|&&|\|\||[-+*/%<>!()\[\],.]))"
)

_BINARY = {
    "||": 1,
    "or": 1,
    "&&": 2,
    "and": 2,
    "==": 3,
    "!=": 3,
    "<": 4,
    "<=": 4,
    ">": 4,
    ">=": 4,
    "+": 5,
    "-": 5,
    "*": 6,
    "/": 6,
    "%": 6,
}


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
        tokens.append((kind, m.group(kind)))
    tokens.append(("end", ""))
    return tokens


Node = Callable[[dict[str, Any]], Any]


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
        node = self.binary(0)
        kind, tok = self.peek()
        if kind != "end":
            raise ExpressionError(f"unexpected {tok!r} after a complete expression")
        return node

    def binary(self, min_prec: int) -> Node:
        left = self.unary()
        while True:
            kind, tok = self.peek()
            prec = _BINARY.get(tok) if kind in ("op", "name") else None
            if prec is None or prec < min_prec:
                return left
            self.take()
            right = self.binary(prec + 1)
            left = _binary_node(tok, left, right)

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
            value = float(tok) if any(c in tok for c in ".eE") else int(tok)
            return lambda env: value
        if kind == "str":
            text = bytes(tok[1:-1], "utf-8").decode("unicode_escape")
            return lambda env: text
        if tok == "(":
            node = self.binary(0)
            self.expect(")")
            return node
        if tok == "[":
            items: list[Node] = []
            if self.peek()[1] != "]":
                items.append(self.binary(0))
                while self.peek()[1] == ",":
                    self.take()
                    items.append(self.binary(0))
            self.expect("]")
            return lambda env: [item(env) for item in items]
        if kind == "name":
            if tok == "true":
                return lambda env: True
            if tok == "false":
                return lambda env: False
            if tok == "nil":
                return lambda env: None
            if self.peek()[1] == "(":
                return self.call(tok)
            name = tok

            def lookup(env: dict[str, Any]) -> Any:
                if name not in env:
                    raise ExpressionError(f"unknown name {name!r} (only 'result' is defined)")
                return env[name]

            return lookup
        raise ExpressionError(f"unexpected {tok or 'end of expression'!r}")

    def call(self, name: str) -> Node:
        if name not in _FUNCTIONS:
            raise ExpressionError(f"unsupported function {name}()")
        self.expect("(")
        args: list[Node] = []
        if self.peek()[1] != ")":
            args.append(self.binary(0))
            while self.peek()[1] == ",":
                self.take()
                args.append(self.binary(0))
        self.expect(")")
        fn = _FUNCTIONS[name]
        if name == "default":
            if len(args) != 2:
                raise ExpressionError("default() takes 2 arguments")
            first, second = args

            def default(env: dict[str, Any]) -> Any:
                try:
                    value = first(env)
                except (ExpressionError, IndexError, KeyError, TypeError):
                    value = None
                return second(env) if value is None else value

            return default
        return lambda env: fn(*[a(env) for a in args])

    def postfix(self, node: Node) -> Node:
        while True:
            tok = self.peek()[1]
            if tok == "[":
                self.take()
                index = self.binary(0)
                self.expect("]")
                node = _index_node(node, index)
            elif tok == ".":
                self.take()
                kind, name = self.take()
                if kind != "name":
                    raise ExpressionError(f"expected a field name after '.', found {name!r}")
                node = _member_node(node, name)
            else:
                return node


def _index_node(node: Node, index: Node) -> Node:
    def run(env: dict[str, Any]) -> Any:
        container, key = node(env), index(env)
        try:
            if isinstance(container, list) and isinstance(key, int | float):
                return container[int(key)]
            if isinstance(container, dict):
                return container[key]
        except (IndexError, KeyError) as error:
            raise ExpressionError(f"index {key!r} out of range") from error
        raise ExpressionError(f"cannot index {type(container).__name__} with {key!r}")

    return run


def _member_node(node: Node, name: str) -> Node:
    def run(env: dict[str, Any]) -> Any:
        container = node(env)
        if isinstance(container, dict) and name in container:
            return container[name]
        raise ExpressionError(f"no field {name!r}")

    return run


def _truth(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ExpressionError(f"expected a bool, got {value!r}")
    return value


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ExpressionError(f"expected a number, got {value!r}")
    return value


def _binary_node(op: str, left: Node, right: Node) -> Node:
    if op in ("&&", "and"):
        return lambda env: _truth(left(env)) and _truth(right(env))
    if op in ("||", "or"):
        return lambda env: _truth(left(env)) or _truth(right(env))
    if op == "==":
        return lambda env: left(env) == right(env)
    if op == "!=":
        return lambda env: left(env) != right(env)
    compare: dict[str, Callable[[float, float], Any]] = {
        "<": lambda a, b: a < b,
        "<=": lambda a, b: a <= b,
        ">": lambda a, b: a > b,
        ">=": lambda a, b: a >= b,
        "+": lambda a, b: a + b,
        "-": lambda a, b: a - b,
        "*": lambda a, b: a * b,
        "/": lambda a, b: a / b if b else (math.nan if a == 0 else math.copysign(math.inf, a)),
        "%": lambda a, b: math.fmod(a, b),
    }
    fn = compare[op]
    return lambda env: fn(_number(left(env)), _number(right(env)))


def _len(value: Any) -> int:
    if isinstance(value, list | str | dict):
        return len(value)
    raise ExpressionError(f"len() of {type(value).__name__}")


_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "len": _len,
    "isNaN": lambda v: isinstance(v, float) and math.isnan(v),
    "isInf": lambda v: isinstance(v, float) and math.isinf(v),
    "abs": lambda v: abs(_number(v)),
    "float": lambda v: float(_number(v)),
    "int": lambda v: int(_number(v)),
    "min": lambda *v: min(_number(x) for x in v),
    "max": lambda *v: max(_number(x) for x in v),
    "default": lambda v, d: d if v is None else v,
}


def compile_condition(text: str) -> Node:
    """Parse once; raises ExpressionError naming what was wrong."""
    if not isinstance(text, str) or not text.strip():
        raise ExpressionError("empty condition")
    return _Parser(text).parse()


def evaluate_condition(text: str, result: Any) -> bool:
    """Evaluate a condition against ``result``; the outcome must be a bool, like upstream."""
    try:
        value = compile_condition(text)({"result": result})
    except ExpressionError:
        raise
    except (TypeError, ValueError, ZeroDivisionError, OverflowError) as error:
        raise ExpressionError(str(error)) from error
    if not isinstance(value, bool):
        raise ExpressionError(f"expected bool, but got {type(value).__name__}")
    return value


def assess(result: Any, success: str | None, failure: str | None) -> str:
    """``evaluate.EvaluateResult``: a measurement's phase from its value and the metric's conditions."""
    ok = bad = False
    if success:
        ok = evaluate_condition(success, result)
    if failure:
        bad = evaluate_condition(failure, result)
    if not success and not failure:
        return "Successful"
    if success and not failure:
        bad = not ok
    elif failure and not success:
        ok = not bad
    if bad:
        return "Failed"
    if not ok:
        return "Inconclusive"
    return "Successful"
