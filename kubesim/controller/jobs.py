"""The Job metric provider (metricproviders/job/job.go) and a minimal batch/v1 Job controller.

``start_job`` is the provider's ``Run``: it creates the Job ``<run uid>.<metric>.<n>`` (n = count + error
+ 1, truncated to the DNS limit like ``newJobName``) with the run's uid label, name/namespace/metric-name
annotations and a controller reference to the AnalysisRun, and returns the Running measurement that names
it (``job-name`` / ``job-namespace`` metadata). ``resume_job`` is ``Resume``: the Job's Complete or Failed
condition finishes the measurement as Successful or Failed.

``JobController`` plays the cluster's Job controller for these Jobs: a Job runs for ``RUN_SECONDS``
simulated seconds and then records its result (``status.succeeded``/``failed``, ``startTime``,
``completionTime`` and the Complete / Failed condition). There is no shell: the exit code is read from
the first container's ``command`` + ``args`` — an ``exit N`` gives N, ``$RANDOM`` flips a seeded coin (the
upstream ``random-fail`` template), anything else exits 0.

Non-goals: Job pods, retries within ``backoffLimit``, jobs in another namespace or cluster.
"""

from __future__ import annotations

import copy
import random
import re
from typing import Any

from kubesim.clock import Clock, rfc3339
from kubesim.controller.common import ROLLOUTS_MANAGER, Enqueue, Key, Obj, owner_reference
from kubesim.store import AlreadyExists, NotFound, StoreError

JOBS = "batch/jobs"
JOB_NAME_KEY = "job-name"
JOB_NAMESPACE_KEY = "job-namespace"
RUN_UID_LABEL = "analysisrun.argoproj.io/uid"
RUN_NAME_ANNOTATION = "analysisrun.argoproj.io/name"
RUN_NAMESPACE_ANNOTATION = "analysisrun.argoproj.io/namespace"
METRIC_ANNOTATION = "analysisrun.argoproj.io/metric-name"
DNS_LIMIT = 63
RUN_SECONDS = 2.0
JOB_MANAGER = "job-controller"


def is_job_metric(metric: Obj) -> bool:
    return isinstance((metric.get("provider") or {}).get("job"), dict)


def job_name(run: Obj, metric_name: str, result: Obj | None) -> str:
    """``newJobName``: ``<uid>.<metric>.<n>``, the metric name cut so the whole fits 63 characters."""
    n = int((result or {}).get("count", 0)) + int((result or {}).get("error", 0)) + 1
    uid = run["metadata"].get("uid", "")
    name = f"{uid}.{metric_name}.{n}"
    if len(name) <= DNS_LIMIT:
        return name
    over = len(name) - DNS_LIMIT
    return f"{uid}.{metric_name[: len(metric_name) - over]}.{n}"


def start_job(store: Any, run: Obj, metric: Obj, result: Obj | None, stamp: str) -> Obj:
    """Create the metric's Job; the Running measurement (or an Error one when the create failed)."""
    meta = run["metadata"]
    job_spec: Obj = copy.deepcopy((metric.get("provider") or {}).get("job") or {})
    job_meta = job_spec.get("metadata") or {}
    labels = {**(job_meta.get("labels") or {}), RUN_UID_LABEL: meta.get("uid", "")}
    annotations = {
        **(job_meta.get("annotations") or {}),
        RUN_NAME_ANNOTATION: meta["name"],
        RUN_NAMESPACE_ANNOTATION: meta["namespace"],
        METRIC_ANNOTATION: str(metric.get("name")),
    }
    spec: Obj = job_spec.get("spec") or {}
    template = spec.setdefault("template", {})
    template.setdefault("metadata", {}).setdefault("labels", {})[RUN_UID_LABEL] = meta.get("uid", "")
    name = job_name(run, str(metric.get("name")), result)
    job: Obj = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": meta["namespace"],
            "labels": labels,
            "annotations": annotations,
            "ownerReferences": [owner_reference(run)],
        },
        "spec": spec,
    }
    measurement: Obj = {"phase": "Running", "startedAt": stamp}
    try:
        store.create(JOBS, job, manager=ROLLOUTS_MANAGER)
    except AlreadyExists:
        pass  # created by an earlier attempt of this measurement
    except StoreError as error:
        return {**measurement, "phase": "Error", "finishedAt": stamp, "message": error.message}
    measurement["metadata"] = {JOB_NAME_KEY: name, JOB_NAMESPACE_KEY: meta["namespace"]}
    measurement["resumeAt"] = stamp
    return measurement


