"""One rule classifies every ReplicaSet of a rollout (issue 16 §3), checked on kubesim's own incidents."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from dashboard.domain.rs_roles import replica_set_role, replica_set_roles
from tests.domain.findings.kubesim_runs import run

NOW = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)


def _rollout(**status: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "checkout", "uid": "u1"},
        "spec": {"strategy": {"canary": {"steps": [{"setWeight": 10}, {"pause": {}}]}}},
        "status": {"stableRS": "aaa", "currentPodHash": "bbb", **status},
    }


def _rs(hash_: str, replicas: int = 2, deadline: datetime | None = None) -> dict[str, Any]:
    annotations = {"scale-down-deadline": deadline.isoformat().replace("+00:00", "Z")} if deadline else {}
    return {
        "metadata": {
            "name": f"checkout-{hash_}",
            "labels": {"rollouts-pod-template-hash": hash_},
            "annotations": annotations,
        },
        "spec": {"replicas": replicas},
    }


def test_the_stable_and_the_canary_have_their_roles() -> None:
    assert replica_set_role(_rollout(), _rs("aaa"), NOW).role == "stable"
    assert replica_set_role(_rollout(), _rs("bbb"), NOW).role == "canary"


def test_after_an_abort_the_current_pod_hash_is_the_orphan() -> None:
    role = replica_set_role(_rollout(abort=True), _rs("bbb"), NOW)
    assert role.role == "orphaned"
    assert "aborted" in role.reason


def test_an_aborted_canary_with_a_deadline_ahead_is_scaling_down_until_then() -> None:
    ends = NOW + timedelta(seconds=30)
    role = replica_set_role(_rollout(abort=True), _rs("bbb", deadline=ends), NOW)
    assert (role.role, role.scale_down_ends_at) == ("scaling-down", ends)
    assert role.to_dict()["scaleDownEndsAt"] == "2026-11-29T10:00:30Z"


def test_a_passed_deadline_the_controller_ignored_makes_an_orphan() -> None:
    role = replica_set_role(_rollout(), _rs("ccc", deadline=NOW - timedelta(minutes=5)), NOW)
    assert role.role == "orphaned"


def _revision(rs: dict[str, Any], revision: int, created: datetime) -> dict[str, Any]:
    rs["metadata"]["annotations"]["rollout.argoproj.io/revision"] = str(revision)
    rs["metadata"]["creationTimestamp"] = created.isoformat().replace("+00:00", "Z")
    return rs


def test_a_canary_superseded_a_moment_ago_is_scaling_down_not_orphaned() -> None:
    # The re-render race: a new revision replaces the canary; the controller scales the old one down on
    # its next sync, so in that moment it is no orphan (and no critical finding flashes on the timeline).
    old = _revision(_rs("bbb"), 2, NOW - timedelta(minutes=5))
    new = _revision(_rs("ccc"), 3, NOW - timedelta(seconds=5))
    rollout = _rollout(currentPodHash="ccc")
    assert replica_set_role(rollout, old, NOW, siblings=[old, new]).role == "scaling-down"
    assert replica_set_roles(rollout, [old, new], NOW)["checkout-bbb"].role == "scaling-down"


def test_a_superseded_canary_still_running_after_the_grace_is_orphaned() -> None:
    old = _revision(_rs("bbb"), 2, NOW - timedelta(minutes=5))
    new = _revision(_rs("ccc"), 3, NOW - timedelta(seconds=31))
    role = replica_set_role(_rollout(currentPodHash="ccc"), old, NOW, siblings=[old, new])
    assert role.role == "orphaned" and role.reason == "no scale-down is scheduled"


def test_a_replica_set_scaled_to_zero_is_old() -> None:
    assert replica_set_role(_rollout(), _rs("ccc", replicas=0), NOW).role == "old"


def test_blue_green_roles_are_active_and_preview() -> None:
    rollout = {
        "spec": {"strategy": {"blueGreen": {"activeService": "a"}}},
        "status": {"stableRS": "aaa", "currentPodHash": "bbb", "blueGreen": {"activeSelector": "aaa"}},
    }
    assert replica_set_role(rollout, _rs("aaa"), NOW).role == "active"
    assert replica_set_role(rollout, _rs("bbb"), NOW).role == "preview"


def _roles_in(scenario: str, seconds: float, namespace: str, name: str) -> dict[str, str]:
    result = run(scenario, seconds)
    rollout = result.store.get("argoproj.io/rollouts", namespace, name)
    replica_sets = result.store.list("apps/replicasets", namespace)[0]
    return {k: v.role for k, v in replica_set_roles(rollout, replica_sets, result.now()).items()}


def test_in_orphaned_canary_the_aborted_canary_is_the_orphan() -> None:
    roles = _roles_in("orphaned-canary", 300, "warehouse", "inventory")
    assert sorted(roles.values()) == ["orphaned", "stable"]


def test_after_a_successful_release_the_old_stable_is_scaling_down_never_orphaned() -> None:
    result = run("healthy-canary", 0)
    seen: set[str] = set()
    for _ in range(60):
        result.sim.advance(10)
        rollout = result.store.get("argoproj.io/rollouts", "shop", "checkout")
        replica_sets = result.store.list("apps/replicasets", "shop")[0]
        roles = replica_set_roles(rollout, replica_sets, result.now())
        seen |= {r.role for r in roles.values()}
        assert "orphaned" not in {r.role for r in roles.values()}, result.now()
    assert "scaling-down" in seen
