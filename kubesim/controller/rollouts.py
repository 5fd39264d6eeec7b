"""The Rollout reconciler: canary and blue-green as Argo Rollouts does them (rollout/*.go, simplified).

One ``reconcile`` reads the Rollout and its children from the cache and, in order:
- finds or creates the ReplicaSet for the current pod template (``<rollout>-<hash>``, revision annotation;
  an undo re-uses the old ReplicaSet and gives it the next revision);
- resets the status when a new revision starts (step 0, pauses and abort cleared) and notices retries;
- runs the strategy: canary steps (setWeight, pause with the controllerPause handshake, analysis,
  background analysis, promoteFull, abort with scale-down delays) or blue-green (preview, pre-promotion
  analysis, BlueGreenPause / auto-promotion, active switch, post-promotion analysis);
- scales ReplicaSets, points Services at the right hash, annotates old ReplicaSets with scale-down-deadline;
- computes conditions, phase and message and merge-patches the difference to ``/status``.
It returns nothing; timed work (pause expiry, deadlines, scale-down) is requested through ``enqueue``.

Non-goals: experiments (an experiment step completes at once), setCanaryScale, header/mirror routes, step
plugins, anti-affinity, HPA, workloadRef, ping-pong.
"""

from __future__ import annotations

import copy
import math
from datetime import datetime
from typing import Any

from kubesim.clock import Clock, parse_duration, parse_rfc3339, rfc3339
from kubesim.controller.common import (
    ANALYSIS_RUNS,
    ANALYSIS_TEMPLATES,
    CLUSTER_ANALYSIS_TEMPLATES,
    DESIRED_REPLICAS_ANNOTATION,
    EXPERIMENTS,
    HASH_LABEL,
    MANAGED_BY_ANNOTATION,
    PODS,
    REPLICA_SETS,
    REVISION_ANNOTATION,
    REVISION_HISTORY_ANNOTATION,
    ROLLOUTS,
    ROLLOUTS_MANAGER,
    SCALE_DOWN_DEADLINE_ANNOTATION,
    SERVICES,
    Cache,
    Enqueue,
    Key,
    Obj,
    merge_patch_diff,
    owner_reference,
    pod_template_hash,
    prune_empty,
    step_hash,
)
from kubesim.controller.events import (
    COMPLETED as COMPLETED_EVENT,
)
from kubesim.controller.events import (
    NEW_REPLICA_SET,
    PAUSED,
    RESUMED,
    ROLLOUT_UPDATED,
    SCALING,
    STEP_COMPLETED,
    Recorder,
    step_string,
)
from kubesim.controller.experiments import experiment_for_step
from kubesim.controller.routers import TrafficRouters
from kubesim.controller.status import (
    AVAILABLE_MESSAGE,
    HEALTHY_MESSAGE,
    NOT_AVAILABLE_MESSAGE,
    NOT_HEALTHY_MESSAGE,
    PAUSED_MESSAGE,
    RESUMED_MESSAGE,
    RETRY_MESSAGE,
    calculate_phase,
    get_condition,
    is_healthy,
    made_progress,
    new_condition,
    remove_condition,
    replicas_of,
    set_condition,
)
from kubesim.store import NotFound

COMPLETED = ("Successful", "Failed", "Error", "Inconclusive")
DEPLOYMENTS = "apps/deployments"
DEFAULT_SCALE_DOWN_DELAY = 30.0
DEFAULT_ABORT_SCALE_DOWN_DELAY = 30.0
DEFAULT_PROGRESS_DEADLINE = 600.0
DEFAULT_REVISION_HISTORY_LIMIT = 10


def revision_of(obj: Obj) -> int:
    try:
        return int((obj["metadata"].get("annotations") or {}).get(REVISION_ANNOTATION, "0"))
    except ValueError:
        return 0


