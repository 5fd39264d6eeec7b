"""kubectl 1.32 treats kubesim as a real API server: validated apply of upstream's examples, explain,
server-side apply with conflicts, `create namespace` (protobuf), missing namespaces, illegal labels.

Runs Debian's /usr/bin/kubectl; fails loudly when it is missing (CI must have it)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from kubesim.testing import KubesimHandle
from tests.kubesim.kubectl_helpers import kubectl, kubesim_for_kubectl

EXAMPLES = [
    "ambassador/echo-service.yaml",
    "ambassador/rollout.yaml",
    "analysis-templates.yaml",
    "apisix/rollout.yaml",
    "apisix/services.yaml",
    "cluster-analysis-templates.yaml",
    "experiment-with-analysis.yaml",
    "rollout-analysis-step.yaml",
    "rollout-background-analysis.yaml",
    "rollout-baseline-vs-canary.yaml",
    "rollout-bluegreen.yaml",
    "rollout-canary-preview.yaml",
    "rollout-canary.yaml",
    "rollout-experiment-step.yaml",
    "rollout-rolling-update.yaml",
    "rollout-template-ref.yaml",
    "traffic-management/job.yaml",
    "workload-ref/workload-ref.yaml",
]


@pytest.fixture(scope="module")
def sim() -> Iterator[KubesimHandle]:
    yield from kubesim_for_kubectl()



@pytest.mark.parametrize("example", EXAMPLES)
def test_it_applies_upstream_examples_with_validation_on(
    sim: KubesimHandle, shared_fixtures: Path, example: str
) -> None:
    ns = "ex-" + example.replace("/", "-").removesuffix(".yaml").replace(".", "-")[:50]
    kubectl(sim, "create", "namespace", ns)
    path = shared_fixtures / "argo-rollouts" / "examples" / example
    out = kubectl(sim, "apply", "--validate=strict", "-n", ns, "-f", str(path))
    assert "created" in out.stdout and "Warning" not in out.stderr


def test_strict_validation_refuses_unknown_fields(sim: KubesimHandle) -> None:
    kubectl(sim, "create", "namespace", "strict")
    manifest = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Rollout",
        "metadata": {"name": "typo", "namespace": "strict"},
        "spec": {"replicas": 1, "strategy": {"canary": {"stepz": []}}},
    }
    result = kubectl(sim, "apply", "--validate=strict", "-f", "-", stdin=json.dumps(manifest), check=False)
    assert result.returncode != 0
    assert 'unknown field "spec.strategy.canary.stepz"' in result.stderr


def test_wrong_types_are_invalid(sim: KubesimHandle) -> None:
    kubectl(sim, "create", "namespace", "types")
    manifest = {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Rollout",
        "metadata": {"name": "typed", "namespace": "types"},
        "spec": {"replicas": "three"},
    }
    result = kubectl(sim, "apply", "-f", "-", stdin=json.dumps(manifest), check=False)
    assert result.returncode != 0 and "is invalid" in result.stderr and "spec.replicas" in result.stderr


def test_explain_describes_the_canary_steps(sim: KubesimHandle) -> None:
    out = kubectl(sim, "explain", "rollout.spec.strategy.canary.steps").stdout
    assert "KIND:       Rollout" in out and "FIELD: steps <[]Object>" in out
    assert "setWeight" in out and "pause" in out
    core = kubectl(sim, "explain", "pods.spec.containers.image").stdout
    assert "FIELD: image <string>" in core


def test_create_namespace_sends_protobuf_and_works(sim: KubesimHandle) -> None:
    kubectl(sim, "create", "namespace", "made-by-kubectl")
    got = json.loads(
        kubectl(sim, "get", "ns", "made-by-kubectl", "-o", "json", "--show-managed-fields").stdout
    )
    assert got["status"]["phase"] == "Active"
    assert got["metadata"]["managedFields"][0]["manager"] == "kubectl-create"


def test_typed_create_commands_send_protobuf_and_work(sim: KubesimHandle) -> None:
    kubectl(sim, "create", "namespace", "typed")
    kubectl(sim, "create", "deployment", "web", "-n", "typed", "--image=nginx", "--replicas=2", "--port=8080")
    kubectl(sim, "create", "service", "clusterip", "web", "-n", "typed", "--tcp=80:8080")
    kubectl(sim, "create", "job", "once", "-n", "typed", "--image=busybox", "--", "echo", "hi")
    deploy = json.loads(kubectl(sim, "get", "deployment", "web", "-n", "typed", "-o", "json").stdout)
    assert deploy["spec"]["replicas"] == 2 and deploy["spec"]["selector"] == {"matchLabels": {"app": "web"}}
    container = deploy["spec"]["template"]["spec"]["containers"][0]
    assert container == {"name": "nginx", "image": "nginx", "ports": [{"containerPort": 8080}]}
    svc = json.loads(kubectl(sim, "get", "service", "web", "-n", "typed", "-o", "json").stdout)
    assert svc["spec"]["ports"] == [{"name": "80-8080", "port": 80, "protocol": "TCP", "targetPort": 8080}]
    job = json.loads(kubectl(sim, "get", "job", "once", "-n", "typed", "-o", "json").stdout)
    assert job["spec"]["template"]["spec"]["containers"][0]["command"] == ["echo", "hi"]


def test_server_dry_run_and_diff(sim: KubesimHandle, shared_fixtures: Path) -> None:
    kubectl(sim, "create", "namespace", "dry")
    path = shared_fixtures / "argo-rollouts" / "examples" / "rollout-canary.yaml"
    assert (
        "(server dry run)" in kubectl(sim, "apply", "--dry-run=server", "-n", "dry", "-f", str(path)).stdout
    )
    assert kubectl(sim, "get", "rollouts.argoproj.io", "-n", "dry", "-o", "name").stdout == ""
    kubectl(sim, "apply", "-n", "dry", "-f", str(path))
    changed = path.read_text().replace("replicas: 5", "replicas: 6")
    diff = kubectl(sim, "diff", "-n", "dry", "-f", "-", stdin=changed, check=False)
    assert diff.returncode == 1, diff.stderr  # 1: differences found
    assert "-  replicas: 5" in diff.stdout and "+  replicas: 6" in diff.stdout


def test_a_missing_namespace_is_refused(sim: KubesimHandle, shared_fixtures: Path) -> None:
    path = shared_fixtures / "argo-rollouts" / "examples" / "rollout-canary.yaml"
    result = kubectl(sim, "apply", "-n", "does-not-exist", "-f", str(path), check=False)
    assert result.returncode != 0
    assert 'namespaces "does-not-exist" not found' in result.stderr


def test_illegal_label_values_are_refused(sim: KubesimHandle) -> None:
    kubectl(sim, "create", "namespace", "labels")
    # kubectl label checks the syntax itself; a patch reaches the server.
    patch = '{"metadata":{"labels":{"team":"not ok!"}}}'
    result = kubectl(sim, "patch", "namespace", "labels", "--type=merge", "-p", patch, check=False)
    assert result.returncode != 0
    assert 'metadata.labels: Invalid value: "not ok!"' in result.stderr


def _managers(sim: KubesimHandle, ns: str, name: str) -> dict[tuple[str, str], dict[str, object]]:
    got = json.loads(
        kubectl(
            sim, "get", "rollouts.argoproj.io", name, "-n", ns, "-o", "json", "--show-managed-fields"
        ).stdout
    )
    return {(e["manager"], e["operation"]): e["fieldsV1"] for e in got["metadata"]["managedFields"]}


def test_server_side_apply_conflicts_and_force_takes_ownership(sim: KubesimHandle) -> None:
    kubectl(sim, "create", "namespace", "ssa")

    def manifest(replicas: int, weight: int) -> str:
        return json.dumps(
            {
                "apiVersion": "argoproj.io/v1alpha1",
                "kind": "Rollout",
                "metadata": {"name": "web", "namespace": "ssa"},
                "spec": {
                    "replicas": replicas,
                    "selector": {"matchLabels": {"app": "web"}},
                    "template": {
                        "metadata": {"labels": {"app": "web"}},
                        "spec": {"containers": [{"name": "web", "image": "nginx"}]},
                    },
                    "strategy": {"canary": {"steps": [{"setWeight": weight}]}},
                },
            }
        )

    kubectl(sim, "apply", "--server-side", "--field-manager=team-a", "-f", "-", stdin=manifest(2, 20))
    owned = _managers(sim, "ssa", "web")[("team-a", "Apply")]
    assert owned["f:spec"]["f:replicas"] == {} and "f:steps" in owned["f:spec"]["f:strategy"]["f:canary"]

    clash = kubectl(
        sim, "apply", "--server-side", "--field-manager=team-b", "-f", "-", stdin=manifest(3, 50), check=False
    )
    assert clash.returncode != 0
    assert 'Apply failed with 2 conflicts: conflicts with "team-a":' in clash.stderr
    assert "- .spec.replicas" in clash.stderr and "- .spec.strategy.canary.steps" in clash.stderr

    # The same values are shared, not a conflict.
    kubectl(sim, "apply", "--server-side", "--field-manager=team-b", "-f", "-", stdin=manifest(2, 20))
    kubectl(
        sim,
        "apply",
        "--server-side",
        "--force-conflicts",
        "--field-manager=team-b",
        "-f",
        "-",
        stdin=manifest(3, 50),
    )
    managers = _managers(sim, "ssa", "web")
    assert "f:replicas" not in managers[("team-a", "Apply")].get("f:spec", {})
    assert managers[("team-b", "Apply")]["f:spec"]["f:replicas"] == {}
    got = json.loads(kubectl(sim, "get", "rollouts.argoproj.io", "web", "-n", "ssa", "-o", "json").stdout)
    assert got["spec"]["replicas"] == 3 and got["spec"]["strategy"]["canary"]["steps"] == [{"setWeight": 50}]

    # Other writes are recorded as Update by their manager.
    kubectl(
        sim,
        "patch",
        "rollouts.argoproj.io",
        "web",
        "-n",
        "ssa",
        "--type=merge",
        "-p",
        '{"spec":{"replicas":4}}',
    )
    managers = _managers(sim, "ssa", "web")
    assert managers[("kubectl-patch", "Update")]["f:spec"] == {"f:replicas": {}}
    assert "f:replicas" not in managers[("team-b", "Apply")]["f:spec"]
