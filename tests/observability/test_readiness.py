"""``/readyz`` names each dependency that is down (to signed-in users): the database, Redis, a cluster,
a cluster whose watches are stale or failing; it answers within its deadline whatever hangs."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest
import yaml


@pytest.fixture(autouse=True)
def own_live_bus(settings: Any, redis_prefix: str) -> None:
    """Readiness reads every watcher's report on the bus: read ours only, never what another test (or an
    earlier run against the same Redis) left under the default prefix."""
    settings.LIVE_REDIS_PREFIX = redis_prefix


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
def test_all_ok_when_everything_answers(admin_client: Any) -> None:
    body = admin_client.get("/readyz").json()
    assert body["status"] == "ok" and body["failing"] == []
    assert body["checks"]["database"] == "ok" and body["checks"]["redis"] == "ok"


@pytest.mark.django_db
def test_an_unreachable_cluster_is_named(admin_client: Any, tmp_path: Path, settings: Any) -> None:
    from dashboard.kube.actions import forget_clients

    settings.CLUSTERS = f"prod={unreachable_kubeconfig(tmp_path)}"
    forget_clients()
    try:
        response = admin_client.get("/readyz")
        assert response.status_code == 503
        body = response.json()
        assert body["failing"] == ["cluster:prod"]
        assert body["checks"]["cluster:prod"].startswith("error:")
        assert admin_client.get("/readyz?skip=clusters").status_code == 200
        assert admin_client.get("/readyz?skip=cluster:prod").status_code == 200
    finally:
        forget_clients()


@pytest.mark.django_db
def test_a_reachable_cluster_reports_its_version(admin_client: Any) -> None:
    from dashboard.kube.actions import _registered, forget_clients, register_cluster
    from kubesim.testing import running_kubesim

    with running_kubesim() as sim:
        register_cluster("sim", str(sim.kubeconfig))
        forget_clients()
        try:
            body = admin_client.get("/readyz").json()
        finally:
            _registered.pop("sim", None)
            forget_clients()
    assert body["checks"]["cluster:sim"].startswith("ok")


@pytest.mark.django_db
def test_redis_down_is_named(admin_client: Any, settings: Any) -> None:
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    response = admin_client.get("/readyz?skip=clusters")
    assert response.status_code == 503
    assert response.json()["failing"] == ["redis"]
    assert "redis://" not in response.json()["checks"]["redis"] or "***" in response.json()["checks"]["redis"]


@pytest.mark.django_db
def test_a_readiness_probe_that_reaches_redis_ends_the_outage_pages_report(client: Any) -> None:
    from dashboard.live import outage

    outage.failed("an earlier outage")  # noted by a page; no browser polled live-status since
    try:
        assert client.get("/readyz?skip=clusters").status_code == 200
        assert outage.state()["ok"], "the next outage would say it began at the earlier one's start"
    finally:
        outage.recovered()


@pytest.mark.django_db
def test_anonymous_callers_get_the_status_but_no_names(client: Any, tmp_path: Path, settings: Any) -> None:
    from dashboard.kube.actions import forget_clients

    settings.CLUSTERS = f"secret-prod={unreachable_kubeconfig(tmp_path)}"
    forget_clients()
    try:
        response = client.get("/readyz")
    finally:
        forget_clients()
    assert response.status_code == 503
    assert response.json() == {"status": "unavailable"}
    settings.READYZ_DETAILS_PUBLIC = True
    assert "cluster:secret-prod" in client.get("/readyz").json()["failing"]


@pytest.mark.django_db
def test_a_bad_clusters_value_is_a_failed_check_not_a_500(admin_client: Any, settings: Any) -> None:
    settings.CLUSTERS = "prod"
    response = admin_client.get("/readyz")
    assert response.status_code == 503 and response["Content-Type"] == "application/json"
    assert "CLUSTERS" in response.json()["checks"]["clusters"]


@pytest.mark.django_db
def test_a_check_that_never_answers_is_reported_within_the_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading
    import time

    from dashboard.observability import readiness

    release = threading.Event()

    def hangs() -> readiness.Check:
        release.wait(30)
        return readiness.Check("database", True)

    monkeypatch.setattr(readiness, "check_database", hangs)
    started = time.monotonic()
    try:
        checks = {c.name: c for c in readiness.run_checks({"clusters"}, deadline=0.5)}
    finally:
        release.set()
    assert time.monotonic() - started < 2
    assert not checks["database"].ok and "no answer within 0.5s" in checks["database"].detail


def test_a_database_that_never_answers_makes_readiness_answer_in_time(tmp_path: Path) -> None:
    """A real server process against a TCP listener that accepts and never replies."""
    import os
    import subprocess
    import sys
    import time

    with socket.socket() as hole:
        hole.bind(("127.0.0.1", 0))
        hole.listen(50)
        port = hole.getsockname()[1]
        env = {**os.environ, "DATABASE_URL": f"postgres://u:p@127.0.0.1:{port}/x"}
        code = (
            "import django, time; django.setup();"
            "from dashboard.observability.readiness import run_checks;"
            "t = time.monotonic(); checks = run_checks({'clusters'});"
            "print(round(time.monotonic() - t, 1), [c.name for c in checks if not c.ok])"
        )
        result = subprocess.run(
            [sys.executable, "-c", code],
            env={**env, "DJANGO_SETTINGS_MODULE": "rollouts_ui.settings"},
            capture_output=True,
            text=True,
            timeout=60,
        )
        started = time.monotonic()
    assert result.returncode == 0, result.stderr[-2000:]
    seconds, failing = result.stdout.strip().split(" ", 1)
    assert float(seconds) < 3.0, result.stdout
    assert "database" in failing
    assert time.monotonic() - started < 60


@pytest.mark.django_db
def test_a_cluster_whose_watches_fail_is_named_with_the_error(
    admin_client: Any, settings: Any, redis_prefix: str
) -> None:
    import time

    import redis

    settings.LIVE_REDIS_PREFIX = redis_prefix
    now = time.time()
    report = {
        "cluster": "prod",
        "reportedAt": now,
        "startedAt": now - 600,
        "ready": True,
        "watches": [
            {
                "watch": "Rollout",
                "lastSeenAt": now - 300,
                "failingSince": now - 290,
                "error": "ClientConnectorCertificateError: CERTIFICATE_VERIFY_FAILED",
            }
        ],
    }
    redis.Redis.from_url(settings.REDIS_URL).hset(f"{redis_prefix}clusters", "prod", json.dumps(report))
    body = admin_client.get("/readyz?skip=cluster:default").json()
    assert "live:prod" in body["failing"]
    assert "stale since" in body["checks"]["live:prod"]
