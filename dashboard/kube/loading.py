"""Reading Kubernetes objects from files and directories (YAML or JSON, multi-document, ``kind: List``).

Used by ``manage.py inspect`` and ``diagnose``. A bad document does not spoil the rest: every
problem is reported as a :class:`LoadError` naming the file and the 1-based document number, and
every good object is returned with where it came from. A file that is binary, not UTF-8, empty,
truncated or nested deeper than ``MAX_DEPTH`` (no Kubernetes object comes close; the parsers would
overflow the stack) is one error naming the file and the cause, never a traceback. Directories are
read recursively in name order, taking ``*.yaml``, ``*.yml`` and ``*.json`` files; a file named
explicitly is read whatever its extension. Non-goals: schema validation, watch recordings (``.jsonl``),
talking to a cluster.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

OBJECT_SUFFIXES = (".yaml", ".yml", ".json")
MAX_DEPTH = 256  # brackets deep; Kubernetes objects (managedFields included) stay well under 64
# A JSON string (brackets inside it do not nest anything), and the brackets that do.
_JSON_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_BRACKETS = re.compile(r"[\[\]{}]")
# A YAML document separator line: "---" alone or followed by whitespace (and maybe content).
_SEPARATOR = re.compile(r"^---(?:[ \t].*)?$")


class _ApiLoader(yaml.SafeLoader):
    """SafeLoader that keeps timestamps as strings, as the Kubernetes API returns them."""


_ApiLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


@dataclass(frozen=True)
class LoadedObject:
    path: str
    document: int  # 1-based position of the document in its file
    item: int | None  # 1-based position inside a `kind: List` document, if it came from one
    object: Mapping[str, Any]

    @property
    def where(self) -> str:
        inner = f", item {self.item}" if self.item is not None else ""
        return f"{self.path}: document {self.document}{inner}"


@dataclass(frozen=True)
class LoadError:
    path: str
    document: int | None
    message: str

    def __str__(self) -> str:
        if self.document is None:
            return f"{self.path}: {self.message}"
        return f"{self.path}: document {self.document}: {self.message}"


@dataclass(frozen=True)
class LoadResult:
    objects: tuple[LoadedObject, ...]
    errors: tuple[LoadError, ...]


def load_paths(paths: Iterable[str | Path]) -> LoadResult:
    """Every object under ``paths``, plus one error per unreadable file or document."""
    objects: list[LoadedObject] = []
    errors: list[LoadError] = []
    for path in paths:
        for file_path, error in _files(Path(path)):
            if error is not None:
                errors.append(error)
                continue
            loaded, problems = load_file(file_path)
            objects.extend(loaded)
            errors.extend(problems)
    return LoadResult(tuple(objects), tuple(errors))


def _files(path: Path) -> Iterator[tuple[Path, LoadError | None]]:
    if path.is_dir():
        found = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in OBJECT_SUFFIXES)
        if not found:
            yield path, LoadError(str(path), None, "directory holds no .yaml, .yml or .json files")
        for file_path in found:
            yield file_path, None
    elif path.is_file():
        yield path, None
    elif path.exists():
        yield path, LoadError(str(path), None, "not a regular file or directory")
    else:
        yield path, LoadError(str(path), None, "no such file or directory")


def load_file(path: Path) -> tuple[list[LoadedObject], list[LoadError]]:
    try:
        data = path.read_bytes()
    except OSError as error:
        return [], [LoadError(str(path), None, f"cannot read: {error.strerror or error}")]
    if b"\x00" in data:
        return [], [LoadError(str(path), None, "binary data, not YAML or JSON")]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        return [], [LoadError(str(path), None, f"not UTF-8 text (byte {error.start + 1} is invalid)")]
    return load_text(text, str(path))


def load_text(text: str, source: str) -> tuple[list[LoadedObject], list[LoadError]]:
    """Objects in one file's text; ``source`` names it in errors."""
    if not text.strip():
        return [], [LoadError(source, None, "empty: it holds no Kubernetes object")]
    depth = nesting_depth(text)
    if depth > MAX_DEPTH:
        return [], [LoadError(source, None, f"nested {depth} levels deep (at most {MAX_DEPTH} are read)")]
    objects: list[LoadedObject] = []
    errors: list[LoadError] = []
    try:
        for number, document in _documents(text, source, errors):
            _collect(document, source, number, objects, errors)
    except RecursionError:  # the depth scan is a heuristic for YAML; never a traceback
        return [], [LoadError(source, None, "nested too deeply to read")]
    if not objects and not errors:
        errors.append(LoadError(source, None, "holds no Kubernetes object (only empty documents)"))
    return objects, errors


