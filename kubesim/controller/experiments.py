"""The Experiment reconciler (experiments/experiment.go), and the Experiment a canary experiment step creates
(rollout/experiment.go ``GetExperimentFromTemplate``).

Per template: a ReplicaSet ``<experiment>-<template>`` with the template's pod template (hash label
added) and the experiment-name / template-name annotations, scaled to ``replicas`` (default 1) and to 0
once the experiment terminates; its templateStatus goes Progressing → Running → Successful (duration
passed, or terminating). When every template runs, ``availableAt`` is set and each analysis starts an
AnalysisRun ``<experiment>-<analysis>`` from its (Cluster)AnalysisTemplate. The phase follows
``calculateStatus``: Pending, then the templates' or the analyses' verdict (a failed analysis fails the
experiment; with a duration, the analyses decide once it passed; with none, the analyses decide when they
complete). Events: Template<Status>, AnalysisRun<Phase> (also on the owning Rollout, as a Warning),
Experiment<Phase>.

Non-goals: template Services and weights, dry-run metrics, progress deadlines of templates,
scale-down delays.
"""

from __future__ import annotations

import copy
from typing import Any

from kubesim.clock import Clock, parse_duration, parse_rfc3339, rfc3339
from kubesim.controller.common import (
    ANALYSIS_RUNS,
    ANALYSIS_TEMPLATES,
    CLUSTER_ANALYSIS_TEMPLATES,
    EXPERIMENTS,
    HASH_LABEL,
    REPLICA_SETS,
    REVISION_ANNOTATION,
    ROLLOUTS,
    ROLLOUTS_MANAGER,
    Enqueue,
    Key,
    Obj,
    merge_patch_diff,
    owner_reference,
    pod_template_hash,
)
from kubesim.controller.events import Recorder
from kubesim.store import AlreadyExists, NotFound

EXPERIMENT_NAME_ANNOTATION = "experiment.argoproj.io/experiment-name"
TEMPLATE_NAME_ANNOTATION = "experiment.argoproj.io/template-name"
DONE = ("Successful", "Failed", "Error", "Inconclusive")
_WORSE = ["Successful", "Running", "Pending", "Inconclusive", "Error", "Failed"]
_TEMPLATE_WORSE = ["Successful", "Running", "Progressing", "Error", "Failed"]


def experiment_for_step(ro: Obj, step: Obj, new_rs: Obj, stable_rs: Obj | None, index: int) -> Obj:
    """``GetExperimentFromTemplate``: the Experiment of the rollout's current experiment step."""
    meta = ro["metadata"]
    pod_hash = new_rs["metadata"]["labels"][HASH_LABEL]
    revision = (meta.get("annotations") or {}).get(REVISION_ANNOTATION, "")
    labels = {**(meta.get("labels") or {}), HASH_LABEL: pod_hash}
    templates: list[Obj] = []
    for ref in step.get("templates") or []:
        source = new_rs if ref.get("specRef") == "canary" else (stable_rs or new_rs)
        template: Obj = {
            "name": ref.get("name"),
            "template": copy.deepcopy((source.get("spec") or {}).get("template") or {}),
            "selector": copy.deepcopy(
                ref.get("selector") or (source.get("spec") or {}).get("selector") or {}
            ),
        }
        if ref.get("replicas") is not None:
            template["replicas"] = ref["replicas"]
        extra = (ref.get("metadata") or {}).get("labels") or {}
        if extra:
            template["template"].setdefault("metadata", {}).setdefault("labels", {}).update(extra)
            template["selector"].setdefault("matchLabels", {}).update(extra)
        templates.append(template)
    spec: Obj = {"templates": templates}
    if step.get("duration") is not None:
        spec["duration"] = step["duration"]
    if (ro.get("spec") or {}).get("progressDeadlineSeconds") is not None:
        spec["progressDeadlineSeconds"] = ro["spec"]["progressDeadlineSeconds"]
    analyses = []
    for analysis in step.get("analyses") or []:
        ref = {k: copy.deepcopy(v) for k, v in analysis.items() if k != "args"}
        args = [_rollout_arg(a, new_rs, stable_rs) for a in analysis.get("args") or []]
        if args:
            ref["args"] = args
        analyses.append(ref)
    if analyses:
        spec["analyses"] = analyses
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Experiment",
        "metadata": {
            "name": f"{meta['name']}-{pod_hash}-{revision}-{index}",
            "namespace": meta["namespace"],
            "labels": labels,
            "annotations": {REVISION_ANNOTATION: revision},
            "ownerReferences": [owner_reference(ro)],
        },
        "spec": spec,
    }


