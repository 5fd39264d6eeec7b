"""A finding's evidence for people: humanised labels, readable values, known structures drawn properly.

Evidence is whatever the diagnostics recorded from Kubernetes objects and Argo CD's history, so the
page treats every part of it as text. Known keys get a shape — the re-render race's key facts as a few
tiles, the pod-template diff as a small table, the Application's syncs as a list of renders — other
scalars become short tiles, and every field (and the raw JSON) stays one click away. Pure, no I/O.
Non-goal: deciding anything; the findings did that (``dashboard.domain.findings``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from dashboard.web.timefmt import clock, parse_time, short_age

# Words that read wrong once lower-cased.
ACRONYMS = {"id": "ID", "url": "URL", "uid": "UID", "rs": "RS", "ci": "CI", "ip": "IP", "api": "API",
            "json": "JSON", "sha": "SHA", "http": "HTTP", "argocd": "Argo CD"}  # fmt: skip

TILE_CHARS = 48  # a scalar this long still reads as a tile; longer ones live in the details list
VALUE_CHARS = 120  # a value in the details list is cut here; the whole value is its tooltip
KEY_TILES = 4
STRUCTURED = ("templateDiff", "syncs")  # drawn as their own blocks, not as tiles

_WORD_BREAK = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|[_\-\s]+")
_HEX = re.compile(r"[0-9a-f]{20,}")


def humanise(key: str) -> str:
    """``"applicationHealthMessage"`` → ``"Application health message"``; ``"syncID"`` → ``"Sync ID"``."""
    words = [w for w in _WORD_BREAK.split(key) if w]
    if not words:
        return key
    out = [ACRONYMS.get(w.lower(), w if w.isupper() and len(w) > 1 else w.lower()) for w in words]
    text = " ".join(out).replace("replica set", "ReplicaSet")  # Kubernetes kinds keep their spelling
    return text[:1].upper() + text[1:]


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def scalar_text(value: object) -> str:
    """One value as people read it: yes/no, — for nothing, a timestamp as its clock time (UTC)."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    text = str(value)
    if "T" in text and parse_time(text) is not None:
        return clock(text)
    return text


def short_hash(value: object) -> str:
    """Long hex digests (config checksums, commit SHAs) shortened to 10 characters."""
    text = scalar_text(value)
    return text[:10] + "…" if _HEX.fullmatch(text) else text


def value_text(value: object) -> tuple[str, str]:
    """``(short, full)`` for any evidence value: lists as comma lists, objects summarised."""
    if isinstance(value, Mapping):
        full = json.dumps(value, sort_keys=True, default=str)
        parts = [f"{humanise(str(k))} {scalar_text(v)}" for k, v in value.items() if not _nested(v)]
        short = " · ".join(parts) if parts else f"{len(value)} fields"
        return _cut(short, VALUE_CHARS), full
    if isinstance(value, list | tuple):
        if not value:
            return "none", "none"
        if any(_nested(v) for v in value):
            full = json.dumps(value, sort_keys=True, default=str)
            return f"{len(value)} entries", full
        full = ", ".join(short_hash(v) for v in value)
        return _cut(full, VALUE_CHARS), ", ".join(scalar_text(v) for v in value)
    full = str(value) if isinstance(value, str) else scalar_text(value)
    return _cut(short_hash(value), VALUE_CHARS), full


def _nested(value: object) -> bool:
    return isinstance(value, Mapping | list | tuple)


def diff_rows(diff: object) -> list[dict[str, str]]:
    """The pod-template diff as table rows: field, before → after (hashes short, full values as titles)."""
    rows = []
    for entry in diff if isinstance(diff, list) else []:
        if not isinstance(entry, Mapping):
            continue
        path = str(entry.get("path") or "")
        before, after = entry.get("before"), entry.get("after")
        rows.append(
            {
                "path": path,
                "field": field_name(path),
                "before": "(absent)" if before is None else _cut(short_hash(before), 40),
                "beforeFull": "(absent)" if before is None else str(before),
                "after": "(absent)" if after is None else _cut(short_hash(after), 40),
                "afterFull": "(absent)" if after is None else str(after),
            }
        )
    return rows


def field_name(path: str) -> str:
    """``metadata.annotations.checksum/config`` → ``annotation checksum/config``; other paths as they are."""
    for prefix, word in (("metadata.annotations.", "annotation "), ("metadata.labels.", "label ")):
        if path.startswith(prefix):
            return word + path.removeprefix(prefix)
    return path.removeprefix("spec.")


_SYNC_CHANGES = (("revisionChanged", "new commit"), ("inlineValuesChanged", "inline values changed"))


def sync_items(syncs: object) -> list[dict[str, str]]:
    """Argo CD syncs as renders: "render 1 · a30e4cf · 18:04:05 · inline values changed"."""
    seen: set[tuple[str, str]] = set()
    items: list[dict[str, str]] = []
    for sync in syncs if isinstance(syncs, list) else []:
        if not isinstance(sync, Mapping):
            continue
        ident = (str(sync.get("application")), str(sync.get("id")))
        if ident in seen:  # both ReplicaSets can trace back to the same history entry
            continue
        seen.add(ident)
        revisions = [str(r)[:7] for r in sync.get("revisions") or [] if r]
        changes = [text for flag, text in _SYNC_CHANGES if sync.get(flag)]
        what = ", ".join(changes) or "same commit and values"
        if sync.get("commit"):  # the domain's attribution: the commit this render belongs to (one story)
            commit = str(sync["commit"])[:7]
            synced = f"git at {', '.join(revisions)}" if revisions and revisions != [commit] else ""
            what = " · ".join(p for p in (str(sync.get("reason") or what), synced) if p)
            parts = [f"render {len(items) + 1} of {commit}", clock(sync.get("deployedAt")), what]
        else:
            parts = [
                f"render {len(items) + 1}",
                ", ".join(revisions) or "?",
                clock(sync.get("deployedAt")),
                what,
            ]
        items.append(
            {
                "text": " · ".join(p for p in parts if p),
                "title": f"{sync.get('application')} · history id {sync.get('id')} · "
                f"{sync.get('deployedAt')} · {'automated' if sync.get('automated') else 'manual'} sync",
            }
        )
    return items


