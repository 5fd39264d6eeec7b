"""Server-side apply over plain JSON objects: merging an applied configuration, conflicts, ownership.

A field manager's applied configuration is merged into the live object (maps recursively, lists of keyed
items by key, other lists replaced whole); fields the manager applied before and no longer applies are
removed unless another manager also owns them. A field another manager owns whose value would change is a
conflict: 409 with every conflicting field and manager, unless `force` takes the fields over. Field sets use
the `fieldsV1` trees of `kubesim.patching`; messages and causes follow the real API server's.

Non-goals: `x-kubernetes-list-type: set` and granular maps, apply on the scale subresource, defaulting.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from kubesim import patching

Obj = dict[str, Any]
FieldSet = patching.FieldSet
Path = tuple[str, ...]


@dataclass(frozen=True)
class FieldConflict:
    manager: str  # as printed by the server: `"kubectl" using argoproj.io/v1alpha1`
    path: str  # `.spec.replicas`, `.spec.template.spec.containers[name="web"].image`


def _key_of(token: str) -> dict[str, Any] | None:
    if token.startswith("k:"):
        try:
            value = json.loads(token[2:])
        except ValueError:
            return None
        return value if isinstance(value, dict) else None
    return None


def path_string(path: Path) -> str:
    out = ""
    for token in path:
        if token.startswith("f:"):
            out += "." + token[2:]
        elif (key := _key_of(token)) is not None:
            out += "[" + ",".join(f"{k}={json.dumps(v)}" for k, v in key.items()) + "]"
        elif token.startswith("v:"):
            out += f"[={token[2:]}]"
        elif token.startswith("i:"):
            out += f"[{token[2:]}]"
    return out


def leaves(fields: FieldSet, prefix: Path = ()) -> list[Path]:
    """The paths of the fields a set owns that have no owned children (`.` marks are not fields)."""
    found: list[Path] = []
    for token, sub in fields.items():
        if token == ".":
            continue
        children = {k: v for k, v in sub.items() if k != "."} if isinstance(sub, dict) else {}
        if children:
            found += leaves(children, (*prefix, token))
        else:
            found.append((*prefix, token))
    return found


def contains(fields: FieldSet, path: Path) -> bool:
    node: Any = fields
    for token in path:
        if not isinstance(node, dict) or token not in node:
            return False
        node = node[token]
    return True


def value_at(obj: Any, path: Path) -> tuple[bool, Any]:
    """(present, value) of a field-set path in an object."""
    node = obj
    for token in path:
        if token.startswith("f:") and isinstance(node, dict):
            if token[2:] not in node:
                return False, None
            node = node[token[2:]]
        elif (key := _key_of(token)) is not None and isinstance(node, list):
            match = [i for i in node if isinstance(i, dict) and all(i.get(k) == v for k, v in key.items())]
            if not match:
                return False, None
            node = match[0]
        else:
            return False, None
    return True, node


def _item_key(item: Any) -> str | None:
    return patching.item_key(item)


def merge(live: Any, applied: Any) -> Any:
    """The applied configuration merged into the live value."""
    if isinstance(applied, dict) and isinstance(live, dict):
        out = dict(live)
        for key, value in applied.items():
            out[key] = merge(live.get(key), value) if key in live else patching.copy_json(value)
        return out
    if (
        isinstance(applied, list)
        and isinstance(live, list)
        and applied
        and all(_item_key(i) for i in applied)
        and all(_item_key(i) for i in live)
    ):
        by_key = {_item_key(i): i for i in applied}
        out_list = []
        for item in live:
            key = _item_key(item)
            out_list.append(merge(item, by_key.pop(key)) if key in by_key else item)
        out_list += [patching.copy_json(i) for i in applied if _item_key(i) in by_key]
        return out_list
    return patching.copy_json(applied)


def remove(obj: Any, fields: FieldSet) -> Any:
    """`obj` without the leaf fields of `fields` (fields with owned children are walked into)."""
    if isinstance(obj, dict):
        out = dict(obj)
        for token, sub in fields.items():
            if not token.startswith("f:") or token[2:] not in out:
                continue
            children = {k: v for k, v in sub.items() if k != "."}
            if children:
                out[token[2:]] = remove(out[token[2:]], children)
            else:
                del out[token[2:]]
        return out
    if isinstance(obj, list):
        out_list = []
        for item in obj:
            key = _item_key(item)
            sub = fields.get(key) if key else None
            if sub is None:
                out_list.append(item)
                continue
            if "." not in sub:  # the item stays (someone still applies it): drop only the fields below
                out_list.append(remove(item, sub))
        return out_list
    return obj


def conflicts(
    live: Obj, applied: Obj, applied_fields: FieldSet, others: list[tuple[str, FieldSet]]
) -> list[FieldConflict]:
    """Fields of the applied configuration that another manager owns with a different live value."""
    found: list[FieldConflict] = []
    for path in leaves(applied_fields):
        present, current = value_at(live, path)
        _, wanted = value_at(applied, path)
        if present and current == wanted:
            continue
        found += [
            FieldConflict(manager, path_string(path)) for manager, owned in others if contains(owned, path)
        ]
    return found


def describe_manager(entry: Obj) -> str:
    """How the API server names a manager in conflict messages."""
    text = json.dumps(entry.get("manager", ""))
    if entry.get("subresource"):
        text += f" with subresource {json.dumps(entry['subresource'])}"
    if entry.get("operation") == "Update":
        text += f" using {entry.get('apiVersion', '')}"
        if entry.get("time"):
            text += f" at {entry['time']}"
    return text


def conflict_message(found: list[FieldConflict]) -> str:
    if len(found) == 1:
        return f"Apply failed with 1 conflict: conflict with {found[0].manager}: {found[0].path}"
    by_manager: dict[str, list[str]] = {}
    for c in found:
        by_manager.setdefault(c.manager, []).append(c.path)
    lines = []
    for manager in sorted(by_manager):
        lines.append(f"conflicts with {manager}:")
        lines += [f"- {p}" for p in by_manager[manager]]
    return f"Apply failed with {len(found)} conflicts: " + "\n".join(lines)


def strip_paths(fields: FieldSet, paths: list[Path]) -> FieldSet:
    """`fields` without the given leaf paths."""
    result = fields
    for path in paths:
        tree: FieldSet = {}
        node = tree
        for token in path[:-1]:
            node = node.setdefault(token, {})
        node[path[-1]] = {}
        result = patching.subtract(result, tree)
    return result