def resume_job(store: Any, run: Obj, measurement: Obj, stamp: str) -> Obj:
    """``Resume``: the measurement finished by the Job's condition, or still Running."""
    metadata = measurement.get("metadata") or {}
    name = metadata.get(JOB_NAME_KEY)
    if not name:
        return {
            **measurement,
            "phase": "Error",
            "finishedAt": stamp,
            "message": "job metadata reference missing",
        }
    namespace = metadata.get(JOB_NAMESPACE_KEY) or run["metadata"]["namespace"]
    try:
        job = store.get(JOBS, namespace, name)
    except NotFound as error:  # the Job was deleted under the run
        return {**measurement, "phase": "Error", "finishedAt": stamp, "message": error.message}
    phase = measurement.get("phase")
    for condition in (job.get("status") or {}).get("conditions") or []:
        if condition.get("status") != "True":
            continue
        if condition.get("type") == "Complete":
            phase = "Successful"
        elif condition.get("type") == "Failed":
            phase = "Failed"
    if phase in ("Successful", "Failed"):
        return {**measurement, "phase": phase, "finishedAt": stamp}
    return {**measurement, "resumeAt": stamp}


_EXIT = re.compile(r"\bexit\s+(\d+)\b")


def exit_code(job: Obj, rng: random.Random) -> int:
    """The simulated exit code of the Job's first container (see the module docstring)."""
    containers = ((((job.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers")) or []
    if not containers:
        return 0
    first = containers[0]
    script = " ".join(str(part) for part in [*(first.get("command") or []), *(first.get("args") or [])])
    if "$RANDOM" in script:
        return rng.randrange(2)
    found = _EXIT.search(script)
    return int(found.group(1)) if found else 0


class JobController:
    """Runs each Job once: after ``RUN_SECONDS`` it succeeds or fails by its simulated exit code."""

    def __init__(self, store: Any, clock: Clock, enqueue: Enqueue, rng: random.Random) -> None:
        self.store = store
        self.clock = clock
        self.enqueue = enqueue
        self.rng = rng

    def added(self, key: Key) -> None:
        """A Job appeared: it starts now and finishes after ``RUN_SECONDS``."""
        job = self._get(key)
        if job is None or (job.get("status") or {}).get("startTime"):
            return
        stamp = rfc3339(self.clock.now())
        self.store.patch(
            JOBS,
            key[0],
            key[1],
            {"status": {"startTime": stamp, "active": 1}},
            subresource="status",
            manager=JOB_MANAGER,
        )
        self.enqueue("job", key, RUN_SECONDS)

    def reconcile(self, key: Key) -> None:
        job = self._get(key)
        status = (job or {}).get("status") or {}
        if (
            job is None
            or status.get("completionTime")
            or any(c.get("type") in ("Complete", "Failed") for c in status.get("conditions") or [])
        ):
            return
        stamp = rfc3339(self.clock.now())
        failed = exit_code(job, self.rng) != 0
        condition = {
            "type": "Failed" if failed else "Complete",
            "status": "True",
            "lastProbeTime": stamp,
            "lastTransitionTime": stamp,
        }
        if failed:
            condition.update(
                reason="BackoffLimitExceeded", message="Job has reached the specified backoff limit"
            )
        patch: Obj = {"active": None, "conditions": [condition], "ready": 0}
        if failed:
            patch["failed"] = 1
        else:
            patch.update(succeeded=1, completionTime=stamp)
        self.store.patch(JOBS, key[0], key[1], {"status": patch}, subresource="status", manager=JOB_MANAGER)

    def _get(self, key: Key) -> Obj | None:
        try:
            job: Obj = self.store.get(JOBS, key[0], key[1])
        except NotFound:  # deleted meanwhile
            return None
        return job
