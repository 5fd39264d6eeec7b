"""Argo CD, simulated: Applications that render a Rollout from a git repository's values and sync it.

Each ``AppDef`` gets an ``argoproj.io/v1alpha1`` Application in namespace ``argocd`` and a repository of
commits (deterministic shas, author, message, the values file content). A commit may also change the
Application's inline ``helm.values`` — that part applies at once (the CR changes), while the values file is
read from the repo-server's checkout, which sees a commit only ``checkout_lag_seconds`` after it lands.
Auto-sync fires whenever (visible revision, source incl. inline values) differs from the last sync, exactly
the ``alreadyAttemptedSync`` rule — so inline values + lagging values file give two renders ~30 s apart,
each with a different ``checksum/config`` pod-template annotation: the re-render race.

Status follows Argo CD: ``sync{status,revision,comparedTo}``, ``health`` from the Rollout health rules
(Paused → Suspended, aborted → Degraded), ``resources[]``, ``operationState`` (a PostSync hook makes the
sync wait for a Healthy Rollout: ``Running`` / ``waiting for healthy state of argoproj.io/Rollout/<name>``),
``history[]`` and ``reconciledAt``. ``selfHeal`` re-applies the rendered spec when someone edits the
Rollout.

Non-goals: real git or Helm, multiple sources, pruning, sync waves, projects, RBAC.
"""

from __future__ import annotations

import copy
import hashlib
import json
import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import yaml

from kubesim.clock import Clock, rfc3339
from kubesim.controller.common import APPLICATIONS, ARGOCD_MANAGER, ROLLOUTS, Cache, Enqueue, Obj
from kubesim.scenarios.schema import AppDef, RolloutDef

ARGOCD_NAMESPACE = "argocd"
HEALTH_ORDER = ["Healthy", "Suspended", "Progressing", "Missing", "Degraded", "Unknown"]


def deep_merge(base: Obj, override: Obj) -> Obj:
    out = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def rollout_manifest(
    defn: RolloutDef,
    *,
    image: str | None = None,
    template_annotations: Obj | None = None,
    labels: Obj | None = None,
) -> Obj:
    """The Rollout object a scenario rollout (or a chart render of it) produces."""
    app_labels = {"app": defn.name, **defn.labels}
    template_meta: Obj = {"labels": dict(app_labels)}
    if template_annotations:
        template_meta["annotations"] = dict(template_annotations)
    spec: Obj = {
        "replicas": defn.replicas,
        "revisionHistoryLimit": 3,
        "selector": {"matchLabels": {"app": defn.name}},
        "strategy": copy.deepcopy(defn.strategy),
        "template": {
            "metadata": template_meta,
            "spec": {
                "containers": [
                    {
                        "name": defn.name,
                        "image": image or defn.image,
                        "imagePullPolicy": "IfNotPresent",
                        "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
                        "resources": {"requests": {"cpu": "5m", "memory": "32Mi"}},
                    }
                ]
            },
        },
    }
    spec = deep_merge(spec, defn.spec)
    if spec.get("workloadRef"):  # the referenced Deployment's template stands in (they are exclusive)
        del spec["template"]
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Rollout",
        "metadata": {
            "name": defn.name,
            "namespace": defn.namespace,
            "labels": {**app_labels, **(labels or {})},
        },
        "spec": spec,
    }


def rollout_health(ro: Obj | None) -> tuple[str, str]:
    """Argo CD's Rollout health (resource_customizations/argoproj.io/Rollout/health.lua)."""
    if ro is None:
        return "Missing", ""
    status = ro.get("status")
    if not status:
        return "Progressing", "Waiting for rollout spec update to be observed"
    generation = int(ro["metadata"].get("generation", 0))
    try:
        observed: int | None = int(str(status.get("observedGeneration")))
    except ValueError:
        observed = None
    if observed is not None and observed <= generation and observed != generation:
        return "Progressing", "Waiting for rollout spec update to be observed"
    phase = status.get("phase")
    if phase:
        return ("Suspended" if phase == "Paused" else str(phase)), str(status.get("message", ""))
    return "Progressing", "Waiting for rollout to finish: status has not been reconciled."


