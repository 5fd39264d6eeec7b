"""One rule classifies every ReplicaSet of a rollout (issue 16 §3), checked on kubesim's own incidents."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from dashboard.domain.findings import RolloutObjects, detect_findings
from dashboard.domain.rs_roles import replica_set_role, replica_set_roles
from dashboard.kube.cache import RolloutInputs
from tests.domain.findings.kubesim_runs import run

NOW = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)


def _rollout(**status: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "checkout", "uid": "u1"},
        "spec": {"strategy": {"canary": {"steps": [{"setWeight": 10}, {"pause": {}}]}}},
        "status": {"stableRS": "aaa", "currentPodHash": "bbb", **status},
    }


def _rs(
    hash_: str,
    replicas: int = 2,
    deadline: datetime | None = None,
    owner: tuple[str, str] = ("Rollout", "u1"),
) -> dict[str, Any]:
    annotations = {"scale-down-deadline": deadline.isoformat().replace("+00:00", "Z")} if deadline else {}
    kind, uid = owner
    return {
        "metadata": {
            "name": f"checkout-{hash_}",
            "labels": {"rollouts-pod-template-hash": hash_},
            "annotations": annotations,
            "ownerReferences": [{"kind": kind, "name": "checkout", "uid": uid, "controller": True}],
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


def test_only_the_rollouts_own_replica_sets_have_roles_and_count_as_siblings() -> None:
    mine = _revision(_rs("bbb"), 2, NOW - timedelta(minutes=5))
    experiments = _revision(_rs("ddd", owner=("Experiment", "e1")), 3, NOW - timedelta(minutes=5))
    roles = replica_set_roles(_rollout(currentPodHash="ccc"), [mine, experiments], NOW)
    assert {name: role.role for name, role in roles.items()} == {"checkout-bbb": "orphaned"}
    assert roles["checkout-bbb"].reason == "no scale-down is scheduled"  # no newer revision of its own


def _one_story(replica_sets: list[dict[str, Any]], now: datetime) -> tuple[str, bool, bool]:
    """The old canary's role in the diagram, whether the unwedge button applies, and whether the orphan
    finding is raised: the three places a release manager reads the answer, built as the watcher does."""
    rollout = _rollout(currentPodHash="ccc")
    view = RolloutInputs(rollout, replicasets=replica_sets).view(now=now, cluster="c")
    diagram = {rs["name"]: rs["role"] for r in view["revisions"] for rs in r["replicaSets"]}
    unwedge = next(b for b in view["availableActions"]["buttons"] if b["name"] == "unwedge")
    findings = detect_findings(view, objects=RolloutObjects(rollout, replica_sets), now=now)
    orphan_raised = "orphaned-canary-replicaset" in {f.code for f in findings}
    return diagram["checkout-bbb"], unwedge["applies"], orphan_raised


def test_the_diagram_the_unwedge_button_and_the_finding_tell_one_story() -> None:
    # An Experiment's ReplicaSet, older than the canary that superseded bbb, is no sibling anywhere: the
    # action bar once counted it and offered unwedge while the diagram said the controller was on it.
    replica_sets = [
        _rs("aaa"),
        _revision(_rs("bbb"), 2, NOW - timedelta(minutes=5)),
        _revision(_rs("ccc"), 3, NOW - timedelta(seconds=10)),
        _revision(_rs("ddd", owner=("Experiment", "e1")), 3, NOW - timedelta(minutes=5)),
    ]
    assert _one_story(replica_sets, NOW) == ("scaling-down", False, False)
    assert _one_story(replica_sets, NOW + timedelta(seconds=30)) == ("orphaned", True, True)


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
