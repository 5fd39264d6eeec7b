"""``template_diff`` names the same leaves as flattening both templates whole and comparing every leaf."""

from __future__ import annotations

from typing import Any

import pytest

from dashboard.domain.findings.releases import _MISSING, _flatten, template_diff

HASH = "rollouts-pod-template-hash"


def every_leaf_compared(before: dict[str, Any], after: dict[str, Any]) -> list[dict[str, Any]]:
    left: dict[str, Any] = {}
    right: dict[str, Any] = {}
    _flatten(before, "", left)
    _flatten(after, "", right)
    changed = []
    for path in sorted(left.keys() | right.keys()):
        old, new = left.get(path, _MISSING), right.get(path, _MISSING)
        if path != f"metadata.labels.{HASH}" and old != new:
            changed.append(
                {
                    "path": path,
                    "before": None if old is _MISSING else old,
                    "after": None if new is _MISSING else new,
                }
            )
    return changed


def template(image: str = "app:1", **extra: Any) -> dict[str, Any]:
    return {
        "metadata": {"labels": {"app": "web", HASH: "abc"}, "annotations": {"checksum/config": "1"}},
        "spec": {"containers": [{"name": "app", "image": image, "ports": [{"containerPort": 80}]}], **extra},
    }


CASES = {
    "the same template": (template(), template()),
    "only the hash label differs": (
        template(),
        {
            **template(),
            "metadata": {"labels": {"app": "web", HASH: "def"}, "annotations": {"checksum/config": "1"}},
        },
    ),
    "a new image": (template("app:1"), template("app:2")),
    "an annotation": (
        template(),
        {
            **template(),
            "metadata": {"labels": {"app": "web", HASH: "x"}, "annotations": {"checksum/config": "2"}},
        },
    ),
    "a container added": (template(), template(initContainers=[{"name": "init", "image": "busybox"}])),
    "a list grown and shrunk": (
        template(volumes=[{"name": "a"}, {"name": "b"}]),
        template(volumes=[{"name": "a"}, {"name": "c"}, {}]),
    ),
    "an empty map against nothing": (template(), template(securityContext={})),
    "a map against a scalar": (template(dnsConfig={"options": [1]}), template(dnsConfig="none")),
    "a list against a map": (template(tolerations=[{"key": "a"}]), template(tolerations={"key": "a"})),
    "numbers equal across types": (template(priority=1), template(priority=1.0)),
    "a leaf against null": (template(priority=1), template(priority=None)),
}


@pytest.mark.parametrize("name", CASES)
def test_the_diff_is_every_changed_leaf_by_path(name: str) -> None:
    before, after = CASES[name]
    assert template_diff(before, after) == every_leaf_compared(before, after)
    assert template_diff(after, before) == every_leaf_compared(after, before)


def test_a_new_image_is_one_leaf_and_the_hash_label_is_ignored() -> None:
    before, after = template("app:1"), template("app:2")
    after["metadata"]["labels"][HASH] = "def"
    assert template_diff(before, after) == [
        {"path": "spec.containers[0].image", "before": "app:1", "after": "app:2"}
    ]
