"""Argo CD Applications as the dashboard reads them, and the correlation of their renders with commits.

``application_view`` turns an ``argoproj.io/v1alpha1`` Application (as the API sends it) into an
``ApplicationView``: the rollouts it manages (``status.resources``), sync status and revision(s) (multi-source
too, index-aligned with ``spec.sources``), health, ``operationState``, ``history``, ``reconciledAt``, the
auto-sync / self-heal policy and where the Helm values come from (inline ``values`` / ``valuesObject`` /
``parameters`` in the Application itself versus value files read from git).

A *render* is one sync that applied manifests: every ``status.history`` entry, plus the current operation
while it has not reached the history yet (a Running sync waiting for a healthy Rollout). Each render carries
a digest of its source spec without the revisions, so two consecutive renders tell what changed: the git
revision, the inline inputs, both, or nothing. The correlation functions then answer:

* which commit a render belongs to (``attribute_renders``) — a render that only changed inline values and is
  followed shortly by a render of a new revision is the first half of a split render of that commit (the
  re-render race: inline values apply at once, the values file comes from a lagging checkout);
* which render produced a release (``render_for_release``) — the latest render that started before the new
  ReplicaSet appeared, cross-checked with the revision the release recorded;
* which commits were rendered more than once (``split_renders``).

Non-goals: no I/O and no Django; never raises on malformed objects (fields degrade one by one); Argo CD's own
diffing, health aggregation and the ``/resource-tree`` API are out of scope.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from dashboard.domain.objects import (
    as_bool,
    as_int,
    as_list,
    as_map,
    as_str,
    dig,
    dig_map,
    dig_str,
    is_map,
    maps,
    parse_time,
    rfc3339,
)

# Renders further apart than this are separate changes, not the two halves of one (notes/argo-cd.md §3.4:
# the values-file side lags by the revision cache, ~2-3 min, plus polling jitter).
SPLIT_RENDER_WINDOW = timedelta(minutes=5)
# The ReplicaSet of a render appears after the sync started; allow for clocks that disagree a little.
CLOCK_SKEW = timedelta(seconds=5)

CHANGE_FIRST = "first"  # no earlier render to compare with
CHANGE_REVISION = "revision"  # git moved, inline inputs unchanged
CHANGE_VALUES = "values"  # inline inputs (Application spec) changed at the same revision
CHANGE_BOTH = "both"
CHANGE_NONE = "none"  # a re-sync of the same inputs: no new pod template


@dataclass(frozen=True)
class ValuesOrigin:
    """Where one source's Helm (or plugin) inputs come from."""

    inline_values: bool = False  # helm.values (a string block in the Application)
    values_object: bool = False  # helm.valuesObject (a map in the Application; wins over values)
    parameters: int = 0  # helm.parameters (highest precedence)
    value_files: tuple[str, ...] = ()  # read from git at the resolved revision
    plugin_env: tuple[str, ...] = ()  # a config-management plugin's env (often carries values too)

    @property
    def inline(self) -> bool:
        return self.inline_values or self.values_object or self.parameters > 0 or bool(self.plugin_env)

    def to_dict(self) -> dict[str, Any]:
        return {
            "inlineValues": self.inline_values,
            "valuesObject": self.values_object,
            "parameters": self.parameters,
            "valueFiles": list(self.value_files),
            "pluginEnv": list(self.plugin_env),
        }


@dataclass(frozen=True)
class SourceView:
    repo_url: str
    path: str
    chart: str
    target_revision: str
    ref: str
    name: str
    values: ValuesOrigin

    def to_dict(self) -> dict[str, Any]:
        return {
            "repoURL": self.repo_url,
            "path": self.path,
            "chart": self.chart,
            "targetRevision": self.target_revision,
            "ref": self.ref,
            "name": self.name,
            "values": self.values.to_dict(),
        }


@dataclass(frozen=True)
class OperationView:
    phase: str  # Running | Terminating | Succeeded | Failed | Error
    started_at: datetime | None
    finished_at: datetime | None
    message: str
    revisions: tuple[str, ...]  # what was applied (syncResult), else what was requested
    initiated_by: str
    automated: bool
    retry_count: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "phase": self.phase,
            "startedAt": rfc3339(self.started_at),
            "finishedAt": rfc3339(self.finished_at),
            "message": self.message,
            "revisions": list(self.revisions),
            "initiatedBy": self.initiated_by,
            "automated": self.automated,
            "retryCount": self.retry_count,
        }