def _rollout_arg(arg: Obj, new_rs: Obj, stable_rs: Obj | None) -> Obj:
    resolved = {"name": arg.get("name")}
    if "value" in arg:
        resolved["value"] = str(arg["value"])
    elif (arg.get("valueFrom") or {}).get("podTemplateHashValue"):
        source = stable_rs if arg["valueFrom"]["podTemplateHashValue"] == "Stable" else new_rs
        resolved["value"] = ((source or new_rs)["metadata"].get("labels") or {}).get(HASH_LABEL, "")
    return resolved


class ExperimentController:
    def __init__(self, store: Any, clock: Clock, enqueue: Enqueue) -> None:
        self.store = store
        self.clock = clock
        self.enqueue = enqueue
        self.events = Recorder(store, clock)

    def reconcile(self, key: Key) -> None:
        ex = self._get(EXPERIMENTS, *key)
        if ex is None or ex["metadata"].get("deletionTimestamp"):
            return
        now = self.clock.now()
        stamp = rfc3339(now)
        spec, old = ex.get("spec") or {}, ex.get("status") or {}
        status: Obj = copy.deepcopy(old)
        if not status.get("phase"):
            status["phase"] = "Pending"
        terminating = self._terminating(spec, status, now)
        template_statuses = {t.get("name"): t for t in status.get("templateStatuses") or []}
        for template in spec.get("templates") or []:
            template_statuses[template.get("name")] = self._template(
                ex, template, template_statuses, terminating, stamp, now
            )
        status["templateStatuses"] = [template_statuses[t.get("name")] for t in spec.get("templates") or []]
        run_statuses = {r.get("name"): r for r in status.get("analysisRuns") or []}
        for analysis in spec.get("analyses") or []:
            run_statuses[analysis.get("name")] = self._analysis(
                ex, analysis, run_statuses, terminating, status
            )
        if spec.get("analyses"):
            status["analysisRuns"] = [run_statuses[a.get("name")] for a in spec.get("analyses") or []]
        self._phase(spec, old, status, stamp)
        patch = merge_patch_diff(old, status)
        if patch:
            self.store.patch(EXPERIMENTS, key[0], key[1], {"status": patch}, manager=ROLLOUTS_MANAGER)
        if old.get("phase") != status["phase"]:
            event_type = "Warning" if status["phase"] in ("Failed", "Error", "Inconclusive") else "Normal"
            message = f"Experiment transitioned from {old.get('phase', '')} -> {status['phase']}"
            self.events.record(ex, event_type, f"Experiment{status['phase']}", message)
        remaining = self._remaining(spec, status, now)
        if remaining is not None and status["phase"] not in DONE:
            self.enqueue("experiment", key, remaining + 0.01)

    # ---- templates --------------------------------------------------------------------------------------

    def _template(
        self, ex: Obj, template: Obj, statuses: dict[Any, Obj], terminating: bool, stamp: str, now: Any
    ) -> Obj:
        meta = ex["metadata"]
        name = str(template.get("name"))
        previous = statuses.get(name) or {"name": name}
        current = copy.deepcopy(previous)
        wanted = (
            0
            if terminating or current.get("status") in ("Successful", "Failed", "Error")
            else int(template.get("replicas", 1) if template.get("replicas") is not None else 1)
        )
        rs_name = f"{meta['name']}-{name}"
        rs = self._get(REPLICA_SETS, meta["namespace"], rs_name)
        if rs is None:
            rs = self._create_rs(ex, template, rs_name, wanted)
            current["lastTransitionTime"] = stamp
        elif (rs.get("spec") or {}).get("replicas") != wanted:
            old = int((rs.get("spec") or {}).get("replicas") or 0)
            rs = self.store.patch(
                REPLICA_SETS,
                meta["namespace"],
                rs_name,
                {"spec": {"replicas": wanted}},
                manager=ROLLOUTS_MANAGER,
            )
            operation = "up" if wanted > old else "down"
            message = f"Scaled {operation} ReplicaSet {rs_name} from {old} to {wanted}"
            self.events.normal(ex, "ScalingReplicaSet", message)
            current["lastTransitionTime"] = stamp
        rs_status = (rs or {}).get("status") or {}
        for field in ("replicas", "readyReplicas", "availableReplicas"):
            current[field] = int(rs_status.get(field) or 0)
        current["updatedReplicas"] = current["replicas"]
        if any(current.get(f) != previous.get(f) for f in ("replicas", "readyReplicas", "availableReplicas")):
            current["lastTransitionTime"] = stamp
        if current.get("status") not in ("Successful", "Failed", "Error"):
            if wanted == current["availableReplicas"]:
                current["status"] = "Successful" if terminating or self._passed(ex, now) else "Running"
            else:
                current["status"] = "Successful" if terminating else "Progressing"
        if previous.get("status") != current["status"]:
            message = (
                f"Template '{name}' transitioned from {previous.get('status', '')} -> {current['status']}"
            )
            event_type = "Warning" if current["status"] in ("Failed", "Error") else "Normal"
            self.events.record(ex, event_type, f"Template{current['status']}", message)
        return current

    def _create_rs(self, ex: Obj, template: Obj, name: str, replicas: int) -> Obj:
        meta = ex["metadata"]
        pod_template = copy.deepcopy(template.get("template") or {})
        labels = dict((pod_template.get("metadata") or {}).get("labels") or {})
        labels.pop(HASH_LABEL, None)
        pod_template.setdefault("metadata", {})["labels"] = labels
        pod_hash = pod_template_hash(pod_template)
        labels[HASH_LABEL] = pod_hash
        selector = copy.deepcopy(template.get("selector") or {})
        selector.setdefault("matchLabels", {})[HASH_LABEL] = pod_hash
        rs: Obj = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": name,
                "namespace": meta["namespace"],
                "labels": dict(labels),
                "annotations": {
                    EXPERIMENT_NAME_ANNOTATION: meta["name"],
                    TEMPLATE_NAME_ANNOTATION: str(template.get("name")),
                },
                "ownerReferences": [owner_reference(ex)],
            },
            "spec": {"replicas": replicas, "selector": selector, "template": pod_template},
        }
        try:
            created: Obj = self.store.create(REPLICA_SETS, rs, manager=ROLLOUTS_MANAGER)
        except AlreadyExists:
            created = self.store.get(REPLICA_SETS, meta["namespace"], name)
        message = f'Created new replica set "{name}" with size {replicas}'
        self.events.normal(ex, "NewReplicaSetCreated", message)
        return created

    # ---- analyses ---------------------------------------------------------------------------------------

    def _analysis(
        self, ex: Obj, analysis: Obj, statuses: dict[Any, Obj], terminating: bool, status: Obj
    ) -> Obj:
        meta = ex["metadata"]
        name = str(analysis.get("name"))
        previous = statuses.get(name) or {"name": name}
        current = copy.deepcopy(previous)
        if not status.get("availableAt"):
            if self._analysis_template(meta["namespace"], analysis) is None:
                kind = "ClusterAnalysisTemplate" if analysis.get("clusterScope") else "AnalysisTemplate"
                current["phase"] = "Error"
                current["message"] = (
                    f"{kind} verification failed for analysis '{name}': "
                    f'{kind.lower()}s.argoproj.io "{analysis.get("templateName")}" not found'
                )
        elif not current.get("analysisRun"):
            if not terminating:
                created = self._create_run(ex, analysis)
                current["phase"], current["analysisRun"] = "Pending", created["metadata"]["name"]
        elif current.get("phase") not in DONE:
            run = self._get(ANALYSIS_RUNS, meta["namespace"], str(current["analysisRun"]))
            if run is None:
                current["phase"], current["message"] = (
                    "Error",
                    f'analysisruns.argoproj.io "{current["analysisRun"]}" not found',
                )
            elif terminating:
                run_phase = (run.get("status") or {}).get("phase")
                if run_phase not in DONE and not (run.get("spec") or {}).get("terminate"):
                    message = f"Terminating {name} ({run['metadata']['name']})"
                    self.events.normal(ex, "AnalysisRunTerminating", message)
                    self.store.patch(
                        ANALYSIS_RUNS,
                        meta["namespace"],
                        run["metadata"]["name"],
                        {"spec": {"terminate": True}},
                        manager=ROLLOUTS_MANAGER,
                    )
            else:
                run_status = run.get("status") or {}
                current["phase"] = run_status.get("phase") or current.get("phase")
                if run_status.get("message"):
                    current["message"] = run_status["message"]
        if previous.get("phase") != current.get("phase") and current.get("phase"):
            message = (
                f"AnalysisRun '{name}' transitioned from {previous.get('phase', '')} -> {current['phase']}"
            )
            if current.get("message"):
                message += ": " + str(current["message"])
            bad = current["phase"] in ("Failed", "Error", "Inconclusive")
            self.events.record(ex, "Warning" if bad else "Normal", f"AnalysisRun{current['phase']}", message)
            owner = next((r for r in meta.get("ownerReferences") or [] if r.get("kind") == "Rollout"), None)
            rollout = self._get(ROLLOUTS, meta["namespace"], owner["name"]) if owner else None
            if rollout is not None:
                self.events.warning(rollout, f"AnalysisRun{current['phase']}", message)
        return current

    def _analysis_template(self, ns: str, analysis: Obj) -> Obj | None:
        name = str(analysis.get("templateName", ""))
        if analysis.get("clusterScope"):
            return self._get(CLUSTER_ANALYSIS_TEMPLATES, None, name)
        return self._get(ANALYSIS_TEMPLATES, ns, name)

    def _create_run(self, ex: Obj, analysis: Obj) -> Obj:
        meta = ex["metadata"]
        template = self._analysis_template(meta["namespace"], analysis) or {}
        args = {str(a["name"]): dict(a) for a in (template.get("spec") or {}).get("args") or []}
        for arg in analysis.get("args") or []:
            args[str(arg["name"])] = {
                "name": arg["name"],
                **({"value": str(arg["value"])} if "value" in arg else {}),
            }
        run: Obj = {
            "apiVersion": "argoproj.io/v1alpha1",
            "kind": "AnalysisRun",
            "metadata": {
                "name": f"{meta['name']}-{analysis.get('name')}",
                "namespace": meta["namespace"],
                "ownerReferences": [owner_reference(ex)],
            },
            "spec": {
                "metrics": copy.deepcopy((template.get("spec") or {}).get("metrics") or []),
                **({"args": list(args.values())} if args else {}),
            },
        }
        base, n = run["metadata"]["name"], 0
        while True:
            try:
                created: Obj = self.store.create(ANALYSIS_RUNS, run, manager=ROLLOUTS_MANAGER)
                return created
            except AlreadyExists:
                n += 1
                run["metadata"]["name"] = f"{base}.{n}"

    # ---- phase ------------------------------------------------------------------------------------------

    def _phase(self, spec: Obj, old: Obj, status: Obj, stamp: str) -> None:
        """``calculateStatus``."""
        if old.get("phase") in DONE or not old.get("phase"):
            return
        template_phase, template_message = self._assess_templates(spec, status)
        analyses_phase, analyses_message = self._assess_analyses(spec, status)
        if template_phase == "Running" and not status.get("availableAt"):
            status["availableAt"] = stamp
        required = [a for a in spec.get("analyses") or [] if a.get("requiredForCompletion")]
        if template_phase in DONE:
            if template_phase == "Successful" and (analyses_phase in DONE or required):
                phase, message = analyses_phase, analyses_message
            else:
                phase, message = template_phase, template_message
        elif analyses_phase in ("Failed", "Error", "Inconclusive") or (
            required and self._required_done(spec, status)
        ):
            phase, message = analyses_phase, analyses_message
        else:
            phase, message = template_phase, template_message
        status["phase"] = phase
        if message:
            status["message"] = message
        else:
            status.pop("message", None)

    @staticmethod
    def _assess_templates(spec: Obj, status: Obj) -> tuple[str, str]:
        by_name = {t.get("name"): t for t in status.get("templateStatuses") or []}
        worst, message = "Successful", ""
        for template in spec.get("templates") or []:
            current = by_name.get(template.get("name")) or {"status": "Progressing"}
            if _TEMPLATE_WORSE.index(current.get("status", "Progressing")) > _TEMPLATE_WORSE.index(worst):
                worst, message = current.get("status", "Progressing"), current.get("message", "")
        return {"Progressing": "Pending"}.get(worst, worst), message

    def _assess_analyses(self, spec: Obj, status: Obj) -> tuple[str, str]:
        by_name = {r.get("name"): r for r in status.get("analysisRuns") or []}
        worst, message = "Successful", ""
        for analysis in spec.get("analyses") or []:
            phase = (by_name.get(analysis.get("name")) or {}).get("phase") or "Pending"
            if _WORSE.index(phase) > _WORSE.index(worst):
                worst, message = phase, (by_name.get(analysis.get("name")) or {}).get("message", "")
        if self._required_done(spec, status) and _WORSE.index(worst) <= _WORSE.index("Running"):
            return "Successful", "Experiment analyses completed"
        return ("Running" if worst == "Pending" else worst), message

    @staticmethod
    def _required_done(spec: Obj, status: Obj) -> bool:
        required = [a.get("name") for a in spec.get("analyses") or [] if a.get("requiredForCompletion")]
        by_name = {r.get("name"): r for r in status.get("analysisRuns") or []}
        return bool(required) and all((by_name.get(n) or {}).get("phase") == "Successful" for n in required)

    # ---- time -------------------------------------------------------------------------------------------

    def _passed(self, ex: Obj, now: Any) -> bool:
        remaining = self._remaining(ex.get("spec") or {}, ex.get("status") or {}, now)
        return remaining is not None and remaining <= 0

    def _remaining(self, spec: Obj, status: Obj, now: Any) -> float | None:
        """Simulated seconds until the duration passes (None: no duration, or not available yet)."""
        if not spec.get("duration") or not status.get("availableAt"):
            return None
        duration = parse_duration(spec["duration"])
        available = parse_rfc3339(str(status["availableAt"]))
        if duration is None or available is None:
            return None
        return duration - (now - available).total_seconds() * self.clock.speed

    def _terminating(self, spec: Obj, status: Obj, now: Any) -> bool:
        """``IsTerminating``: asked to, finished, a failed template or analysis, or the duration passed."""
        if spec.get("terminate") or status.get("phase") in DONE:
            return True
        if any(t.get("status") in ("Failed", "Error") for t in status.get("templateStatuses") or []):
            return True
        if any(
            r.get("phase") in ("Failed", "Error", "Inconclusive") for r in status.get("analysisRuns") or []
        ):
            return True
        remaining = self._remaining(spec, status, now)
        return remaining is not None and remaining <= 0

    def _get(self, resource: str, namespace: str | None, name: str) -> Obj | None:
        try:
            found: Obj = self.store.get(resource, namespace, name)
        except NotFound:
            return None
        return found