def selector_string(match_labels: dict[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(match_labels.items()))


def current_set_weight(canary: Obj, index: int, abort: bool) -> int:
    """``GetCurrentSetWeight``: the last setWeight at or before the current step (100 after the last)."""
    steps = canary.get("steps") or []
    max_weight = int((canary.get("trafficRouting") or {}).get("maxTrafficWeight") or 100)
    if abort:
        return 0
    if not steps or index >= len(steps):
        return max_weight
    for i in range(index, -1, -1):
        if steps[i].get("setWeight") is not None:
            return int(steps[i]["setWeight"])
    return 0


def set_canary_scale(canary: Obj, index: int, abort: bool) -> Obj | None:
    """``UseSetCanaryScale``: the last setCanaryScale at or before the current step (routed canaries only;
    none after matchTrafficWeight, after the last step, or on an abort that scales the canary down)."""
    steps = canary.get("steps") or []
    if canary.get("trafficRouting") is None or not steps or index >= len(steps):
        return None
    if abort and canary.get("abortScaleDownDelaySeconds", DEFAULT_ABORT_SCALE_DOWN_DELAY) != 0:
        return None
    for i in range(index, -1, -1):
        scale = steps[i].get("setCanaryScale")
        if scale is None:
            continue
        return None if scale.get("matchTrafficWeight") else dict(scale)
    return None


def canary_count(canary: Obj, index: int, abort: bool, replicas: int, by_weight: int) -> int:
    """The canary's size: setCanaryScale's replicas or weight when one applies, else `by_weight`."""
    scale = set_canary_scale(canary, index, abort)
    if scale is not None and scale.get("replicas") is not None:
        return int(scale["replicas"])  # an explicit size, whatever traffic weight the canary gets
    if scale is not None and scale.get("weight") is not None:
        return math.ceil(replicas * int(scale["weight"]) / 100)
    return by_weight


class _Sync:
    """The working state of one reconcile: what the rollout is about to become."""

    def __init__(self, ro: Obj, now: datetime) -> None:
        self.ro = ro
        self.now = now
        self.stamp = rfc3339(now)
        self.spec: Obj = ro.get("spec") or {}
        self.old: Obj = ro.get("status") or {}
        self.status: Obj = copy.deepcopy(self.old)
        self.abort_message = ""
        self.add_abort = False
        self.add_pause: list[str] = []
        self.remove_pause: set[str] = set()
        self.clear_pause = False
        self.requeue: float | None = None

    def wake_in(self, sim_seconds: float) -> None:
        sim_seconds = max(sim_seconds, 0.0)
        self.requeue = sim_seconds if self.requeue is None else min(self.requeue, sim_seconds)

    def pause_condition(self, reason: str) -> Obj | None:
        for cond in self.old.get("pauseConditions") or []:
            if cond.get("reason") == reason:
                return dict(cond)
        return None

    def abort(self, message: str) -> None:
        self.add_abort = True
        self.abort_message = message

    @property
    def aborted(self) -> bool:
        return self.add_abort or bool(self.old.get("abort"))


class RolloutController:
    def __init__(self, store: Any, cache: Cache, clock: Clock, enqueue: Enqueue) -> None:
        self.store = store
        self.cache = cache
        self.clock = clock
        self.enqueue = enqueue
        self.events = Recorder(store, clock)
        self.routers = TrafficRouters(store, self.events)
        self._ro: Obj = {}  # the rollout being reconciled: the object its events are about

    # ---- entry point ------------------------------------------------------------------------------------

    def reconcile(self, key: Key) -> None:
        ro = self.cache.get(ROLLOUTS, *key)
        if ro is None or ro["metadata"].get("deletionTimestamp"):
            return
        sync = _Sync(ro, self.clock.now())
        self._ro = ro
        deployment = None
        if sync.spec.get("workloadRef"):
            deployment = self._resolve_workload(sync)
            if deployment is None:
                return
        strategy = sync.spec.get("strategy") or {}
        if strategy.get("canary") is None and strategy.get("blueGreen") is None:
            self._invalid(
                sync, "Rollout has missing field '.spec.strategy.canary or .spec.strategy.blueGreen'"
            )
            return
        all_rs = self.cache.children(ro["metadata"]["uid"], REPLICA_SETS)
        new_rs = self._new_replica_set(sync, all_rs)
        all_rs = [rs for rs in all_rs if rs["metadata"]["name"] != new_rs["metadata"]["name"]] + [new_rs]
        new_hash = new_rs["metadata"]["labels"][HASH_LABEL]
        status = sync.status

        # A new revision restarts the update: step 0, no pause, no abort (``resetRolloutStatus``).
        if status.get("currentPodHash") and status["currentPodHash"] != new_hash:
            self._reset(sync)
        status["currentPodHash"] = new_hash
        if status.get("abortedAt") and not status.get("abort"):
            self._reset(sync)  # retry after abort
            status.pop("abortedAt", None)

        stable_rs = next(
            (
                rs
                for rs in all_rs
                if status.get("stableRS") and rs["metadata"]["labels"].get(HASH_LABEL) == status["stableRS"]
            ),
            None,
        )
        if strategy.get("canary") is not None:
            self._canary(sync, new_rs, stable_rs, all_rs)
        else:
            self._blue_green(sync, new_rs, stable_rs, all_rs)
        self._restart(sync, all_rs)
        self._cleanup(sync, all_rs)
        self._persist(sync, new_rs)
        if deployment is not None:
            self._scale_down_workload(sync, deployment)

    # ---- workloadRef ------------------------------------------------------------------------------------

    def _resolve_workload(self, sync: _Sync) -> Obj | None:
        """The referenced Deployment's pod template (and selector) stand in for the Rollout's own."""
        ref: Obj = sync.spec["workloadRef"]
        ns = sync.ro["metadata"]["namespace"]
        deployment = (
            self._get(DEPLOYMENTS, ns, str(ref.get("name", "")))
            if (ref.get("apiVersion"), ref.get("kind")) == ("apps/v1", "Deployment")
            else None
        )
        if deployment is None:
            self._invalid(
                sync,
                f"workloadRef: {ref.get('kind')} {ref.get('name')!r} not found or not an apps/v1 Deployment",
            )
            return None
        dspec: Obj = deployment.get("spec") or {}
        sync.spec = {
            **sync.spec,
            "template": copy.deepcopy(dspec.get("template") or {}),
            "selector": sync.spec.get("selector") or copy.deepcopy(dspec.get("selector") or {}),
        }
        sync.status["workloadObservedGeneration"] = str(deployment["metadata"].get("generation", 1))
        return deployment

    def _scale_down_workload(self, sync: _Sync, deployment: Obj) -> None:
        """scaleDown: onsuccess — once revision 1 is Healthy, the referenced Deployment goes to 0."""
        ref: Obj = sync.spec["workloadRef"]
        healthy = (sync.ro.get("status") or {}).get("phase") == "Healthy"
        if ref.get("scaleDown") != "onsuccess" or revision_of(sync.ro) != 1 or not healthy:
            return
        if (deployment.get("spec") or {}).get("replicas") != 0:
            meta = deployment["metadata"]
            self.store.patch(
                DEPLOYMENTS,
                meta["namespace"],
                meta["name"],
                {"spec": {"replicas": 0}},
                manager=ROLLOUTS_MANAGER,
            )

    # ---- replica sets -----------------------------------------------------------------------------------

    def _new_replica_set(self, sync: _Sync, all_rs: list[Obj]) -> Obj:
        ro = sync.ro
        meta = ro["metadata"]
        template = copy.deepcopy(sync.spec.get("template") or {})
        collision = sync.old.get("collisionCount")
        new_hash = pod_template_hash(template, collision)
        max_revision = max((revision_of(rs) for rs in all_rs), default=0)
        existing = next((rs for rs in all_rs if rs["metadata"]["labels"].get(HASH_LABEL) == new_hash), None)
        if existing is not None:
            revision = revision_of(existing)
            if revision < max_revision:  # rollback to an old template: it becomes the newest revision
                history = [
                    h
                    for h in (existing["metadata"].get("annotations") or {})
                    .get(REVISION_HISTORY_ANNOTATION, "")
                    .split(",")
                    if h
                ]
                annotations = {
                    REVISION_ANNOTATION: str(max_revision + 1),
                    REVISION_HISTORY_ANNOTATION: ",".join([*history, str(revision)]),
                }
                existing = self.store.patch(
                    REPLICA_SETS,
                    meta["namespace"],
                    existing["metadata"]["name"],
                    {"metadata": {"annotations": annotations}},
                    manager=ROLLOUTS_MANAGER,
                )
                self._set_rollout_revision(ro, max_revision + 1)
            else:
                self._set_rollout_revision(ro, revision)
            return existing
        revision = max_revision + 1
        labels = dict((template.get("metadata") or {}).get("labels") or {})
        labels[HASH_LABEL] = new_hash
        template.setdefault("metadata", {})["labels"] = labels
        match_labels = dict(((sync.spec.get("selector") or {}).get("matchLabels")) or {})
        match_labels[HASH_LABEL] = new_hash
        rs: Obj = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": f"{meta['name']}-{new_hash}",
                "namespace": meta["namespace"],
                "labels": labels,
                "annotations": {
                    REVISION_ANNOTATION: str(revision),
                    DESIRED_REPLICAS_ANNOTATION: str(replicas_of(sync.spec)),
                },
                "ownerReferences": [owner_reference(ro)],
            },
            "spec": {"replicas": 0, "selector": {"matchLabels": match_labels}, "template": template},
            "status": {"replicas": 0},
        }
        created: Obj = self.store.create(REPLICA_SETS, rs, manager=ROLLOUTS_MANAGER)
        reason, message = NEW_REPLICA_SET
        self.events.normal(ro, reason, message.format(name=created["metadata"]["name"], revision=revision))
        self._set_rollout_revision(ro, revision)
        return created

    def _set_rollout_revision(self, ro: Obj, revision: int) -> None:
        if (ro["metadata"].get("annotations") or {}).get(REVISION_ANNOTATION) != str(revision):
            self.store.patch(
                ROLLOUTS,
                ro["metadata"]["namespace"],
                ro["metadata"]["name"],
                {"metadata": {"annotations": {REVISION_ANNOTATION: str(revision)}}},
                manager=ROLLOUTS_MANAGER,
            )
            ro.setdefault("metadata", {}).setdefault("annotations", {})[REVISION_ANNOTATION] = str(revision)
            reason, message = ROLLOUT_UPDATED
            self.events.normal(ro, reason, message.format(revision=revision))

    def _scale(
        self,
        rs: Obj,
        replicas: int,
        rollout_replicas: int,
        *,
        deadline: str | None = None,
        clear_deadline: bool = False,
    ) -> None:
        meta = rs["metadata"]
        annotations = meta.get("annotations") or {}
        patch: Obj = {}
        if (rs.get("spec") or {}).get("replicas") != replicas:
            patch["spec"] = {"replicas": replicas}
        wanted: Obj = {}
        if annotations.get(DESIRED_REPLICAS_ANNOTATION) != str(rollout_replicas):
            wanted[DESIRED_REPLICAS_ANNOTATION] = str(rollout_replicas)
        if deadline is not None and annotations.get(SCALE_DOWN_DEADLINE_ANNOTATION) != deadline:
            wanted[SCALE_DOWN_DEADLINE_ANNOTATION] = deadline
        if clear_deadline and SCALE_DOWN_DEADLINE_ANNOTATION in annotations:
            wanted[SCALE_DOWN_DEADLINE_ANNOTATION] = None
        if wanted:
            patch["metadata"] = {"annotations": wanted}
        if patch:
            old = int((rs.get("spec") or {}).get("replicas") or 0)
            updated = self.store.patch(
                REPLICA_SETS, meta["namespace"], meta["name"], patch, manager=ROLLOUTS_MANAGER
            )
            rs.clear()
            rs.update(updated)
            if "spec" in patch and self._ro:
                reason, message = SCALING
                text = message.format(
                    operation="up" if replicas > old else "down",
                    name=meta["name"],
                    revision=revision_of(rs),
                    old=old,
                    new=replicas,
                )
                self.events.normal(self._ro, reason, text)

    def _scale_down_later(self, sync: _Sync, rs: Obj, delay: float, replicas: int) -> None:
        """Keep ``rs`` up until its ``scale-down-deadline``, then scale it to zero (delay 0: never)."""
        if (rs.get("spec") or {}).get("replicas", 0) == 0:
            self._scale(rs, 0, replicas, clear_deadline=True)
            return
        if delay <= 0:
            return
        annotations = rs["metadata"].get("annotations") or {}
        deadline = parse_rfc3339(annotations.get(SCALE_DOWN_DEADLINE_ANNOTATION, ""))
        if deadline is None:
            deadline = sync.now + self.clock.wall(delay)
            self._scale(rs, rs["spec"]["replicas"], replicas, deadline=rfc3339(deadline))
        if sync.now >= deadline:
            self._scale(rs, 0, replicas, clear_deadline=True)
        else:
            sync.wake_in((deadline - sync.now).total_seconds() * self.clock.speed + 0.01)

    # ---- status helpers ---------------------------------------------------------------------------------

    def _reset(self, sync: _Sync) -> None:
        status = sync.status
        sync.clear_pause = True
        status.pop("abort", None)
        status.pop("abortedAt", None)
        status.pop("promoteFull", None)
        canary = status.get("canary") or {}
        canary.pop("currentStepAnalysisRunStatus", None)
        canary.pop("currentBackgroundAnalysisRunStatus", None)
        status["canary"] = canary
        bg = status.get("blueGreen") or {}
        for key in (
            "prePromotionAnalysisRunStatus",
            "postPromotionAnalysisRunStatus",
            "scaleUpPreviewCheckPoint",
        ):
            bg.pop(key, None)
        status["blueGreen"] = bg
        steps = ((sync.spec.get("strategy") or {}).get("canary") or {}).get("steps") or []
        if (sync.spec.get("strategy") or {}).get("canary") is not None:
            status["currentStepIndex"] = 0 if steps else None
        # The reset is the new baseline for this reconcile's pause/abort bookkeeping.
        sync.old = {**sync.old, "pauseConditions": None, "controllerPause": None, "abort": None}

    def _analysis_run(
        self,
        sync: _Sync,
        new_rs: Obj,
        stable_hash: str | None,
        analysis: Obj,
        rollout_type: str,
        suffix: str,
        current_name: str | None,
    ) -> Obj | None:
        """The current AnalysisRun of one kind, created from its templates when there is none."""
        ro = sync.ro
        ns = ro["metadata"]["namespace"]
        if current_name:
            existing = self.cache.get(ANALYSIS_RUNS, ns, current_name)
            if existing is not None:
                return existing
        new_hash = new_rs["metadata"]["labels"][HASH_LABEL]
        revision = revision_of(new_rs)
        base = f"{ro['metadata']['name']}-{new_hash}-{revision}{suffix}"
        name, n = base, 0
        while self.cache.get(ANALYSIS_RUNS, ns, name) is not None:
            n += 1
            name = f"{base}.{n}"
        metrics: list[Obj] = []
        template_args: list[Obj] = []
        for ref in analysis.get("templates") or []:
            template = self._template(ns, str(ref.get("templateName", "")), bool(ref.get("clusterScope")))
            if template is None:
                continue
            metrics.extend(copy.deepcopy((template.get("spec") or {}).get("metrics") or []))
            template_args.extend(copy.deepcopy((template.get("spec") or {}).get("args") or []))
        args_by_name: dict[str, Obj] = {str(a["name"]): a for a in template_args}
        for arg in analysis.get("args") or []:
            resolved = {"name": arg["name"]}
            if "value" in arg:
                resolved["value"] = str(arg["value"])
            elif (arg.get("valueFrom") or {}).get("podTemplateHashValue"):
                which = arg["valueFrom"]["podTemplateHashValue"]
                resolved["value"] = (stable_hash or new_hash) if which == "Stable" else new_hash
            args_by_name[str(arg["name"])] = resolved
        labels = {HASH_LABEL: new_hash, "rollout-type": rollout_type}
        if rollout_type == "Step":
            labels["step-index"] = suffix.lstrip("-")
        run: Obj = {
            "apiVersion": "argoproj.io/v1alpha1",
            "kind": "AnalysisRun",
            "metadata": {
                "name": name,
                "namespace": ns,
                "labels": labels,
                "annotations": {REVISION_ANNOTATION: str(revision)},
                "ownerReferences": [owner_reference(ro)],
            },
            "spec": {"metrics": metrics, **({"args": list(args_by_name.values())} if args_by_name else {})},
        }
        if not metrics:
            run["status"] = {
                "phase": "Error",
                "message": "no metrics: AnalysisTemplate(s) "
                + ", ".join(str(t.get("templateName")) for t in analysis.get("templates") or [])
                + " not found",
                "startedAt": sync.stamp,
            }
        created: Obj = self.store.create(ANALYSIS_RUNS, run, manager=ROLLOUTS_MANAGER)
        return created

    def _template(self, ns: str, name: str, cluster_scope: bool) -> Obj | None:
        """An AnalysisTemplate of the namespace, or with ``clusterScope`` a ClusterAnalysisTemplate."""
        if not cluster_scope:
            found: Obj | None = self.cache.get(ANALYSIS_TEMPLATES, ns, name)
            return found
        try:
            cluster: Obj = self.store.get(CLUSTER_ANALYSIS_TEMPLATES, None, name)
        except NotFound:
            return None
        return cluster

    def _terminate_runs(self, sync: _Sync, keep: set[str]) -> None:
        """Stop running AnalysisRuns that no longer matter (``cancelAnalysisRuns``)."""
        for run in self.cache.children(sync.ro["metadata"]["uid"], ANALYSIS_RUNS):
            name = run["metadata"]["name"]
            if name in keep or (run.get("status") or {}).get("phase") in COMPLETED:
                continue
            if not (run.get("spec") or {}).get("terminate"):
                self.store.patch(
                    ANALYSIS_RUNS,
                    run["metadata"]["namespace"],
                    name,
                    {"spec": {"terminate": True}},
                    manager=ROLLOUTS_MANAGER,
                )

    def _promotion_analysis(
        self, sync: _Sync, new_rs: Obj, stable_hash: str | None, bg_status: Obj, when: str
    ) -> bool:
        """Blue-green pre- or post-promotion analysis (``when`` is "pre" or "post"): True once it passed.

        Its run status is recorded in ``bg_status``; a Failed or Error run aborts with upstream's message.
        """
        kind = "PrePromotion" if when == "pre" else "PostPromotion"
        key = f"{when}PromotionAnalysisRunStatus"
        blue_green = (sync.spec.get("strategy") or {}).get("blueGreen") or {}
        analysis = blue_green[f"{when}PromotionAnalysis"]
        current = bg_status.get(key) or {}
        run = self._analysis_run(sync, new_rs, stable_hash, analysis, kind, f"-{when}", current.get("name"))
        if run is None:
            return True
        rs_status = self._run_status(run)
        self._analysis_event(sync, current, run, kind)
        bg_status[key] = rs_status
        if rs_status["status"] in ("Failed", "Error"):
            sync.abort(
                f"Blue/green {when}-promotion analysis phase error/failed: " + rs_status.get("message", "")
            )
        return bool(rs_status["status"] == "Successful")

    def _analysis_event(self, sync: _Sync, previous: Obj, run: Obj, run_type: str) -> None:
        """``emitAnalysisRunStatusChanges``: the run got its first phase, or the same run changed phase."""
        phase = (run.get("status") or {}).get("phase")
        name = run["metadata"]["name"]
        if not phase or (previous and (previous.get("name") != name or previous.get("status") == phase)):
            return
        before = previous.get("status") if previous else "NoPreviousStatus"
        message = f"{run_type} Analysis Run '{name}' Status New: '{phase}' Previous: '{before}'"
        event_type = "Warning" if phase in ("Failed", "Error") else "Normal"
        self.events.record(sync.ro, event_type, f"AnalysisRun{phase}", message)

    @staticmethod
    def _run_status(run: Obj) -> Obj:
        st = run.get("status") or {}
        out = {"name": run["metadata"]["name"], "status": st.get("phase", "Pending")}
        if st.get("message"):
            out["message"] = st["message"]
        return out

    def _sync_service(self, ns: str, name: str | None, pod_hash: str | None, ro_name: str) -> None:
        if not name or not pod_hash:
            return
        svc = self.cache.get(SERVICES, ns, name)
        if svc is None:
            return
        selector = (svc.get("spec") or {}).get("selector") or {}
        annotations = svc["metadata"].get("annotations") or {}
        if selector.get(HASH_LABEL) == pod_hash and annotations.get(MANAGED_BY_ANNOTATION) == ro_name:
            return
        self.store.patch(
            SERVICES,
            ns,
            name,
            {
                "metadata": {"annotations": {MANAGED_BY_ANNOTATION: ro_name}},
                "spec": {"selector": {HASH_LABEL: pod_hash}},
            },
            manager=ROLLOUTS_MANAGER,
        )

    # ---- canary -----------------------------------------------------------------------------------------

    def _canary(self, sync: _Sync, new_rs: Obj, stable_rs: Obj | None, all_rs: list[Obj]) -> None:
        spec, status = sync.spec, sync.status
        canary: Obj = spec["strategy"]["canary"] or {}
        steps: list[Obj] = canary.get("steps") or []
        replicas = replicas_of(spec)
        new_hash = new_rs["metadata"]["labels"][HASH_LABEL]
        routed = canary.get("trafficRouting") is not None
        ns, ro_name = sync.ro["metadata"]["namespace"], sync.ro["metadata"]["name"]
        hash_of_steps = step_hash(steps)
        if (
            status.get("currentStepHash")
            and status["currentStepHash"] != hash_of_steps
            and status.get("stableRS") != new_hash
        ):
            status["currentStepIndex"] = 0
        status["currentStepHash"] = hash_of_steps
        canary_status: Obj = status.setdefault("canary", {})

        if stable_rs is None:  # initial deploy: the first ReplicaSet is stable at once
            status["stableRS"] = new_hash
            status["currentStepIndex"] = len(steps) if steps else None
            self._scale(new_rs, replicas, replicas)
            stable_rs = new_rs
        index = int(status.get("currentStepIndex") or 0)
        index_at_start = index  # the traffic routers act on the step this reconcile started at
        if steps and status.get("currentStepIndex") is None:
            status["currentStepIndex"] = 0
        promoted = status.get("stableRS") == new_hash
        stable_hash = status.get("stableRS")

        if (
            not promoted
            and not sync.aborted
            and not status.get("promoteFull")
            and not spec.get("paused")
            and index < len(steps)
            and self._canary_step(sync, new_rs, stable_hash, steps[index], index, replicas, routed)
        ):
            index += 1
            status["currentStepIndex"] = index
            reason, message = STEP_COMPLETED
            text = message.format(index=index, count=len(steps), step=step_string(steps[index - 1]))
            self.events.normal(sync.ro, reason, text)
            canary_status.pop("currentStepAnalysisRunStatus", None)
            sync.remove_pause.add("CanaryPauseStep")
            self.enqueue("rollout", (ns, ro_name), 0.0)
        if not promoted and not sync.aborted:
            self._background_analysis(sync, new_rs, stable_hash, canary, index)
        on_experiment = (
            not promoted
            and not sync.aborted
            and not status.get("promoteFull")
            and index < len(steps)
            and steps[index].get("experiment") is not None
        )
        if any(s.get("experiment") is not None for s in steps):
            self._cancel_experiments(sync, canary_status.get("currentExperiment") if on_experiment else None)
        if sync.aborted and steps:
            # syncRolloutStatusCanary: an aborted update goes back to step 0, or to the end of the steps
            # when the stable ReplicaSet is the current one.
            index = len(steps) if status.get("stableRS") == new_hash else 0
            status["currentStepIndex"] = index

        # Desired replica counts and weight.
        weight = 100 if status.get("promoteFull") else current_set_weight(canary, index, sync.aborted)
        if promoted:
            weight = 0
        new_count = math.ceil(replicas * weight / 100)
        if not status.get("promoteFull"):
            new_count = canary_count(canary, index, sync.aborted, replicas, new_count)
        if promoted:
            new_count = replicas
        new_available = int((new_rs.get("status") or {}).get("availableReplicas") or 0)
        # With traffic routing the stable side keeps full capacity; basic canary trades replicas.
        stable_count = replicas if routed or promoted else math.ceil(replicas * (100 - weight) / 100)

        if sync.aborted and not promoted:
            if routed:
                delay = float(canary.get("abortScaleDownDelaySeconds", DEFAULT_ABORT_SCALE_DOWN_DELAY))
                self._scale_down_later(sync, new_rs, delay, replicas)
            else:
                self._scale(new_rs, 0, replicas)
        elif not promoted:
            self._scale(new_rs, new_count, replicas, clear_deadline=True)
        else:
            self._scale(new_rs, replicas, replicas, clear_deadline=True)
        if stable_rs is not None and stable_rs is not new_rs:
            self._scale(stable_rs, stable_count, replicas, clear_deadline=True)

        # Old ReplicaSets (neither stable nor new) go away: at once without routing, after a delay with it.
        for rs in all_rs:
            if (
                rs is new_rs
                or rs is stable_rs
                or rs["metadata"]["name"]
                in (new_rs["metadata"]["name"], (stable_rs or {}).get("metadata", {}).get("name"))
            ):
                continue
            if routed:
                self._scale_down_later(
                    sync, rs, float(canary.get("scaleDownDelaySeconds", DEFAULT_SCALE_DOWN_DELAY)), replicas
                )
            else:
                self._scale(rs, 0, replicas, clear_deadline=True)

        # Full promotion once every step is done (or promoteFull) and the new pods are all available.
        done = not steps or index >= len(steps) or bool(status.get("promoteFull"))
        if not promoted and not sync.aborted and done and new_available >= replicas:
            status["stableRS"] = new_hash
            status["currentStepIndex"] = len(steps) if steps else None
            status.pop("promoteFull", None)
            sync.clear_pause = True
            promoted = True
            self._terminate_runs(sync, keep=set())
            self.enqueue("rollout", (ns, ro_name), 0.0)

        if routed:
            actual = weight
            if not promoted and not sync.aborted and new_available < new_count:
                actual = self._previous_weight(canary, index)
            weights = {
                "canary": {
                    "weight": 0 if promoted or sync.aborted else actual,
                    "serviceName": canary.get("canaryService", ""),
                    "podTemplateHash": new_hash,
                },
                "stable": {
                    "weight": 100 if promoted or sync.aborted else 100 - actual,
                    "serviceName": canary.get("stableService", ""),
                    "podTemplateHash": status.get("stableRS", new_hash),
                },
            }
            canary_status["weights"] = {
                k: {kk: vv for kk, vv in v.items() if vv != ""} for k, v in weights.items()
            }
            if promoted or sync.aborted or status.get("promoteFull") or new_available == 0:
                self.routers.remove_managed_routes(sync.ro)
            elif index_at_start < len(steps) and revision_of(sync.ro) > 1:
                self.routers.set_managed_route(sync.ro, steps[index_at_start])
            self.routers.set_weight(
                sync.ro, weights["canary"]["weight"], new_hash, str(status.get("stableRS", new_hash))
            )
        self._sync_service(ns, canary.get("canaryService"), new_hash, ro_name)
        self._sync_service(ns, canary.get("stableService"), status.get("stableRS"), ro_name)

        status["replicas"] = sum(int((rs.get("status") or {}).get("replicas") or 0) for rs in all_rs)
        status["updatedReplicas"] = int((new_rs.get("status") or {}).get("replicas") or 0)
        status["readyReplicas"] = sum(
            int((rs.get("status") or {}).get("readyReplicas") or 0) for rs in all_rs
        )
        status["availableReplicas"] = sum(
            int((rs.get("status") or {}).get("availableReplicas") or 0) for rs in all_rs
        )
        status["HPAReplicas"] = status["replicas"]
        status["selector"] = selector_string(((spec.get("selector") or {}).get("matchLabels")) or {})

    @staticmethod
    def _previous_weight(canary: Obj, index: int) -> int:
        steps = canary.get("steps") or []
        for i in range(min(index, len(steps)) - 1, -1, -1):
            if steps[i].get("setWeight") is not None:
                return int(steps[i]["setWeight"])
        return 0

    def _canary_step(
        self,
        sync: _Sync,
        new_rs: Obj,
        stable_hash: str | None,
        step: Obj,
        index: int,
        replicas: int,
        routed: bool,
    ) -> bool:
        """Is the current step complete? Starts pauses and analyses as a side effect."""
        status = sync.status
        if step.get("setWeight") is not None or step.get("setCanaryScale") is not None:
            # AtDesiredReplicaCountsForCanary: the canary at the size its weight or setCanaryScale asks.
            canary: Obj = sync.spec["strategy"]["canary"] or {}
            weight = current_set_weight(canary, index, sync.aborted)
            wanted = canary_count(canary, index, sync.aborted, replicas, math.ceil(replicas * weight / 100))
            st = new_rs.get("status") or {}
            return (new_rs.get("spec") or {}).get("replicas") == wanted and int(
                st.get("availableReplicas") or 0
            ) >= wanted
        if "pause" in step:
            return self._pause_done(
                sync,
                "CanaryPauseStep",
                parse_duration((step.get("pause") or {}).get("duration"))
                if (step.get("pause") or {}).get("duration") is not None
                else None,
            )
        if step.get("analysis") is not None:
            current = (status.get("canary") or {}).get("currentStepAnalysisRunStatus") or {}
            run = self._analysis_run(
                sync, new_rs, stable_hash, step["analysis"], "Step", f"-{index}", current.get("name")
            )
            if run is None:
                return False
            run_status = self._run_status(run)
            self._analysis_event(sync, current, run, "Step")
            status.setdefault("canary", {})["currentStepAnalysisRunStatus"] = run_status
            phase = run_status["status"]
            if phase == "Successful":
                return True
            if phase in ("Failed", "Error"):
                sync.abort(
                    f"Step-based analysis phase error/failed: {run_status.get('message', '')}".rstrip(": ")
                )
            elif phase == "Inconclusive":
                if (
                    sync.old.get("controllerPause")
                    and sync.pause_condition("InconclusiveAnalysisRun") is None
                ):
                    return True
                if sync.pause_condition("InconclusiveAnalysisRun") is None:
                    sync.add_pause.append("InconclusiveAnalysisRun")
            return False
        if step.get("experiment") is not None:
            return self._experiment_step(sync, new_rs, stable_hash, step["experiment"], index)
        # Header/mirror routes and step plugins: not simulated, complete at once.
        return True

    def _experiment_step(
        self, sync: _Sync, new_rs: Obj, stable_hash: str | None, step: Obj, index: int
    ) -> bool:
        """``reconcileExperiments`` for the current experiment step; True once its Experiment succeeded."""
        ro = sync.ro
        ns = ro["metadata"]["namespace"]
        canary_status = sync.status.setdefault("canary", {})
        stable_rs = next(
            (
                rs
                for rs in self.cache.children(ro["metadata"]["uid"], REPLICA_SETS)
                if rs["metadata"]["labels"].get(HASH_LABEL) == stable_hash
            ),
            None,
        )
        if stable_rs is None:
            return False  # an Experiment is only created once the stable ReplicaSet exists
        wanted = experiment_for_step(ro, step, new_rs, stable_rs, index)
        name = str(canary_status.get("currentExperiment") or wanted["metadata"]["name"])
        current = self._get(EXPERIMENTS, ns, name)
        if current is None:
            current = self.store.create(EXPERIMENTS, wanted, manager=ROLLOUTS_MANAGER)
            self.events.normal(ro, "ExperimentCreated", f"Created Experiment '{current['metadata']['name']}'")
        phase = (current.get("status") or {}).get("phase")
        if phase == "Successful":
            canary_status.pop("currentExperiment", None)
            return True
        if phase in ("Failed", "Error"):
            message = "Experiment analysis phase is error/failed"
            if (current.get("status") or {}).get("message"):
                message += ": " + str(current["status"]["message"])
            sync.abort(message)
        elif phase == "Inconclusive":
            if sync.pause_condition("InconclusiveExperiment") is None:
                sync.add_pause.append("InconclusiveExperiment")
        else:
            canary_status["currentExperiment"] = current["metadata"]["name"]
        return False

    def _cancel_experiments(self, sync: _Sync, keep: str | None) -> None:
        """``cancelExperiments``: terminate the rollout's running Experiments other than ``keep``."""
        ro = sync.ro
        items, _ = self.store.list(EXPERIMENTS, ro["metadata"]["namespace"])
        for ex in items:
            meta = ex["metadata"]
            owned = any(
                r.get("controller") and r.get("uid") == ro["metadata"]["uid"]
                for r in meta.get("ownerReferences") or []
            )
            if not owned or meta["name"] == keep or (ex.get("spec") or {}).get("terminate"):
                continue
            if (ex.get("status") or {}).get("phase") in COMPLETED:
                continue
            self.store.patch(
                EXPERIMENTS,
                meta["namespace"],
                meta["name"],
                {"spec": {"terminate": True}},
                manager=ROLLOUTS_MANAGER,
            )
        if keep is None:
            sync.status.get("canary", {}).pop("currentExperiment", None)

    def _get(self, resource: str, namespace: str, name: str) -> Obj | None:
        try:
            found: Obj = self.store.get(resource, namespace, name)
        except NotFound:
            return None
        return found

    def _pause_done(self, sync: _Sync, reason: str, duration: float | None) -> bool:
        """The pause handshake of ``reconcileCanaryPause`` / ``CompletedCanaryPauseStep``."""
        cond = sync.pause_condition(reason)
        if sync.old.get("controllerPause") and cond is None:
            return True  # a user cleared the pause conditions
        if cond is None:
            sync.add_pause.append(reason)
            if duration is not None:
                sync.wake_in(duration)
            return False
        if duration is not None:
            started = parse_rfc3339(str(cond.get("startTime", ""))) or sync.now
            waited = (sync.now - started).total_seconds() * self.clock.speed
            if waited >= duration:
                return True
            sync.wake_in(duration - waited)
        return False

    def _background_analysis(
        self, sync: _Sync, new_rs: Obj, stable_hash: str | None, canary: Obj, index: int
    ) -> None:
        analysis = canary.get("analysis")
        if not analysis or index < int(analysis.get("startingStep") or 0):
            return
        canary_status = sync.status.setdefault("canary", {})
        current = canary_status.get("currentBackgroundAnalysisRunStatus") or {}
        run = self._analysis_run(sync, new_rs, stable_hash, analysis, "Background", "", current.get("name"))
        if run is None:
            return
        run_status = self._run_status(run)
        self._analysis_event(sync, current, run, "Background")
        canary_status["currentBackgroundAnalysisRunStatus"] = run_status
        if run_status["status"] in ("Failed", "Error"):
            sync.abort(
                f"Background analysis phase error/failed: {run_status.get('message', '')}".rstrip(": ")
            )
        elif (
            run_status["status"] == "Inconclusive"
            and sync.pause_condition("InconclusiveAnalysisRun") is None
            and not sync.old.get("controllerPause")
        ):
            sync.add_pause.append("InconclusiveAnalysisRun")

    # ---- blue-green -------------------------------------------------------------------------------------

    def _blue_green(self, sync: _Sync, new_rs: Obj, stable_rs: Obj | None, all_rs: list[Obj]) -> None:
        spec, status = sync.spec, sync.status
        bg: Obj = spec["strategy"]["blueGreen"] or {}
        replicas = replicas_of(spec)
        new_hash = new_rs["metadata"]["labels"][HASH_LABEL]
        ns, ro_name = sync.ro["metadata"]["namespace"], sync.ro["metadata"]["name"]
        bg_status: Obj = status.setdefault("blueGreen", {})
        if stable_rs is None:
            status["stableRS"] = new_hash
            stable_rs = new_rs
        stable_hash = status["stableRS"]
        self._scale(
            new_rs,
            replicas
            if not (sync.aborted and stable_hash != new_hash)
            else (new_rs.get("spec") or {}).get("replicas", 0),
            replicas,
            clear_deadline=not sync.aborted,
        )
        new_available = int((new_rs.get("status") or {}).get("availableReplicas") or 0)
        new_ready = new_available >= replicas

        if stable_hash == new_hash:
            bg_status["activeSelector"] = new_hash
            if bg.get("previewService"):
                bg_status["previewSelector"] = new_hash
        elif sync.aborted:
            bg_status["activeSelector"] = stable_hash
            delay = float(bg.get("abortScaleDownDelaySeconds", DEFAULT_ABORT_SCALE_DOWN_DELAY))
            self._scale_down_later(sync, new_rs, delay, replicas)
        else:
            if new_ready and bg.get("previewService"):
                bg_status["previewSelector"] = new_hash
            active_switched = bg_status.get("activeSelector") == new_hash
            if not active_switched and new_ready:
                pre_ok = True
                if bg.get("prePromotionAnalysis"):
                    pre_ok = self._promotion_analysis(sync, new_rs, stable_hash, bg_status, "pre")
                if not sync.add_abort and not spec.get("paused"):
                    auto = bg.get("autoPromotionEnabled", True) is not False
                    seconds = bg.get("autoPromotionSeconds")
                    if status.get("promoteFull"):
                        paused_done = True
                    elif not auto:
                        paused_done = self._pause_done(sync, "BlueGreenPause", None)
                    elif seconds:
                        paused_done = self._pause_done(sync, "BlueGreenPause", float(seconds))
                    else:
                        paused_done = True
                    if paused_done and (pre_ok or status.get("promoteFull")):
                        bg_status["activeSelector"] = new_hash
                        sync.remove_pause.add("BlueGreenPause")
                        active_switched = True
                        self.enqueue("rollout", (ns, ro_name), 0.0)
            if active_switched:
                post_ok = True
                if bg.get("postPromotionAnalysis") and not status.get("promoteFull"):
                    post_ok = self._promotion_analysis(sync, new_rs, stable_hash, bg_status, "post")
                if post_ok and not sync.add_abort:
                    status["stableRS"] = new_hash
                    status.pop("promoteFull", None)
                    sync.clear_pause = True
                    self.enqueue("rollout", (ns, ro_name), 0.0)

        active_hash = bg_status.get("activeSelector") or stable_hash
        for rs in all_rs:
            rs_hash = rs["metadata"]["labels"].get(HASH_LABEL)
            if rs_hash in (new_hash, active_hash):
                continue
            self._scale_down_later(
                sync, rs, float(bg.get("scaleDownDelaySeconds", DEFAULT_SCALE_DOWN_DELAY)), replicas
            )
        self._sync_service(ns, bg.get("activeService"), bg_status.get("activeSelector"), ro_name)
        self._sync_service(ns, bg.get("previewService"), bg_status.get("previewSelector"), ro_name)

        active_rs = next(
            (rs for rs in all_rs if rs["metadata"]["labels"].get(HASH_LABEL) == active_hash), new_rs
        )
        status["replicas"] = sum(int((rs.get("status") or {}).get("replicas") or 0) for rs in all_rs)
        status["updatedReplicas"] = int((new_rs.get("status") or {}).get("replicas") or 0)
        status["readyReplicas"] = sum(
            int((rs.get("status") or {}).get("readyReplicas") or 0) for rs in all_rs
        )
        status["availableReplicas"] = int((active_rs.get("status") or {}).get("availableReplicas") or 0)
        status["HPAReplicas"] = int((active_rs.get("status") or {}).get("replicas") or 0)
        status["selector"] = selector_string(
            ((active_rs.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
        )

    # ---- restart and history ----------------------------------------------------------------------------

    def _restart(self, sync: _Sync, all_rs: list[Obj]) -> None:
        """``spec.restartAt``: replace pods created before it, one at a time, then record restartedAt."""
        restart_at = sync.spec.get("restartAt")
        if not restart_at or sync.status.get("restartedAt") == restart_at:
            return
        when = parse_rfc3339(str(restart_at))
        if when is None or when > sync.now:
            if when is not None:
                sync.wake_in((when - sync.now).total_seconds() * self.clock.speed)
            return
        for rs in all_rs:
            pods = self.cache.children(rs["metadata"]["uid"], PODS)
            old = [
                p
                for p in pods
                if (parse_rfc3339(p["metadata"].get("creationTimestamp", "")) or sync.now) < when
                and not p["metadata"].get("deletionTimestamp")
            ]
            if old:
                available = int((rs.get("status") or {}).get("availableReplicas") or 0)
                if available >= int((rs.get("spec") or {}).get("replicas") or 0):
                    self.store.delete(PODS, rs["metadata"]["namespace"], old[0]["metadata"]["name"])
                sync.wake_in(1.0)
                return
        sync.status["restartedAt"] = restart_at

    def _cleanup(self, sync: _Sync, all_rs: list[Obj]) -> None:
        """``reconcileRevisionHistoryLimit``: delete the oldest scaled-down ReplicaSets beyond the limit."""
        limit = int(sync.spec.get("revisionHistoryLimit", DEFAULT_REVISION_HISTORY_LIMIT))
        keep = {
            sync.status.get("currentPodHash"),
            sync.status.get("stableRS"),
            (sync.status.get("blueGreen") or {}).get("activeSelector"),
            (sync.status.get("blueGreen") or {}).get("previewSelector"),
        }
        old = [rs for rs in all_rs if rs["metadata"]["labels"].get(HASH_LABEL) not in keep]
        if len(old) <= limit:
            return
        old.sort(key=lambda rs: (revision_of(rs), rs["metadata"].get("creationTimestamp", "")))
        runs = self.cache.children(sync.ro["metadata"]["uid"], ANALYSIS_RUNS)
        for rs in old[: len(old) - limit]:
            if (rs.get("spec") or {}).get("replicas") or (rs.get("status") or {}).get("replicas"):
                continue
            ns, name = rs["metadata"]["namespace"], rs["metadata"]["name"]
            self.store.delete(REPLICA_SETS, ns, name)
            rs_hash = rs["metadata"]["labels"].get(HASH_LABEL)
            for run in runs:
                if run["metadata"].get("labels", {}).get(HASH_LABEL) == rs_hash:
                    self.store.delete(ANALYSIS_RUNS, ns, run["metadata"]["name"])

    # ---- conditions, pause status, persist --------------------------------------------------------------

    def _pause_status(self, sync: _Sync) -> None:
        """``CalculatePauseStatus``."""
        status = sync.status
        if sync.add_abort or sync.old.get("abort"):
            status["abort"] = True
            status["abortedAt"] = sync.old.get("abortedAt") or status.get("abortedAt") or sync.stamp
            status["pauseConditions"] = None
            status["controllerPause"] = None
            return
        controller_pause = bool(sync.old.get("controllerPause"))
        conditions: list[Obj] = []
        if not sync.clear_pause:
            conditions = [
                c for c in sync.old.get("pauseConditions") or [] if c.get("reason") not in sync.remove_pause
            ]
        present = {c.get("reason") for c in conditions}
        for reason in sync.add_pause:
            if reason not in present:
                conditions.append({"reason": reason, "startTime": sync.stamp})
                present.add(reason)
                controller_pause = True
        if not conditions:
            controller_pause = False
        status["pauseConditions"] = conditions or None
        status["controllerPause"] = controller_pause or None

    def _conditions(self, sync: _Sync, new_rs: Obj) -> None:
        """``calculateRolloutConditions`` and ``checkPausedConditions``."""
        ro, spec, status, now = sync.ro, sync.spec, sync.status, sync.stamp
        rs_name = new_rs["metadata"]["name"]
        paused = bool(status.get("pauseConditions")) or bool(spec.get("paused"))
        aborted = bool(status.get("abort"))
        generation = int(ro["metadata"].get("generation", 1))
        healthy = is_healthy(spec, generation, str(generation), status)
        if not paused and healthy:
            set_condition(status, new_condition("Healthy", "True", "RolloutHealthy", HEALTHY_MESSAGE, now))
        elif get_condition(status, "Healthy") is not None:
            set_condition(
                status, new_condition("Healthy", "False", "RolloutHealthy", NOT_HEALTHY_MESSAGE, now)
            )

        progressing = get_condition(status, "Progressing")
        reason = (progressing or {}).get("reason")
        if aborted:
            revision = revision_of(ro)
            message = f"Rollout aborted update to revision {revision}"
            if sync.abort_message:
                message += f": {sync.abort_message}"
            if set_condition(status, new_condition("Progressing", "False", "RolloutAborted", message, now)):
                self.events.warning(ro, "RolloutAborted", message)
        elif reason == "RolloutAborted":
            set_condition(status, new_condition("Progressing", "Unknown", "RolloutRetry", RETRY_MESSAGE, now))
        elif paused and reason != "RolloutPaused":
            set_condition(
                status, new_condition("Progressing", "Unknown", "RolloutPaused", PAUSED_MESSAGE, now)
            )
        elif not paused and reason == "RolloutPaused":
            set_condition(
                status, new_condition("Progressing", "Unknown", "RolloutResumed", RESUMED_MESSAGE, now)
            )

        progressing = get_condition(status, "Progressing")
        if not aborted and not paused:
            if healthy:
                set_condition(
                    status,
                    new_condition(
                        "Progressing",
                        "True",
                        "NewReplicaSetAvailable",
                        f'ReplicaSet "{rs_name}" has successfully progressed.',
                        now,
                    ),
                )
            elif made_progress(spec, sync.old, status) or progressing is None:
                cond = new_condition(
                    "Progressing", "True", "ReplicaSetUpdated", f'ReplicaSet "{rs_name}" is progressing.', now
                )
                if progressing is not None and progressing.get("status") == "True":
                    cond["lastTransitionTime"] = progressing.get("lastTransitionTime", now)
                remove_condition(status, "Progressing")
                set_condition(status, cond)
            elif not self._indefinite_step(sync) and progressing.get("reason") not in (
                "NewReplicaSetAvailable",
                "ProgressDeadlineExceeded",
            ):
                deadline = float(spec.get("progressDeadlineSeconds", DEFAULT_PROGRESS_DEADLINE))
                since = parse_rfc3339(str(progressing.get("lastUpdateTime", ""))) or sync.now
                waited = (sync.now - since).total_seconds() * self.clock.speed
                if waited > deadline:
                    set_condition(
                        status,
                        new_condition(
                            "Progressing",
                            "False",
                            "ProgressDeadlineExceeded",
                            f'ReplicaSet "{rs_name}" has timed out progressing.',
                            now,
                        ),
                    )
                    if spec.get("progressDeadlineAbort"):
                        status["abort"] = True
                        status["abortedAt"] = now
                        status["pauseConditions"] = None
                        status["controllerPause"] = None
                else:
                    sync.wake_in(deadline - waited + 1.0)

        strategy = spec.get("strategy") or {}
        replicas = replicas_of(spec)
        if strategy.get("blueGreen") is not None:
            available = int(status.get("availableReplicas") or 0) >= replicas and bool(
                (status.get("blueGreen") or {}).get("activeSelector")
            )
        else:
            available = int(status.get("availableReplicas") or 0) >= replicas
        set_condition(
            status,
            new_condition(
                "Available",
                "True" if available else "False",
                "AvailableReason",
                AVAILABLE_MESSAGE if available else NOT_AVAILABLE_MESSAGE,
                now,
            ),
        )
        if (paused or get_condition(status, "Paused") is not None) and not aborted:
            set_condition(
                status,
                new_condition("Paused", "True" if paused else "False", "RolloutPaused", PAUSED_MESSAGE, now),
            )
        complete = bool(status.get("stableRS")) and status.get("stableRS") == status.get("currentPodHash")
        set_condition(
            status,
            new_condition(
                "Completed", "True" if complete else "False", "RolloutCompleted", "RolloutCompleted", now
            ),
        )

    def _indefinite_step(self, sync: _Sync) -> bool:
        steps = ((sync.spec.get("strategy") or {}).get("canary") or {}).get("steps") or []
        index = int(sync.status.get("currentStepIndex") or 0)
        if index >= len(steps):
            return False
        step = steps[index]
        return any(k in step for k in ("pause", "analysis", "experiment"))

    def _persist(self, sync: _Sync, new_rs: Obj) -> None:
        self._pause_status(sync)
        self._conditions(sync, new_rs)
        self._state_change_events(sync, new_rs)
        status = sync.status
        generation = int(sync.ro["metadata"].get("generation", 1))
        status["observedGeneration"] = str(generation)
        status["phase"], status["message"] = calculate_phase(sync.spec, status)
        weights = (status.get("canary") or {}).get("weights")
        status = prune_empty(status)
        if weights is not None:  # weights are not omitempty upstream: a weight of 0 is written
            status["canary"]["weights"] = weights
        if (sync.spec.get("strategy") or {}).get("canary") is not None:
            if sync.status.get("currentStepIndex") is not None:
                status["currentStepIndex"] = sync.status["currentStepIndex"]
            status.setdefault("canary", {})
            status.setdefault("blueGreen", {})
        else:
            status.setdefault("blueGreen", {})
            status.setdefault("canary", {})
        old = sync.ro.get("status") or {}
        patch = merge_patch_diff(old, status)
        meta = sync.ro["metadata"]
        if patch:
            self.store.patch(
                ROLLOUTS,
                meta["namespace"],
                meta["name"],
                {"status": patch},
                subresource="status",
                manager=ROLLOUTS_MANAGER,
            )
        if sync.requeue is not None:
            self.enqueue("rollout", (meta["namespace"], meta["name"]), sync.requeue)

    def _state_change_events(self, sync: _Sync, new_rs: Obj) -> None:
        """``sendStateChangeEvents`` (paused / resumed) and ``promoteStable``'s RolloutCompleted."""
        old, status, ro = sync.ro.get("status") or {}, sync.status, sync.ro
        was_paused, paused = bool(old.get("pauseConditions")), bool(status.get("pauseConditions"))
        if was_paused != paused:
            if paused:
                reason, message = PAUSED
                self.events.normal(ro, reason, message.format(reason=status["pauseConditions"][0]["reason"]))
            elif not status.get("abortedAt"):
                self.events.normal(ro, *RESUMED)
        stable = status.get("stableRS")
        if stable and stable != old.get("stableRS") and stable == status.get("currentPodHash"):
            strategy = sync.spec.get("strategy") or {}
            steps = (strategy.get("canary") or {}).get("steps") or []
            if not old.get("stableRS"):
                why = "Initial deploy"
            elif old.get("promoteFull"):
                why = "Full promotion requested"
            elif strategy.get("blueGreen") is not None:
                why = "Completed blue-green update"
            else:
                why = f"Completed all {len(steps)} canary steps"
            reason, message = COMPLETED_EVENT
            self.events.normal(
                ro, reason, message.format(revision=revision_of(new_rs), hash=stable, reason=why)
            )

    def _invalid(self, sync: _Sync, message: str) -> None:
        status = sync.status
        set_condition(status, new_condition("InvalidSpec", "True", "InvalidSpec", message, sync.stamp))
        status["observedGeneration"] = str(sync.ro["metadata"].get("generation", 1))
        status["phase"], status["message"] = calculate_phase(sync.spec, status)
        patch = merge_patch_diff(sync.ro.get("status") or {}, status)
        if patch:
            meta = sync.ro["metadata"]
            self.store.patch(
                ROLLOUTS,
                meta["namespace"],
                meta["name"],
                {"status": patch},
                subresource="status",
                manager=ROLLOUTS_MANAGER,
            )
