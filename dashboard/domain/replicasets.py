"""ReplicaSets of a Rollout (or of an Experiment) with health, tags and pods.

Mirrors ``info/replicaset_info.go``: children are found by ownerReference UID, tags come from
comparing the RS's ``rollouts-pod-template-hash`` label with the Rollout's status, pods are attached
by their owner UID. Non-goals: deciding whether a ReplicaSet is "stuck" (that is diagnostics).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .durations import age, human_duration
from .objects import (
    as_str,
    atoi,
    dig,
    dig_int,
    dig_map,
    dig_str,
    first_owner,
    maps,
    opt_int,
    parse_time,
    rfc3339,
    str_map,
)
from .pods import PodView, pod_view
from .rs_roles import Role, replica_set_roles
from .status_icons import replica_set_icon

POD_TEMPLATE_HASH = "rollouts-pod-template-hash"
REVISION_ANNOTATION = "rollout.argoproj.io/revision"
TEMPLATE_NAME_ANNOTATION = "experiment.argoproj.io/template-name"
SCALE_DOWN_DEADLINE_ANNOTATION = "scale-down-deadline"


@dataclass(frozen=True)
class ReplicaSetView:
    name: str
    namespace: str
    uid: str
    hash: str
    revision: int
    status: str
    icon: str
    replicas: int
    available: int
    desired: int | None
    stable: bool
    canary: bool
    active: bool
    preview: bool
    ping: bool
    pong: bool
    template: str
    scale_down_deadline: str
    scale_down_delay: str
    images: tuple[str, ...]
    init_container_images: tuple[str, ...]
    created_at: datetime | None
    age: str
    pods: tuple[PodView, ...]
    role: str = ""  # rs_roles.ROLES; "" for an Experiment's ReplicaSets
    scale_down_ends_at: datetime | None = None

    @property
    def tags(self) -> list[str]:
        """Tags in the order the CLI prints them: stable, then canary|active|preview, ping, pong."""
        tags = ["stable"] if self.stable else []
        if self.canary:
            tags.append("canary")
        elif self.active:
            tags.append("active")
        elif self.preview:
            tags.append("preview")
        if self.ping:
            tags.append("ping")
        if self.pong:
            tags.append("pong")
        return tags

    @property
    def image_tags(self) -> list[str]:
        """Tags in the order ``Images()`` attaches them to this RS's images."""
        flags = (
            ("canary", self.canary),
            ("stable", self.stable),
            ("active", self.active),
            ("preview", self.preview),
            ("ping", self.ping),
            ("pong", self.pong),
        )
        return [name for name, on in flags if on]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "namespace": self.namespace,
            "uid": self.uid,
            "hash": self.hash,
            "podTemplateHash": self.hash,
            "revision": self.revision,
            "tags": self.tags,
            "status": self.status,
            "icon": self.icon,
            "replicas": self.replicas,
            "available": self.available,
            "desired": self.desired,
            "template": self.template or None,
            "scaleDownDeadline": self.scale_down_deadline or None,
            "scaleDownDelay": self.scale_down_delay or None,
            "images": list(self.images),
            "initContainerImages": list(self.init_container_images),
            "createdAt": rfc3339(self.created_at),
            "age": self.age,
            "pods": [pod.to_dict() for pod in self.pods],
            "role": self.role or None,
            "scaleDownEndsAt": rfc3339(self.scale_down_ends_at),
        }


def replica_set_health(rs: Mapping[str, Any]) -> str:
    """``getReplicaSetHealth``: Progressing, ReplicaFailure, ScaledDown or Healthy."""
    desired = opt_int(dig(rs, "spec", "replicas"))
    if dig_int(rs, "metadata", "generation") <= dig_int(rs, "status", "observedGeneration"):
        failure = next(
            (c for c in maps(dig(rs, "status", "conditions")) if c.get("type") == "ReplicaFailure"), None
        )
        if failure is not None and failure.get("status") == "True":
            return "ReplicaFailure"
        if desired is not None and dig_int(rs, "status", "availableReplicas") < desired:
            return "Progressing"
    else:
        return "Progressing"
    if desired == 0:
        return "ScaledDown"
    return "Healthy"


def scale_down_delay(deadline: str, now: datetime) -> str:
    """ "passed", a human duration until the deadline, or "" when it is not RFC3339."""
    moment = parse_time(deadline)
    if moment is None:
        return ""
    if moment < now:
        return "passed"
    return human_duration(moment - now)


def revision_of(obj: Mapping[str, Any]) -> int:
    """The ``rollout.argoproj.io/revision`` annotation as an int (0 when absent or not a number)."""
    return atoi(dig(obj, "metadata", "annotations", REVISION_ANNOTATION)) or 0


def _sort_key_time(moment: datetime | None) -> tuple[int, float]:
    # Go's zero time sorts before every real timestamp.
    return (0, 0.0) if moment is None else (1, moment.timestamp())