@dataclass(frozen=True)
class Render:
    """One sync that applied manifests (a history entry, or the operation not yet in the history)."""

    id: int | None  # status.history[].id; None for the in-flight operation
    revisions: tuple[str, ...]
    started_at: datetime | None
    deployed_at: datetime | None  # None while the operation is still running
    inputs: str  # digest of the source spec(s) without revisions: inline values, params, value files…
    initiated_by: str
    automated: bool
    changed: str = CHANGE_FIRST

    @property
    def at(self) -> datetime | None:
        return self.started_at or self.deployed_at

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "revision": self.revisions[0] if self.revisions else None,
            "revisions": list(self.revisions),
            "startedAt": rfc3339(self.started_at),
            "deployedAt": rfc3339(self.deployed_at),
            "inputs": self.inputs,
            "initiatedBy": self.initiated_by,
            "automated": self.automated,
            "changed": self.changed,
        }


@dataclass(frozen=True)
class ApplicationView:
    namespace: str
    name: str
    uid: str
    project: str
    rollouts: tuple[tuple[str, str], ...]  # (namespace, name) of every Rollout in status.resources
    sync_status: str  # Synced | OutOfSync | Unknown | ""
    revisions: tuple[str, ...]  # status.sync.revision(s), aligned with sources
    health: str
    health_message: str
    operation: OperationView | None
    renders: tuple[Render, ...]  # oldest first
    reconciled_at: datetime | None
    auto_sync: bool
    self_heal: bool
    prune: bool
    sources: tuple[SourceView, ...]
    multi_source: bool
    conditions: tuple[str, ...] = field(default=())  # "Type: message"
    application_set: str = ""  # the ApplicationSet that generated it (its controller ownerReference)

    @property
    def revision(self) -> str | None:
        return self.revisions[0] if self.revisions else None

    @property
    def values_from(self) -> str:
        """``inline``, ``files``, ``inline+files`` or ``chart defaults`` — across all sources."""
        inline = any(s.values.inline for s in self.sources)
        files = any(s.values.value_files for s in self.sources)
        if inline and files:
            return "inline+files"
        return "inline" if inline else "files" if files else "chart defaults"

    def manages(self, namespace: str, name: str) -> bool:
        return (namespace, name) in self.rollouts

    def to_dict(self) -> dict[str, Any]:
        attributed = attribute_renders(self.renders)
        current = self.revision
        return {
            "application": f"{self.namespace}/{self.name}",
            "app": self.name,
            "namespace": self.namespace,
            "name": self.name,
            "uid": self.uid,
            "project": self.project,
            "rollouts": [f"{ns}/{n}" for ns, n in self.rollouts],
            "sync": self.sync_status,
            "revision": current,
            "revisions": list(self.revisions),
            "health": self.health,
            "healthMessage": self.health_message,
            "operation": self.operation.to_dict() if self.operation else None,
            "reconciledAt": rfc3339(self.reconciled_at),
            "autoSync": self.auto_sync,
            "selfHeal": self.self_heal,
            "prune": self.prune,
            "multiSource": self.multi_source,
            "sources": [s.to_dict() for s in self.sources],
            "valuesFrom": self.values_from,
            "conditions": list(self.conditions),
            "applicationSet": self.application_set or None,
            "history": [{**a.render.to_dict(), "commit": a.commit, "reason": a.reason} for a in attributed],
            # How many renders the commit now synced produced in one go (2+ is the re-render race).
            "renders": len(split_renders(attributed).get(current or "", ())) or (1 if attributed else 0),
        }


@dataclass(frozen=True)
class Attribution:
    render: Render
    commit: str | None  # the commit (sha) this render belongs to
    reason: str


# ---- reading an Application ---------------------------------------------------------------------------


def _revisions(holder: Any) -> tuple[str, ...]:
    """``revisions`` when present (multi-source), else ``revision`` — Argo CD's GetRevisions()."""
    many = [r for r in as_list(dig(holder, "revisions")) if isinstance(r, str)]
    if many:
        return tuple(many)
    one = dig_str(holder, "revision")
    return (one,) if one else ()


