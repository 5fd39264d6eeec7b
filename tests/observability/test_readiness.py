"""``/readyz`` names each dependency that is down: the database, Redis, a cluster."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest
import yaml


def unreachable_kubeconfig(tmp_path: Path) -> str:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    path = tmp_path / "kubeconfig"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "c",
                "clusters": [{"name": "c", "cluster": {"server": f"https://127.0.0.1:{port}"}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
            }
        )
    )
    return str(path)


@pytest.mark.django_db
def test_all_ok_when_everything_answers(client: Any) -> None:
    body = client.get("/readyz").json()
    assert body["status"] == "ok" and body["failing"] == []
    assert body["checks"]["database"] == "ok" and body["checks"]["redis"] == "ok"


@pytest.mark.django_db
def test_an_unreachable_cluster_is_named(client: Any, tmp_path: Path, settings: Any) -> None:
    from dashboard.kube.actions import forget_clients

    settings.CLUSTERS = f"prod={unreachable_kubeconfig(tmp_path)}"
    forget_clients()
    try:
        response = client.get("/readyz")
        assert response.status_code == 503
        body = response.json()
        assert body["failing"] == ["cluster:prod"]
        assert body["checks"]["cluster:prod"].startswith("error:")
        assert client.get("/readyz?skip=clusters").status_code == 200
        assert client.get("/readyz?skip=cluster:prod").status_code == 200
    finally:
        forget_clients()


@pytest.mark.django_db
def test_a_reachable_cluster_reports_its_version(client: Any) -> None:
    from dashboard.kube.actions import _registered, forget_clients, register_cluster
    from kubesim.testing import running_kubesim

    with running_kubesim() as sim:
        register_cluster("sim", str(sim.kubeconfig))
        forget_clients()
        try:
            body = client.get("/readyz").json()
        finally:
            _registered.pop("sim", None)
            forget_clients()
    assert body["checks"]["cluster:sim"].startswith("ok")


@pytest.mark.django_db
def test_redis_down_is_named(client: Any, settings: Any) -> None:
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    response = client.get("/readyz?skip=clusters")
    assert response.status_code == 503
    assert response.json()["failing"] == ["redis"]
    assert "redis://" not in response.json()["checks"]["redis"] or "***" in response.json()["checks"]["redis"]
