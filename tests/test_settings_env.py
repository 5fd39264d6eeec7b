from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from rollouts_ui.env import env_bool, env_int, env_list, env_url


def test_it_reads_booleans_in_the_usual_spellings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLAG", "Yes")
    assert env_bool("FLAG", False) is True
    monkeypatch.setenv("FLAG", "0")
    assert env_bool("FLAG", True) is False


def test_it_refuses_a_boolean_it_cannot_read_and_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEBUG_X", "maybe")
    with pytest.raises(ImproperlyConfigured, match="DEBUG_X='maybe' is not a boolean"):
        env_bool("DEBUG_X", False)


def test_it_refuses_a_number_out_of_range(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DAYS", "0")
    with pytest.raises(ImproperlyConfigured, match="below the minimum of 1"):
        env_int("DAYS", 90, minimum=1)
    monkeypatch.setenv("DAYS", "ten")
    with pytest.raises(ImproperlyConfigured, match="not an integer"):
        env_int("DAYS", 90)


def test_it_splits_lists_and_drops_blanks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOSTS", " a.example , ,b.example")
    assert env_list("HOSTS", []) == ["a.example", "b.example"]


def test_it_refuses_a_url_with_the_wrong_scheme_without_leaking_the_password(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DATABASE_URL", "mysql://user:secret@db/x")
    with pytest.raises(ImproperlyConfigured) as error:
        env_url("DATABASE_URL", schemes=("postgres",))
    assert "secret" not in str(error.value)
    assert "postgres://" in str(error.value)


# ---- start-up: every process stops on a bad setting with one line naming it (subprocesses) ----------------

ROOT = Path(__file__).resolve().parent.parent
BAD_SETTINGS = [
    ({"RBAC_POLICY_FILE": "/nonexistent/p.csv"}, "RBAC_POLICY_FILE='/nonexistent/p.csv' cannot be read"),
    ({"RBAC_DEFAULT_ROLE": "superadmin"}, "RBAC_DEFAULT_ROLE='superadmin' is not a built-in role"),
    ({"PROMETHEUS_URLS": "sim"}, "PROMETHEUS_URLS[*]: 'sim' is not an http(s) URL"),
    ({"OIDC_ISSUER": "not-a-url", "OIDC_CLIENT_ID": "x"}, "OIDC_ISSUER='not-a-url' is not an https:// URL"),
    ({"CLUSTERS": "prod"}, "CLUSTERS item 'prod' is not name=kubeconfig-path[#context]"),
    ({"DEBUG": "maybe"}, "DEBUG='maybe' is not a boolean"),
    ({"HISTORY_RETENTION_DAYS": "0"}, "HISTORY_RETENTION_DAYS=0 is below the minimum of 1"),
    ({"GITOPS_REPOSITORIES": "{oops"}, "GITOPS_REPOSITORIES: its value is not valid JSON"),
    ({"LIVE_STALE_AFTER_SECONDS": "1"}, "LIVE_STALE_AFTER_SECONDS=1 is below the minimum of 10"),
]


def _start(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, cwd=ROOT, env={**os.environ, **env}, capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize(("env", "message"), BAD_SETTINGS, ids=[next(iter(e)) for e, _ in BAD_SETTINGS])
def test_a_bad_setting_stops_the_watcher_with_one_line_naming_it(env: dict[str, str], message: str) -> None:
    result = _start([sys.executable, "manage.py", "watch", "--kubeconfig", "/nonexistent"], env)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rollouts-ui: configuration error: "), result.stderr
    assert message in lines[0]


def test_a_malformed_policy_file_stops_the_web_server(tmp_path: Path) -> None:
    policy = tmp_path / "policy.csv"
    policy.write_text("p, role:x, rollouts, bogus\n")
    result = _start([sys.executable, "-m", "uvicorn", "rollouts_ui.asgi:application", "--port", "0"],
                    {"RBAC_POLICY_FILE": str(policy)})
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rollouts-ui: configuration error: RBAC_POLICY_FILE:")
    assert "line 1" in lines[0]


def test_every_problem_is_listed_not_only_the_first() -> None:
    result = _start([sys.executable, "-c", "import django; django.setup()"],
                    {"DJANGO_SETTINGS_MODULE": "rollouts_ui.settings", "DEBUG": "maybe",
                     "RBAC_DEFAULT_ROLE": "root"})
    assert result.returncode == 1
    assert len(result.stderr.strip().splitlines()) == 2 and "Traceback" not in result.stderr


def test_a_celery_worker_stops_on_a_bad_setting() -> None:
    result = _start([str(Path(sys.executable).parent / "celery"), "-A", "rollouts_ui", "worker"],
                    {"RBAC_DEFAULT_ROLE": "superadmin"})
    assert result.returncode == 1
    assert "RBAC_DEFAULT_ROLE='superadmin'" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("listener", ["refused", "never answers"])
def test_an_unreachable_database_stops_start_up_quickly_naming_database_url(listener: str) -> None:
    with socket.socket() as hole:
        hole.bind(("127.0.0.1", 0))
        port = hole.getsockname()[1]
        if listener == "never answers":
            hole.listen(50)  # accepts, never replies
        else:
            hole.close()
        started = time.monotonic()
        result = _start([sys.executable, "-c", "import rollouts_ui.asgi"],
                        {"DATABASE_URL": f"postgres://app:hunter2@127.0.0.1:{port}/rollouts"})
        took = time.monotonic() - started
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rollouts-ui: cannot connect to DATABASE_URL="), lines
    assert "hunter2" not in result.stderr and "Traceback" not in result.stderr
    assert took < 10, f"start-up took {took:.1f}s"


def test_migrate_against_an_unreachable_database_stops_quickly_naming_database_url() -> None:
    with socket.socket() as hole:
        hole.bind(("127.0.0.1", 0))
        port = hole.getsockname()[1]
        hole.close()  # refused
        started = time.monotonic()
        result = _start([sys.executable, "manage.py", "migrate"],
                        {"DATABASE_URL": f"postgres://app:hunter2@127.0.0.1:{port}/rollouts"})
        took = time.monotonic() - started
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rollouts-ui: cannot connect to DATABASE_URL="), lines
    assert "hunter2" not in result.stderr
    assert took < 10, f"migrate took {took:.1f}s to give up"


def test_the_database_check_also_runs_inside_an_event_loop_as_in_the_demo() -> None:
    code = "import asyncio\nasync def main():\n    import rollouts_ui.asgi\nasyncio.run(main())\n"
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**env, "DJANGO_SETTINGS_MODULE":
                            "rollouts_ui.settings"}, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr[-2000:]


# Two transactions that both read then write, as a gate call and the history recorder do in the demo.
_SQLITE_WRITERS = """
import threading, time
import django
django.setup()
from django.db import connection, transaction
with connection.cursor() as c:
    c.execute("create table t (x int)")
failures = []
def writer():
    try:
        with transaction.atomic():
            with connection.cursor() as c:
                c.execute("insert into t values (1)")
            time.sleep(0.5)
    except Exception as error:
        failures.append(repr(error))
    finally:
        connection.close()
try:
    with transaction.atomic():
        with connection.cursor() as c:
            c.execute("select count(*) from t")
        other = threading.Thread(target=writer)
        other.start()
        time.sleep(0.2)
        with connection.cursor() as c:
            c.execute("insert into t values (2)")
except Exception as error:
    failures.append(repr(error))
other.join()
with connection.cursor() as c:
    c.execute("select count(*) from t")
    print(c.fetchone()[0], failures)
"""


def test_concurrent_sqlite_writers_wait_for_each_other_instead_of_failing_locked(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env |= {"DJANGO_SETTINGS_MODULE": "rollouts_ui.settings",
            "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}"}
    result = subprocess.run([sys.executable, "-c", _SQLITE_WRITERS], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "2 []", result.stdout
