"""docker-compose.yml is complete and everything it names exists: commands, modules, paths, settings."""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
APP_SERVICES = ("migrate", "web", "watcher", "worker", "scheduler", "kubesim")


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return dict(yaml.safe_load((ROOT / "docker-compose.yml").read_text()))


def expand(value: str) -> str:
    """``${NAME:-default}`` → default, ``${NAME:?message}`` → NAME (what compose substitutes by default)."""
    value = re.sub(r"\$\{[A-Z_]+:-([^}]*)\}", r"\1", value)
    return re.sub(r"\$\{([A-Z_]+):\?[^}]*\}", r"\1", value)


def django_commands() -> set[str]:
    from django.core.management import get_commands

    return set(get_commands())


def test_it_runs_every_process_of_an_installation(compose: dict[str, Any]) -> None:
    assert set(compose["services"]) >= {"redis", "postgres", *APP_SERVICES}
    assert compose["services"]["kubesim"]["profiles"] == ["demo"]
    for name in ("redis", "postgres", "web", "watcher", "worker", "kubesim"):
        assert "healthcheck" in compose["services"][name], name


def test_every_command_it_runs_exists(compose: dict[str, Any]) -> None:
    from manage import command_alias

    commands = django_commands()
    for name in APP_SERVICES:
        argv = [expand(str(a)) for a in compose["services"][name]["command"]]
        if argv[:2] == ["python", "manage.py"]:
            assert command_alias(argv[1:])[1] in commands, (name, argv)
        elif argv[:2] == ["python", "-m"]:
            importlib.import_module(argv[2])
        elif argv[0] == "uvicorn":
            module, attribute = argv[1].split(":")
            assert hasattr(importlib.import_module(module), attribute)
        elif argv[0] == "celery":
            assert argv[1:3] == ["-A", "rollouts_ui"]
            importlib.import_module("rollouts_ui.celery")
            assert argv[3] in ("worker", "beat")
        else:
            pytest.fail(f"{name}: unknown command {argv}")


def test_every_option_it_passes_is_accepted(compose: dict[str, Any]) -> None:
    from django.core.management import load_command_class

    argv = [expand(str(a)) for a in compose["services"]["watcher"]["command"]]
    command = load_command_class("dashboard", argv[2])
    options = command.create_parser("manage.py", argv[2]).parse_args(argv[3:])
    assert options.metrics_port == 9100


def test_every_path_it_names_exists(compose: dict[str, Any]) -> None:
    app = compose["services"]["web"]
    for volume in app["volumes"]:
        source = expand(volume).split(":")[0]
        if source.startswith("."):
            assert (ROOT / source).is_dir(), source
    mounted = [expand(v).split(":")[1] for v in app["volumes"]]
    paths = [
        expand(str(a))
        for s in APP_SERVICES
        for a in compose["services"][s]["command"]
        if str(a).startswith("/")
    ]
    paths.append(expand(app["environment"]["CLUSTERS"]).split("=", 1)[1])
    for path in paths:
        assert path.startswith("/tmp/") or any(path.startswith(m + "/") for m in mounted), path
    # the build context has what the Dockerfile copies
    for line in (ROOT / "Dockerfile").read_text().splitlines():
        if line.startswith("COPY ") and "--from" not in line:
            for source in line.split()[1:-1]:
                assert (ROOT / source).exists(), source


def test_every_variable_it_sets_is_a_setting(compose: dict[str, Any]) -> None:
    settings_text = (ROOT / "rollouts_ui" / "settings.py").read_text()
    for name in compose["services"]["web"]["environment"]:
        assert f'"{name}"' in settings_text, f"{name} is not read by settings.py"


def test_health_checks_hit_real_endpoints(compose: dict[str, Any], client: Any, db: Any) -> None:
    test = " ".join(compose["services"]["web"]["healthcheck"]["test"])
    url = re.search(r"http://127\.0\.0\.1:8000(/[^'\"]+)", test)
    assert url is not None
    assert client.get(url.group(1)).status_code == 200


def test_the_image_runs_as_an_unprivileged_user_with_static_files_collected_and_sources_compiled() -> None:
    text = (ROOT / "Dockerfile").read_text()
    assert len(re.findall(r"^FROM ", text, re.M)) >= 2
    users = re.findall(r"^USER (\S+)", text, re.M)
    assert users and not users[-1].startswith(("0", "root"))
    assert "collectstatic --noinput" in text
    # Run from /app with PYTHONDONTWRITEBYTECODE: uncompiled, every process start compiles them again.
    copied = {line.split()[1] for line in text.splitlines() if line.startswith("COPY ") and "--" not in line}
    compiled = re.search(r"compileall -q ([\w ]+)", text)
    assert compiled and {"rollouts_ui", "dashboard", "kubesim"} <= copied & set(compiled.group(1).split())


def test_the_image_compiles_the_domain_and_refuses_a_build_that_does_not_match() -> None:
    build_stage, runtime = (ROOT / "Dockerfile").read_text().split("\nFROM python:3.11-slim\n")
    assert "python scripts/compile.py" in build_stage and "'.[compile]'" in build_stage
    assert "COPY --from=build /src/compiled ./compiled" in runtime
    assert "DOMAIN_COMPILED=require" in runtime