def replica_set_views(
    owner_uid: str,
    rollout: Mapping[str, Any] | None,
    replicasets: Iterable[Mapping[str, Any]],
    pods: Iterable[Mapping[str, Any]],
    now: datetime,
    roles: Mapping[str, Role] | None = None,
) -> tuple[ReplicaSetView, ...]:
    """``GetReplicaSetInfo``: the RSs owned by ``owner_uid``, tagged against ``rollout`` if given, each
    with its role (``rs_roles``; ``roles`` when the caller has computed them for the whole build)."""
    owned = [rs for rs in replicasets if first_owner(rs, {owner_uid}) is not None]
    if not owned:
        return ()
    if rollout is None:
        roles = {}
    elif roles is None:
        roles = replica_set_roles(rollout, owned, now)
    status = dig_map(rollout, "status")
    strategy = dig_map(rollout, "spec", "strategy")
    is_canary = rollout is not None and strategy.get("canary") is not None
    is_blue_green = rollout is not None and strategy.get("blueGreen") is not None
    stable_hash = as_str(status.get("stableRS"))
    current_hash = as_str(status.get("currentPodHash"))
    ping_pong = is_canary and dig(strategy, "canary", "pingPong") is not None
    stable_is_ping = dig(status, "canary", "stablePingPong") == "ping"
    active_selector = dig_str(status, "blueGreen", "activeSelector")
    preview_selector = dig_str(status, "blueGreen", "previewSelector")

    # Pods grouped by the owning RS UID (the last RS with a UID wins, as upstream's index map does).
    uids = {dig_str(rs, "metadata", "uid") for rs in owned}
    pods_by_uid: dict[str, list[PodView]] = {}
    for pod in pods:
        owner = first_owner(pod, uids)
        if owner is not None:
            pods_by_uid.setdefault(owner, []).append(pod_view(pod, now))

    # Upstream means to sort by revision, then creation time, then name, but discards the time
    # comparison's result, so the effective order is revision descending, then name.
    sets = []
    for rs in owned:
        meta = dig_map(rs, "metadata")
        annotations = str_map(meta.get("annotations"))
        sets.append(
            (atoi(annotations.get(REVISION_ANNOTATION)) or 0, as_str(meta.get("name")), meta, annotations, rs)
        )
    sets.sort(key=lambda s: (-s[0], s[1]))
    # Pods go to the last RS (in sorted order) carrying their owner's UID, as upstream's index map does.
    last_with_uid = {as_str(meta.get("uid")): i for i, (_, _, meta, _, _) in enumerate(sets)}
    views = []
    for i, (revision, name, meta, annotations, rs) in enumerate(sets):
        pod_hash = str_map(meta.get("labels")).get(POD_TEMPLATE_HASH, "")
        stable = canary = active = preview = ping = pong = False
        if is_canary:
            if stable_hash == pod_hash:
                stable = True
                if ping_pong:
                    ping, pong = stable_is_ping, not stable_is_ping
            elif current_hash == pod_hash:
                canary = True
                if ping_pong:
                    ping, pong = not stable_is_ping, stable_is_ping
        if is_blue_green:
            stable = stable_hash == pod_hash
            if active_selector == pod_hash:
                active = True
            elif preview_selector == pod_hash:
                preview = True
        uid = as_str(meta.get("uid"))
        deadline = annotations.get(SCALE_DOWN_DEADLINE_ANNOTATION, "")
        created = parse_time(meta.get("creationTimestamp"))
        health = replica_set_health(rs)
        template_spec = dig_map(rs, "spec", "template", "spec")
        role = roles.get(name)
        pods_of_rs = pods_by_uid.get(uid, ()) if last_with_uid[uid] == i else ()
        views.append(
            ReplicaSetView(
                name=name,
                namespace=as_str(meta.get("namespace")),
                uid=uid,
                hash=pod_hash,
                revision=revision,
                status=health,
                icon=replica_set_icon(health),
                replicas=dig_int(rs, "status", "replicas"),
                available=dig_int(rs, "status", "availableReplicas"),
                desired=opt_int(dig(rs, "spec", "replicas")),
                stable=stable,
                canary=canary,
                active=active,
                preview=preview,
                ping=ping,
                pong=pong,
                template=annotations.get(TEMPLATE_NAME_ANNOTATION, ""),
                scale_down_deadline=deadline,
                scale_down_delay=scale_down_delay(deadline, now) if deadline else "",
                images=_images(template_spec.get("containers")),
                init_container_images=_images(template_spec.get("initContainers")),
                created_at=created,
                age=age(created, now),
                pods=tuple(sorted(pods_of_rs, key=_pod_order)),
                role=role.role if role else "",
                scale_down_ends_at=role.scale_down_ends_at if role else None,
            )
        )
    return tuple(views)


def _pod_order(pod: PodView) -> tuple[tuple[int, float], str]:
    return _sort_key_time(pod.created_at), pod.name


def _images(containers: Any) -> tuple[str, ...]:
    return tuple(as_str(c.get("image")) for c in maps(containers))


def container_list(spec: Mapping[str, Any], key: str) -> list[dict[str, str]]:
    return [{"name": as_str(c.get("name")), "image": as_str(c.get("image"))} for c in maps(spec.get(key))]
