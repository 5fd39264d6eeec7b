"""The Kubernetes manifests render offline (kubectl's built-in kustomize) and say what the issue asks."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
OVERLAYS = ("base", "overlays/single-cluster", "overlays/multi-cluster", "remote-cluster")


def render(overlay: str) -> list[dict[str, Any]]:
    result = subprocess.run(
        ["kubectl", "kustomize", str(ROOT / "deploy" / overlay)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def by_name(docs: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d for d in docs if d["kind"] == kind}


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_it_renders(overlay: str) -> None:
    assert render(overlay)


def test_an_installation_has_every_process() -> None:
    docs = render("overlays/single-cluster")
    deployments = by_name(docs, "Deployment")
    assert set(deployments) == {
        "rollouts-ui-web",
        "rollouts-ui-watcher-default",
        "rollouts-ui-worker",
        "rollouts-ui-scheduler",
    }
    assert deployments["rollouts-ui-web"]["spec"]["replicas"] >= 2  # scalable: stateless
    assert deployments["rollouts-ui-scheduler"]["spec"]["strategy"]["type"] == "Recreate"
    assert deployments["rollouts-ui-scheduler"]["spec"]["replicas"] == 1
    assert "rollouts-ui-migrate" in by_name(docs, "Job")
    assert "rollouts-ui" in by_name(docs, "Service")


def test_there_is_one_watcher_per_cluster_with_a_lease_standby() -> None:
    docs = render("overlays/multi-cluster")
    watchers = {n: d for n, d in by_name(docs, "Deployment").items() if "watcher" in n}
    clusters = {}
    for name, deployment in watchers.items():
        command = deployment["spec"]["template"]["spec"]["containers"][0]["command"]
        clusters[command[command.index("--cluster") + 1]] = name
        assert deployment["spec"]["replicas"] == 2  # one publishes (Redis lease), one stands by
    assert set(clusters) == {"default", "prod-eu"}
    remote = watchers["rollouts-ui-watcher-prod-eu"]["spec"]["template"]["spec"]
    assert any(
        v.get("secret", {}).get("secretName") == "rollouts-ui-cluster-prod-eu-watch"
        for v in remote["volumes"]
    )
    config = by_name(docs, "ConfigMap")["rollouts-ui"]["data"]
    from dashboard.kube.actions import parse_clusters

    assert set(parse_clusters(config["CLUSTERS"])) == {"prod-eu"}


def test_the_ingress_keeps_websockets_open() -> None:
    ingress = by_name(render("overlays/single-cluster"), "Ingress")["rollouts-ui"]
    annotations = ingress["metadata"]["annotations"]
    assert int(annotations["nginx.ingress.kubernetes.io/proxy-read-timeout"]) >= 3600
    assert int(annotations["nginx.ingress.kubernetes.io/proxy-send-timeout"]) >= 3600
    backend = ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["name"]
    assert backend in by_name(render("overlays/single-cluster"), "Service")


def test_every_container_runs_unprivileged() -> None:
    for doc in render("overlays/multi-cluster"):
        if doc["kind"] not in ("Deployment", "Job"):
            continue
        pod = doc["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True
        for container in pod["containers"] + pod.get("initContainers", []):
            security = container["securityContext"]
            assert security["allowPrivilegeEscalation"] is False
            assert security["readOnlyRootFilesystem"] is True
            assert security["capabilities"]["drop"] == ["ALL"]


def test_probes_and_commands_exist(client: Any, db: Any) -> None:
    from django.core.management import get_commands

    commands = set(get_commands())
    for doc in render("overlays/multi-cluster"):
        if doc["kind"] not in ("Deployment", "Job"):
            continue
        for container in doc["spec"]["template"]["spec"]["containers"]:
            argv = container["command"]
            if argv[:2] == ["python", "manage.py"]:
                assert argv[2] in commands
            probe = container.get("readinessProbe", {}).get("httpGet")
            if probe and probe["port"] == "http":
                assert client.get(probe["path"]).status_code == 200, probe["path"]
