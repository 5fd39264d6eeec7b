"""Experiments owned by a Rollout, with their ReplicaSets, pods and AnalysisRuns.

Mirrors ``info/experiment_info.go``. An Experiment's ReplicaSets carry no stable/canary tags; its
images are tagged ``Σ:<template>`` from the ``experiment.argoproj.io/template-name`` annotation.
Non-goals: experiment actions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .analysis import AnalysisRunView, analysis_run_views
from .argocd_health import experiment_health
from .durations import age
from .images import ImageView, merge_image
from .objects import as_str, dig_map, first_owner, maps, parse_time, rfc3339
from .replicasets import ReplicaSetView, replica_set_views, revision_of
from .status_icons import analysis_icon


@dataclass(frozen=True)
class ExperimentView:
    name: str
    namespace: str
    uid: str
    revision: int
    status: str
    icon: str
    message: str
    created_at: datetime | None
    age: str
    replica_sets: tuple[ReplicaSetView, ...]
    analysis_runs: tuple[AnalysisRunView, ...]
    templates: tuple[Mapping[str, Any], ...]
    argocd_health: Mapping[str, str]

    @property
    def images(self) -> list[ImageView]:
        images: list[ImageView] = []
        for rs in self.replica_sets:
            if rs.replicas > 0:
                for image in rs.images:
                    images = merge_image(images, image, [f"Σ:{rs.template}"] if rs.template else [])
        return images

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "namespace": self.namespace,
            "uid": self.uid,
            "revision": self.revision,
            "status": self.status,
            "icon": self.icon,
            "message": self.message,
            "createdAt": rfc3339(self.created_at),
            "age": self.age,
            "images": [image.to_dict() for image in self.images],
            "templates": [dict(t) for t in self.templates],
            "replicaSets": [rs.to_dict() for rs in self.replica_sets],
            "analysisRuns": [ar.to_dict() for ar in self.analysis_runs],
            "argoCDHealth": dict(self.argocd_health),
        }


def experiment_view(
    experiment: Mapping[str, Any],
    replicasets: Iterable[Mapping[str, Any]],
    analysisruns: Iterable[Mapping[str, Any]],
    pods: Iterable[Mapping[str, Any]],
    now: datetime,
) -> ExperimentView:
    meta = dig_map(experiment, "metadata")
    status = dig_map(experiment, "status")
    uid = as_str(meta.get("uid"))
    phase = as_str(status.get("phase"))
    created = parse_time(meta.get("creationTimestamp"))
    health, health_message = experiment_health(experiment)
    templates = tuple(
        {
            "name": as_str(t.get("name")),
            "status": as_str(t.get("status")),
            "message": as_str(t.get("message")),
            "replicas": t.get("replicas") if isinstance(t.get("replicas"), int) else 0,
            "availableReplicas": t.get("availableReplicas")
            if isinstance(t.get("availableReplicas"), int)
            else 0,
            "podTemplateHash": as_str(t.get("podTemplateHash")),
        }
        for t in maps(status.get("templateStatuses"))
    )
    return ExperimentView(
        name=as_str(meta.get("name")),
        namespace=as_str(meta.get("namespace")),
        uid=uid,
        revision=revision_of(experiment),
        status=phase,
        icon=analysis_icon(phase),
        message=as_str(status.get("message")),
        created_at=created,
        age=age(created, now),
        replica_sets=replica_set_views(uid, None, replicasets, pods, now),
        analysis_runs=analysis_run_views(uid, analysisruns, now),
        templates=templates,
        argocd_health={"status": health, "message": health_message},
    )


def experiment_views(
    owner_uid: str,
    experiments: Iterable[Mapping[str, Any]],
    replicasets: Iterable[Mapping[str, Any]],
    analysisruns: Iterable[Mapping[str, Any]],
    pods: Iterable[Mapping[str, Any]],
    now: datetime,
) -> tuple[ExperimentView, ...]:
    """Experiments owned by ``owner_uid``: revision descending, then oldest first, then name."""
    rs_list, ar_list, pod_list = list(replicasets), list(analysisruns), list(pods)
    views = [
        experiment_view(exp, rs_list, ar_list, pod_list, now)
        for exp in experiments
        if first_owner(exp, {owner_uid}) is not None
    ]
    views.sort(
        key=lambda v: (
            -v.revision,
            (0, 0.0) if v.created_at is None else (1, v.created_at.timestamp()),
            v.name,
        )
    )
    return tuple(views)