def _sources(holder: Any) -> list[Mapping[str, Any]]:
    """``sources`` when present (``source`` is then ignored), else ``[source]``."""
    many = maps(dig(holder, "sources"))
    if many:
        return many
    one = dig(holder, "source")
    return [one] if is_map(one) else []


def _values_origin(source: Mapping[str, Any]) -> ValuesOrigin:
    helm = as_map(source.get("helm"))
    values_object = helm.get("valuesObject")
    plugin_env = tuple(as_str(e.get("name")) for e in maps(dig(source, "plugin", "env")) if e.get("name"))
    return ValuesOrigin(
        inline_values=bool(as_str(helm.get("values")).strip()),
        values_object=bool(values_object) and is_map(values_object),
        parameters=len(maps(helm.get("parameters"))),
        value_files=tuple(f for f in as_list(helm.get("valueFiles")) if isinstance(f, str)),
        plugin_env=plugin_env,
    )


def _source_view(source: Mapping[str, Any]) -> SourceView:
    return SourceView(
        repo_url=as_str(source.get("repoURL")),
        path=as_str(source.get("path")),
        chart=as_str(source.get("chart")),
        target_revision=as_str(source.get("targetRevision")),
        ref=as_str(source.get("ref")),
        name=as_str(source.get("name")),
        values=_values_origin(source),
    )


