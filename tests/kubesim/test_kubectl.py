"""kubesim driven by Debian's kubectl as a subprocess: discovery, get, watch, patch, scale, delete."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest

from kubesim.testing import KubesimHandle
from tests.kubesim.kubectl_helpers import kubectl, kubesim_for_kubectl


@pytest.fixture(scope="module")
def sim() -> Iterator[KubesimHandle]:
    yield from kubesim_for_kubectl()



def make_rollout(sim: KubesimHandle, ns: str, name: str = "web") -> dict[str, Any]:
    body = {
        "metadata": {"name": name, "namespace": ns, "labels": {"app": name}},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": name}}},
    }
    return sim.call(sim.store.create, "argoproj.io/rollouts", body)


def rollout(sim: KubesimHandle, ns: str, name: str = "web") -> dict[str, Any]:
    return sim.call(sim.store.get, "argoproj.io/rollouts", ns, name)


def test_api_resources_show_short_names(sim: KubesimHandle) -> None:
    out = kubectl(sim, "api-resources", "--api-group=argoproj.io", "-o", "wide").stdout
    rows = {line.split()[0]: line for line in out.splitlines()[1:]}
    assert set(rows) == {
        "analysisruns",
        "analysistemplates",
        "applications",
        "clusteranalysistemplates",
        "experiments",
        "rollouts",
    }
    assert " ro " in rows["rollouts"] and "app,apps" in rows["applications"]


def test_get_prints_a_table_by_short_name(sim: KubesimHandle) -> None:
    make_rollout(sim, "get")
    lines = kubectl(sim, "get", "ro", "-n", "get").stdout.splitlines()
    assert lines[0].split() == ["NAME", "DESIRED", "CURRENT", "UP-TO-DATE", "AVAILABLE", "AGE"]
    assert lines[1].split()[:2] == ["web", "3"]
    assert "No resources found" in kubectl(sim, "get", "applications", "-A").stderr


def test_get_o_yaml_and_json(sim: KubesimHandle) -> None:
    make_rollout(sim, "yaml")
    out = kubectl(sim, "get", "rollouts.argoproj.io", "web", "-n", "yaml", "-o", "yaml").stdout
    assert "kind: Rollout" in out and "name: web" in out
    listed = json.loads(kubectl(sim, "get", "rs,ro", "-n", "yaml", "-o", "json").stdout)
    assert [i["kind"] for i in listed["items"]] == ["Rollout"]


def test_get_w_streams_changes_until_its_timeout(sim: KubesimHandle) -> None:
    make_rollout(sim, "watch")
    proc = subprocess.Popen(
        [
            "kubectl",
            "--kubeconfig",
            str(sim.kubeconfig),
            "get",
            "ro",
            "-n",
            "watch",
            "-w",
            "-o",
            "name",
            "--request-timeout=3s",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    time.sleep(1)
    sim.call(sim.store.patch, "argoproj.io/rollouts", "watch", "web", {"spec": {"replicas": 4}})
    out, _ = proc.communicate(timeout=15)
    assert out.splitlines() == ["rollout.argoproj.io/web", "rollout.argoproj.io/web"]


def test_patch_merge_and_json(sim: KubesimHandle) -> None:
    make_rollout(sim, "patch")
    kubectl(
        sim, "patch", "ro", "web", "-n", "patch", "--type", "merge", "-p", '{"metadata":{"labels":{"x":"y"}}}'
    )
    kubectl(
        sim,
        "patch",
        "ro",
        "web",
        "-n",
        "patch",
        "--type",
        "json",
        "-p",
        '[{"op":"replace","path":"/spec/replicas","value":5}]',
    )
    current = rollout(sim, "patch")
    assert current["metadata"]["labels"]["x"] == "y" and current["spec"]["replicas"] == 5
    managers = {e["manager"] for e in current["metadata"]["managedFields"]}
    assert "kubectl-patch" in managers


def test_strategic_patch_on_a_rollout_fails_like_a_real_cluster(sim: KubesimHandle) -> None:
    make_rollout(sim, "smp")
    result = kubectl(sim, "patch", "ro", "web", "-n", "smp", "-p", '{"spec":{"replicas":1}}', check=False)
    assert (
        result.returncode != 0 and "application/strategic-merge-patch+json is not supported" in result.stderr
    )


def test_patch_the_status_subresource(sim: KubesimHandle) -> None:
    make_rollout(sim, "status")
    kubectl(
        sim,
        "patch",
        "ro",
        "web",
        "-n",
        "status",
        "--subresource=status",
        "--type",
        "merge",
        "-p",
        '{"status":{"abort":true},"spec":{"replicas":1}}',
    )
    current = rollout(sim, "status")
    assert current["status"] == {"abort": True} and current["spec"]["replicas"] == 3


def test_scale_rollouts_and_replicasets(sim: KubesimHandle) -> None:
    make_rollout(sim, "scale")
    sim.call(
        sim.store.create,
        "apps/replicasets",
        {"metadata": {"name": "web-1", "namespace": "scale"}, "spec": {"replicas": 1}},
    )
    assert "scaled" in kubectl(sim, "scale", "ro", "web", "-n", "scale", "--replicas=6").stdout
    kubectl(sim, "scale", "rs", "web-1", "-n", "scale", "--replicas=0")
    assert rollout(sim, "scale")["spec"]["replicas"] == 6
    assert sim.call(sim.store.get, "apps/replicasets", "scale", "web-1")["spec"]["replicas"] == 0


def test_delete(sim: KubesimHandle) -> None:
    make_rollout(sim, "delete")
    assert 'rollout.argoproj.io "web" deleted' in kubectl(sim, "delete", "ro", "web", "-n", "delete").stdout
    assert sim.call(sim.store.try_get, "argoproj.io/rollouts", "delete", "web") is None