@dataclass
class Commit:
    sha: str
    at: datetime
    author: str
    message: str
    values: Obj


@dataclass
class _App:
    defn: AppDef
    rollout: RolloutDef
    commits: list[Commit] = field(default_factory=list)


class GitOps:
    def __init__(self, store: Any, cache: Cache, clock: Clock, enqueue: Enqueue, rng: random.Random) -> None:
        self.store = store
        self.cache = cache
        self.clock = clock
        self.enqueue = enqueue
        self.rng = rng
        self.apps: dict[str, _App] = {}
        self.by_rollout: dict[tuple[str, str], str] = {}

    # ---- set-up and commits -----------------------------------------------------------------------------

    def _sha(self) -> str:
        return "".join(self.rng.choice("0123456789abcdef") for _ in range(40))

    def add(self, defn: AppDef, rollout: RolloutDef) -> None:
        app = _App(defn, rollout)
        # The initial commit is old enough that every checkout has it.
        app.commits.append(
            Commit(
                self._sha(),
                self.clock.now() - timedelta(days=1),
                "platform-team",
                f"{defn.name}: initial deploy",
                copy.deepcopy(defn.values),
            )
        )
        self.apps[defn.name] = app
        self.by_rollout[(rollout.namespace, rollout.name)] = defn.name
        source = self._source(defn, defn.inline_values)
        self.store.create(
            APPLICATIONS,
            {
                "apiVersion": "argoproj.io/v1alpha1",
                "kind": "Application",
                "metadata": {
                    "name": defn.name,
                    "namespace": ARGOCD_NAMESPACE,
                    "finalizers": ["resources-finalizer.argocd.argoproj.io"],
                },
                "spec": {
                    "project": "default",
                    "source": source,
                    "destination": {
                        "server": "https://kubernetes.default.svc",
                        "namespace": rollout.namespace,
                    },
                    "syncPolicy": {"automated": {"prune": True, "selfHeal": defn.self_heal}},
                },
            },
            manager="argocd-server",
        )
        self.enqueue("application", (ARGOCD_NAMESPACE, defn.name), 0.0)

    @staticmethod
    def _source(defn: AppDef, inline: Obj) -> Obj:
        helm: Obj = {"valueFiles": [defn.values_file]}
        if inline:
            helm["values"] = yaml.safe_dump(inline, sort_keys=True)
        return {"repoURL": defn.repo_url, "path": defn.path, "targetRevision": "HEAD", "helm": helm}

    def commit(self, app_name: str, params: Obj) -> str:
        """A scenario commit: git for ``values`` and, at once, an Application edit for inline values."""
        app = self.apps[app_name]
        head = app.commits[-1]
        sha = head.sha
        if "values" in params:
            sha = self._sha()
            app.commits.append(
                Commit(
                    sha,
                    self.clock.now(),
                    str(params.get("author", "dev <dev@example.com>")),
                    str(params.get("message", "update values")),
                    deep_merge(head.values, params.get("values") or {}),
                )
            )
            lag = app.defn.checkout_lag_seconds
            self.enqueue("application", (ARGOCD_NAMESPACE, app_name), lag + 0.001)
        if "inline_values" in params:
            live = self.cache.get(APPLICATIONS, ARGOCD_NAMESPACE, app_name) or {}
            current = (
                yaml.safe_load(
                    ((live.get("spec") or {}).get("source") or {}).get("helm", {}).get("values", "") or ""
                )
                or {}
            )
            merged = deep_merge(current, params.get("inline_values") or {})
            self.store.patch(
                APPLICATIONS,
                ARGOCD_NAMESPACE,
                app_name,
                {"spec": {"source": self._source(app.defn, merged)}},
                manager="argocd-server",
            )
        self.enqueue("application", (ARGOCD_NAMESPACE, app_name), 0.0)
        return sha

    def commit_info(self, app_name: str) -> list[Obj]:
        """Commit metadata, like Argo CD's revision metadata API (newest last)."""
        return [
            {"revision": c.sha, "author": c.author, "date": rfc3339(c.at), "message": c.message}
            for c in self.apps[app_name].commits
        ]

    # ---- reconcile ---------------------------------------------------------------------------------------

    def _visible(self, app: _App) -> Commit:
        """The newest commit the repo-server's checkout has caught up with."""
        now = self.clock.now()
        lag = self.clock.wall(app.defn.checkout_lag_seconds)
        visible = app.commits[0]
        for c in app.commits:
            if c.at + lag <= now + timedelta(microseconds=1):
                visible = c
        return visible

    def render(self, app: _App, commit: Commit, source: Obj) -> Obj:
        inline = yaml.safe_load((source.get("helm") or {}).get("values", "") or "") or {}
        values = deep_merge(commit.values, inline)
        repository, _, default_tag = app.rollout.image.rpartition(":")
        image_values = values.get("image") or {}
        image = f"{image_values.get('repository', repository)}:{image_values.get('tag', default_tag)}"
        checksum = hashlib.sha256(json.dumps(values.get("config") or {}, sort_keys=True).encode()).hexdigest()
        return rollout_manifest(
            app.rollout,
            image=image,
            template_annotations={"checksum/config": checksum},
            labels={"app.kubernetes.io/instance": app.defn.name},
        )

    def reconcile(self, app_name: str) -> None:
        app = self.apps.get(app_name)
        live_app = self.cache.get(APPLICATIONS, ARGOCD_NAMESPACE, app_name)
        if app is None or live_app is None:
            return
        now = rfc3339(self.clock.now())
        spec_source = (live_app.get("spec") or {}).get("source") or {}
        status: Obj = copy.deepcopy(live_app.get("status") or {})
        visible = self._visible(app)
        desired = self.render(app, visible, spec_source)
        ns, name = app.rollout.namespace, app.rollout.name
        live = self.cache.get(ROLLOUTS, ns, name)
        op = status.get("operationState") or {}
        last = op.get("syncResult") or {}
        automated = (live_app.get("spec") or {}).get("syncPolicy", {}).get("automated") is not None
        self_heal = bool(
            ((live_app.get("spec") or {}).get("syncPolicy") or {}).get("automated", {}).get("selfHeal")
        )
        in_sync = live is not None and self._matches(live, desired)
        new_target = (last.get("revision"), last.get("source")) != (visible.sha, spec_source)
        # Auto-sync: a new (revision, source) pair, or drift with selfHeal; never during a running sync.
        if automated and (new_target or (self_heal and not in_sync)) and op.get("phase") != "Running":
            self._apply(desired, live)
            live = self.cache.get(ROLLOUTS, ns, name)
            in_sync = True
            op = {
                "operation": {
                    "sync": {"revision": visible.sha},
                    "initiatedBy": {"automated": True},
                    "retry": {"limit": 5},
                },
                "phase": "Running" if app.defn.hooks else "Succeeded",
                "message": (
                    f"waiting for healthy state of argoproj.io/Rollout/{name}"
                    if app.defn.hooks
                    else "successfully synced (all tasks run)"
                ),
                "startedAt": now,
                "syncResult": {
                    "revision": visible.sha,
                    "source": copy.deepcopy(spec_source),
                    "resources": [
                        {
                            "group": "argoproj.io",
                            "version": "v1alpha1",
                            "kind": "Rollout",
                            "namespace": ns,
                            "name": name,
                            "status": "Synced",
                            "message": f"rollout.argoproj.io/{name} configured",
                            "hookPhase": "Running",
                            "syncPhase": "Sync",
                        }
                    ],
                },
            }
            if not app.defn.hooks:
                op["finishedAt"] = now
                self._record_history(status, visible.sha, spec_source, now, now)
        health, message = rollout_health(live)
        if op.get("phase") == "Running":
            if health == "Healthy":
                op = {
                    **op,
                    "phase": "Succeeded",
                    "message": "successfully synced (all tasks run)",
                    "finishedAt": now,
                }
                self._record_history(
                    status,
                    op["syncResult"]["revision"],
                    op["syncResult"]["source"],
                    str(op.get("startedAt", now)),
                    now,
                )
            elif health == "Degraded":
                op = {
                    **op,
                    "phase": "Failed",
                    "finishedAt": now,
                    "message": f"one or more objects failed to apply, reason: {message}",
                }
        status["operationState"] = op
        status["sync"] = {
            "status": "Synced" if in_sync else "OutOfSync",
            "revision": visible.sha,
            "comparedTo": {
                "source": copy.deepcopy(spec_source),
                "destination": copy.deepcopy((live_app.get("spec") or {}).get("destination")),
            },
        }
        resource: Obj = {
            "group": "argoproj.io",
            "version": "v1alpha1",
            "kind": "Rollout",
            "namespace": ns,
            "name": name,
            "status": status["sync"]["status"],
            "health": {"status": health},
        }
        if message:
            resource["health"]["message"] = message
        status["resources"] = [resource]
        app_health: Obj = {
            "status": health,
            "lastTransitionTime": (status.get("health") or {}).get("lastTransitionTime", now),
        }
        if (status.get("health") or {}).get("status") != health:
            app_health["lastTransitionTime"] = now
        if health != "Healthy":
            app_health["message"] = f"Caused by argoproj.io/Rollout:{ns}/{name}"
        status["health"] = app_health
        status["sourceType"] = "Helm"
        status["summary"] = {
            "images": sorted(
                {
                    c.get("image", "")
                    for c in ((live or desired)["spec"]["template"]["spec"].get("containers") or [])
                }
            )
        }
        status["controllerNamespace"] = ARGOCD_NAMESPACE
        old = live_app.get("status") or {}
        if {k: v for k, v in status.items() if k != "reconciledAt"} != {
            k: v for k, v in old.items() if k != "reconciledAt"
        }:
            status["reconciledAt"] = now
            self.store.patch(
                APPLICATIONS, ARGOCD_NAMESPACE, app_name, {"status": status}, manager=ARGOCD_MANAGER
            )
        # Look again when the checkout catches up with a newer commit.
        pending = [
            c for c in app.commits if c.at + self.clock.wall(app.defn.checkout_lag_seconds) > self.clock.now()
        ]
        if pending:
            wait = pending[0].at + self.clock.wall(app.defn.checkout_lag_seconds) - self.clock.now()
            self.enqueue(
                "application", (ARGOCD_NAMESPACE, app_name), wait.total_seconds() * self.clock.speed + 0.001
            )

    @staticmethod
    def _matches(live: Obj, desired: Obj) -> bool:
        """Is the live Rollout what the render says (the fields Argo CD would diff)?"""
        live_spec = live.get("spec") or {}
        return all(live_spec.get(key) == value for key, value in desired["spec"].items())

    def _apply(self, desired: Obj, live: Obj | None) -> None:
        if live is None:
            self.store.create(ROLLOUTS, desired, manager=ARGOCD_MANAGER)
            return
        meta = desired["metadata"]
        patch = {"metadata": {"labels": meta["labels"]}, "spec": desired["spec"]}
        self.store.patch(ROLLOUTS, meta["namespace"], meta["name"], patch, manager=ARGOCD_MANAGER)

    @staticmethod
    def _record_history(status: Obj, revision: str, source: Obj, started: str, deployed: str) -> None:
        history = list(status.get("history") or [])
        next_id = (history[-1]["id"] + 1) if history else 0
        history.append(
            {
                "id": next_id,
                "revision": revision,
                "deployStartedAt": started,
                "deployedAt": deployed,
                "source": copy.deepcopy(source),
                "initiatedBy": {"automated": True},
            }
        )
        status["history"] = history[-10:]