def _tile(label: str, value: str, sub: str = "", title: str = "") -> dict[str, str]:
    return {"label": label, "value": value, "sub": sub, "title": title or value}


def _gap(first: object, second: object) -> str:
    a, b = parse_time(first), parse_time(second)
    if a is None or b is None:
        return ""
    seconds = abs((b - a).total_seconds())
    return f"{seconds:.0f} s" if seconds < 60 else short_age(seconds)


def _rerender_tiles(ev: Mapping[str, Any]) -> list[dict[str, str]]:
    """The re-render race in three facts: two renders of one commit, what differed, the step reset."""
    tiles = []
    syncs = ev.get("syncs")
    syncs = syncs if isinstance(syncs, list) else []
    if ev.get("commit"):  # both renders attributed to one commit, as the diagram's sync node counts them
        commits = {str(ev["commit"])[:7]}
    else:
        commits = {str(r)[:7] for s in syncs if isinstance(s, Mapping) for r in s.get("revisions") or [] if r}
    count = ev.get("rendersOfCommit") if isinstance(ev.get("rendersOfCommit"), int) else 2
    gap = _gap(ev.get("previousRenderAt"), ev.get("rerenderAt"))
    if gap or commits:
        tiles.append(
            _tile(
                f"Renders of {next(iter(commits))}" if len(commits) == 1 else "Renders",
                f"{count} ×" + (f" · {gap} apart" if gap else ""),
                " → ".join(t for t in (clock(ev.get("previousRenderAt")), clock(ev.get("rerenderAt"))) if t),
            )
        )
    diff = ev.get("templateDiff")
    if isinstance(diff, list):
        rows = diff_rows(diff)
        annotations = [
            r["field"].removeprefix("annotation ") for r in rows if r["field"].startswith("annotation ")
        ]
        if rows and (ev.get("configOnly") or len(annotations) == len(rows)):
            tiles.append(
                _tile(
                    "Template diff",
                    ", ".join(annotations) + " only",
                    "only annotations differ · containers equal",
                )
            )
        elif rows:
            more = f" and {len(rows) - 1} more" if len(rows) > 1 else ""
            count = f"{len(rows)} field{'s' if len(rows) > 1 else ''}"
            tiles.append(_tile("Template diff", count, rows[0]["field"] + more))
        else:
            tiles.append(_tile("Template diff", "no visible change"))
    before, after = ev.get("stepBefore"), ev.get("stepAfter")
    hashes = " → ".join(str(h) for h in (ev.get("previousHash"), ev.get("currentHash")) if h)
    if isinstance(before, int) and isinstance(after, int):
        reset = " · reset" if after == 0 and before > 0 else ""
        tiles.append(_tile("Step index", f"{before} → {after}{reset}", f"hash {hashes}" if hashes else ""))
    elif ev.get("inferred"):
        tiles.append(
            _tile(
                "Step index",
                f"now {scalar_text(after)}",
                "reset inferred from ReplicaSet timing",
                str(ev.get("inferredFrom") or ""),
            )
        )
    orphans = ev.get("orphanedReplicaSets")
    if isinstance(orphans, list) and orphans:
        names = ", ".join(str(o) for o in orphans)
        tiles.append(_tile("Orphaned ReplicaSet" + ("s" if len(orphans) > 1 else ""), names))
    return tiles


# Findings whose evidence has a known meaning get tiles written for them.
KEY_TILE_BUILDERS = {"rerender-race": _rerender_tiles}


def _generic_tiles(ev: Mapping[str, Any]) -> list[dict[str, str]]:
    """The first few short facts (scalars and short lists) as tiles, in the order the finding gave them."""
    tiles = []
    for key, value in ev.items():
        if key in STRUCTURED or isinstance(value, Mapping) or value is None:
            continue
        if isinstance(value, list) and (not value or any(_nested(v) for v in value)):
            continue
        short, full = value_text(value)
        if len(short) <= TILE_CHARS:
            tiles.append(_tile(humanise(str(key)), short, title=full))
        if len(tiles) == KEY_TILES:
            break
    return tiles


def present_evidence(code: str, evidence: object) -> dict[str, Any]:
    """Everything a finding card draws from its evidence (see the module docstring)."""
    ev: Mapping[str, Any] = evidence if isinstance(evidence, Mapping) else {}
    builder = KEY_TILE_BUILDERS.get(code, _generic_tiles)
    facts = []
    for key, value in ev.items():
        short, full = value_text(value)
        facts.append({"key": str(key), "label": humanise(str(key)), "value": short, "full": full})
    return {
        "tiles": builder(ev),
        "diff": diff_rows(ev.get("templateDiff")),
        "syncs": sync_items(ev.get("syncs")),
        "facts": facts,
        "raw": json.dumps(ev, indent=2, sort_keys=False, default=str) if ev else "",
    }
