"""The watcher starts light: it reaches its first API request without loading Celery, the official
Kubernetes client or the web's URLconf, none of which it uses (each start is part of a restart's time)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
# `manage.py watch` as run in production, stopped at its first API request, printing what it imported.
UNTIL_THE_FIRST_REQUEST = """
import json, os, sys
from dashboard.kube.connection import KubeApi

def first_request(*args, **kwargs):
    print(json.dumps(sorted(sys.modules)), flush=True)
    os._exit(0)

KubeApi.list_connection = KubeApi.stream = first_request
sys.argv = ["manage.py", "watch", "--kubeconfig", sys.argv[1], "--cluster", "startup", "--no-history"]
from manage import main
main()
"""
NOT_AT_START = ("celery", "kombu", "kubernetes", "rollouts_ui.urls")


def test_the_watcher_reaches_its_first_request_without_celery_the_official_client_or_the_urlconf(
    tmp_path: Path,
) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    cluster = {"server": "https://127.0.0.1:1", "insecure-skip-tls-verify": True}  # nothing listens there
    kubeconfig.write_text(yaml.safe_dump({
        "clusters": [{"name": "c", "cluster": cluster}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }))
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}  # the in-memory bus: nothing to reach

    result = subprocess.run(
        [sys.executable, "-c", UNTIL_THE_FIRST_REQUEST, str(kubeconfig)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )

    assert result.returncode == 0, result.stderr
    imported = json.loads(result.stdout)
    assert "dashboard.kube.watcher" in imported
    assert [m for m in imported if m.startswith(NOT_AT_START)] == []