def inputs_digest(sources: Sequence[Mapping[str, Any]]) -> str:
    """A short digest of what a render used besides the git revisions (inline values and all)."""
    text = json.dumps(list(sources), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _initiated_by(holder: Any) -> tuple[str, bool]:
    by = dig_map(holder, "initiatedBy")
    automated = as_bool(by.get("automated"))
    return (as_str(by.get("username")) or ("automated" if automated else "")), automated


def _operation(status: Mapping[str, Any]) -> OperationView | None:
    op = as_map(status.get("operationState"))
    if not op:
        return None
    revisions = _revisions(op.get("syncResult")) or _revisions(dig(op, "operation", "sync"))
    by, automated = _initiated_by(op.get("operation"))
    return OperationView(
        phase=as_str(op.get("phase")),
        started_at=parse_time(op.get("startedAt")),
        finished_at=parse_time(op.get("finishedAt")),
        message=as_str(op.get("message")),
        revisions=revisions,
        initiated_by=by,
        automated=automated,
        retry_count=as_int(op.get("retryCount")),
    )


def _renders(status: Mapping[str, Any]) -> list[Render]:
    found: list[Render] = []
    for entry in maps(status.get("history")):
        by, automated = _initiated_by(entry)
        found.append(
            Render(
                id=as_int(entry.get("id")) if isinstance(entry.get("id"), int) else None,
                revisions=_revisions(entry),
                started_at=parse_time(entry.get("deployStartedAt")),
                deployed_at=parse_time(entry.get("deployedAt")),
                inputs=inputs_digest(_sources(entry)),
                initiated_by=by,
                automated=automated,
            )
        )
    # A sync still running (waiting for a healthy Rollout) has already applied its manifests, but the
    # history gets it only when it succeeds: it is a render too.
    op = as_map(status.get("operationState"))
    result = as_map(op.get("syncResult"))
    if as_str(op.get("phase")) in ("Running", "Terminating") and _sources(result):
        started = parse_time(op.get("startedAt"))
        revisions = _revisions(result)
        if not any(r.started_at == started and r.revisions == revisions for r in found):
            by, automated = _initiated_by(op.get("operation"))
            found.append(
                Render(
                    id=None,
                    revisions=revisions,
                    started_at=started,
                    deployed_at=None,
                    inputs=inputs_digest(_sources(result)),
                    initiated_by=by,
                    automated=automated,
                )
            )
    return with_changes(found)


def with_changes(renders: Iterable[Render]) -> list[Render]:
    """The renders (oldest first) with ``changed`` set by comparing each with the one before it."""
    out: list[Render] = []
    previous: Render | None = None
    for render in renders:
        if previous is None:
            changed = CHANGE_FIRST
        else:
            moved, edited = render.revisions != previous.revisions, render.inputs != previous.inputs
            changed = (
                CHANGE_BOTH
                if moved and edited
                else CHANGE_REVISION
                if moved
                else CHANGE_VALUES
                if edited
                else CHANGE_NONE
            )
        out.append(replace(render, changed=changed))
        previous = render
    return out


def _managed_rollouts(status: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    found = []
    for res in maps(status.get("resources")):
        if as_str(res.get("kind")) == "Rollout" and as_str(res.get("group")) in ("argoproj.io", ""):
            name = as_str(res.get("name"))
            if name:
                found.append((as_str(res.get("namespace")), name))
    return tuple(found)


def application_view(app: Mapping[str, Any]) -> ApplicationView:
    """The dashboard's reading of one Application object; never raises."""
    app = as_map(app)
    meta, spec, status = as_map(app.get("metadata")), as_map(app.get("spec")), as_map(app.get("status"))
    policy = as_map(spec.get("syncPolicy"))
    automated = policy.get("automated")
    # An `automated` block turns auto-sync on unless it says `enabled: false` (Argo CD ≥ 2.14).
    auto_sync = is_map(automated) and as_map(automated).get("enabled") is not False
    health = as_map(status.get("health"))
    sync = as_map(status.get("sync"))
    return ApplicationView(
        namespace=as_str(meta.get("namespace")),
        name=as_str(meta.get("name")),
        uid=as_str(meta.get("uid")),
        project=as_str(spec.get("project")),
        rollouts=_managed_rollouts(status),
        sync_status=as_str(sync.get("status")),
        revisions=_revisions(sync),
        health=as_str(health.get("status")),
        health_message=as_str(health.get("message")),
        operation=_operation(status),
        renders=tuple(_renders(status)),
        reconciled_at=parse_time(status.get("reconciledAt")),
        auto_sync=auto_sync,
        self_heal=auto_sync and as_bool(as_map(automated).get("selfHeal")),
        prune=auto_sync and as_bool(as_map(automated).get("prune")),
        sources=tuple(_source_view(s) for s in _sources(spec)),
        multi_source=bool(maps(spec.get("sources"))),
        conditions=tuple(
            f"{as_str(c.get('type'))}: {as_str(c.get('message'))}" for c in maps(status.get("conditions"))
        ),
        application_set=next(
            (
                as_str(o.get("name"))
                for o in maps(meta.get("ownerReferences"))
                if o.get("kind") == "ApplicationSet"
            ),
            "",
        ),
    )


def gitops_for_rollout(
    applications: Sequence[Mapping[str, Any]], namespace: str, name: str
) -> dict[str, Any] | None:
    """What the watcher puts under a RolloutView's ``gitops`` key: the managing Application, or None.

    When several Applications list the Rollout (a misconfiguration Argo CD flags as
    ``SharedResourceWarning``), the first by namespace/name wins and the others are named.
    """
    views = sorted((application_view(a) for a in applications), key=lambda v: (v.namespace, v.name))
    managing = [v for v in views if v.manages(namespace, name)] or views
    if not managing:
        return None
    out = managing[0].to_dict()
    if len(managing) > 1:
        out["alsoManagedBy"] = [f"{v.namespace}/{v.name}" for v in managing[1:]]
    return out


# ---- correlation ----------------------------------------------------------------------------------------


def attribute_renders(
    renders: Sequence[Render],
    commits: Sequence[tuple[str, datetime]] = (),
    *,
    window: timedelta = SPLIT_RENDER_WINDOW,
) -> list[Attribution]:
    """The commit each render belongs to.

    ``commits`` are known merges/pushes as (sha, time), from webhooks; optional. Rules, in order:

    * a render that moved the revision belongs to the revision it moved to;
    * a render that only changed inline inputs, followed within ``window`` by a render that moved the
      revision, is the first half of a split render: it belongs to that next revision (the commit's inline
      values reached the Application before its values file reached the checkout);
    * otherwise, a values-only render belongs to the newest known commit that landed before it and that no
      earlier render had synced — the change came with that commit; failing that, to its own revision;
    * a re-sync of unchanged inputs belongs to its revision and made no new pod template.
    """
    synced: set[str] = set()
    out: list[Attribution] = []
    for i, render in enumerate(renders):
        own = render.revisions[0] if render.revisions else None
        if render.changed in (CHANGE_FIRST, CHANGE_REVISION, CHANGE_BOTH):
            moved = _moved_revision(renders[i - 1] if i else None, render) or own
            out.append(Attribution(render, moved, "new revision synced"))
        elif render.changed == CHANGE_VALUES:
            follower = _next_revision_render(renders, i, window)
            if follower is not None:
                commit = _moved_revision(render, follower)
                out.append(
                    Attribution(render, commit, "inline values applied before the values file (split render)")
                )
            else:
                landed = _newest_commit_before(commits, render.at, synced | set(render.revisions))
                if landed is not None:
                    out.append(
                        Attribution(render, landed, "inline values of a commit not yet synced from git")
                    )
                else:
                    out.append(Attribution(render, own, "inline values changed in the Application"))
        else:
            out.append(Attribution(render, own, "re-sync without changes"))
        synced.update(render.revisions)
    return out


def _moved_revision(previous: Render | None, render: Render) -> str | None:
    """The revision that changed from ``previous`` to ``render`` (multi-source: the first that moved)."""
    if previous is None:
        return render.revisions[0] if render.revisions else None
    for i, rev in enumerate(render.revisions):
        if i >= len(previous.revisions) or previous.revisions[i] != rev:
            return rev
    return render.revisions[0] if render.revisions else None


def _next_revision_render(renders: Sequence[Render], i: int, window: timedelta) -> Render | None:
    start = renders[i].at
    for later in renders[i + 1 :]:
        if start is None or later.at is None or later.at - start > window:
            return None
        if later.changed in (CHANGE_REVISION, CHANGE_BOTH):
            return later
        if later.changed == CHANGE_VALUES:
            return None  # another inline edit: a different change
    return None


def _newest_commit_before(
    commits: Sequence[tuple[str, datetime]], at: datetime | None, exclude: set[str]
) -> str | None:
    if at is None:
        return None
    landed = [(when, sha) for sha, when in commits if when <= at + CLOCK_SKEW and sha not in exclude]
    return max(landed)[1] if landed else None


def split_renders(
    attributions: Sequence[Attribution], *, window: timedelta = SPLIT_RENDER_WINDOW
) -> dict[str, list[Render]]:
    """Commits rendered two or more times within ``window`` of each other (the re-render race).

    Re-syncs of unchanged inputs are left out (they make no new pod template); so are renders of one commit
    hours apart (a later edit of the Application is a change of its own, not half of a split render).
    """
    by_commit: dict[str, list[Render]] = {}
    for a in attributions:
        if a.commit and a.render.changed != CHANGE_NONE:
            by_commit.setdefault(a.commit, []).append(a.render)
    found: dict[str, list[Render]] = {}
    for sha, renders in by_commit.items():
        group: list[Render] = []
        for render in renders:
            last = group[-1] if group else None
            close = (
                last is not None
                and last.at is not None
                and render.at is not None
                and render.at - last.at <= window
            )
            group = [*group, render] if close else [render]
            if len(group) > 1:
                found[sha] = group
    return found


def render_for_release(
    renders: Sequence[Render], started_at: datetime | None, git_revision: str = ""
) -> Render | None:
    """The render that produced a release (a new pod-template hash that appeared at ``started_at``).

    The latest template-changing render that started no later than the release (allowing ``CLOCK_SKEW``).
    ``git_revision`` (what the Application reported when the release was first seen) breaks ties between
    renders started in the same instant.
    """
    if started_at is None:
        return None
    candidates = [
        r
        for r in renders
        if r.at is not None and r.at <= started_at + CLOCK_SKEW and r.changed != CHANGE_NONE
    ]
    if not candidates:
        return None
    latest = max(r.at for r in candidates if r.at is not None)
    tied = [r for r in candidates if r.at == latest]
    return next((r for r in tied if git_revision in r.revisions), tied[-1])


def render_from_dict(data: Mapping[str, Any]) -> Render:
    """A ``Render`` back from its ``to_dict`` form (as it travels in a published view); never raises."""
    data = as_map(data)
    revisions = tuple(r for r in as_list(data.get("revisions")) if isinstance(r, str))
    return Render(
        id=as_int(data.get("id")) if isinstance(data.get("id"), int) else None,
        revisions=revisions,
        started_at=parse_time(data.get("startedAt")),
        deployed_at=parse_time(data.get("deployedAt")),
        inputs=as_str(data.get("inputs")),
        initiated_by=as_str(data.get("initiatedBy")),
        automated=as_bool(data.get("automated")),
        changed=as_str(data.get("changed"), CHANGE_FIRST),
    )