def nesting_depth(text: str) -> int:
    """The deepest ``[``/``{`` nesting outside JSON strings (flow-style YAML nests the same way)."""
    depth = deepest = 0
    for bracket in _BRACKETS.findall(_JSON_STRING.sub("", text)):
        if bracket in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth = max(0, depth - 1)
    return deepest


def _documents(text: str, source: str, errors: list[LoadError]) -> Iterator[tuple[int, Any]]:
    stripped = text.lstrip()
    json_problem = None
    if stripped.startswith(("{", "[")):
        try:
            yield 1, json.loads(text)
            return
        except json.JSONDecodeError as error:
            # Maybe YAML flow style: let the YAML parser try, but name the JSON problem if it fails too.
            json_problem = f"invalid JSON: {error.msg} at line {error.lineno}, column {error.colno}"
    for number, (first_line, chunk) in enumerate(_split_documents(text), start=1):
        try:
            document = yaml.load(chunk, Loader=_ApiLoader)  # _ApiLoader is a SafeLoader
        except yaml.YAMLError as error:
            problem = json_problem or f"invalid YAML: {_yaml_problem(error, first_line)}"
            errors.append(LoadError(source, None if json_problem else number, problem))
            continue
        if document is not None:
            yield number, document


def _split_documents(text: str) -> list[tuple[int, str]]:
    """Split a YAML stream at ``---`` lines so one broken document leaves the others readable.

    Each chunk comes with the 0-based file line it starts on (the separator line's remainder).
    """
    chunks: list[tuple[int, list[str]]] = [(0, [])]
    for number, line in enumerate(text.splitlines(keepends=True)):
        if _SEPARATOR.match(line.rstrip("\r\n")):
            chunks.append((number, [line[3:]]))
        else:
            chunks[-1][1].append(line)
    # A leading "---" produces an empty first chunk; keep numbering by real documents.
    if len(chunks) > 1 and not "".join(chunks[0][1]).strip():
        chunks = chunks[1:]
    return [(start, "".join(lines)) for start, lines in chunks]


def _yaml_problem(error: yaml.YAMLError, first_line: int) -> str:
    mark = getattr(error, "problem_mark", None)
    problem = getattr(error, "problem", None) or str(error).splitlines()[0]
    if mark is not None:
        return f"{problem} at line {first_line + mark.line + 1}, column {mark.column + 1}"
    return str(problem)


def _collect(
    document: Any, source: str, number: int, objects: list[LoadedObject], errors: list[LoadError]
) -> None:
    if isinstance(document, list):  # a bare JSON array of objects
        for index, item in enumerate(document, start=1):
            _collect_item(item, source, number, index, objects, errors)
        return
    if not isinstance(document, Mapping):
        errors.append(LoadError(source, number, f"expected an object, found {_type_name(document)}"))
        return
    kind = document.get("kind")
    if not isinstance(kind, str) or not kind:
        errors.append(LoadError(source, number, "has no kind"))
        return
    if kind == "List" or (kind.endswith("List") and isinstance(document.get("items"), list)):
        items = document.get("items")
        if not isinstance(items, list):
            errors.append(LoadError(source, number, f"{kind} has no items list"))
            return
        default_kind = kind[: -len("List")] if kind != "List" else ""
        for index, item in enumerate(items, start=1):
            if default_kind and isinstance(item, Mapping) and "kind" not in item:
                # `kubectl get rollouts -o json` leaves kind off the items of a RolloutList.
                item = {**item, "kind": default_kind}
            _collect_item(item, source, number, index, objects, errors)
        return
    objects.append(LoadedObject(source, number, None, document))


def _collect_item(
    item: Any, source: str, number: int, index: int, objects: list[LoadedObject], errors: list[LoadError]
) -> None:
    if not isinstance(item, Mapping):
        errors.append(
            LoadError(source, number, f"item {index}: expected an object, found {_type_name(item)}")
        )
    elif not isinstance(item.get("kind"), str) or not item.get("kind"):
        errors.append(LoadError(source, number, f"item {index}: has no kind"))
    else:
        objects.append(LoadedObject(source, number, index, item))


def _type_name(value: Any) -> str:
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__
