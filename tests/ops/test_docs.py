"""The operator and user guides say what the code does: metric names, variables, commands, screenshots."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OPERATOR = (ROOT / "docs" / "operator-guide.md").read_text()
USER = (ROOT / "docs" / "user-guide.md").read_text()


def test_every_metric_named_exists() -> None:
    import dashboard.observability.views  # noqa: F401  (the database families)

    code = (ROOT / "dashboard" / "observability" / "metrics.py").read_text() + (
        ROOT / "dashboard" / "observability" / "views.py"
    ).read_text()
    for name in set(re.findall(r"rollouts_ui_[a-z_]+", OPERATOR)):
        base = re.sub(r"_(total|bucket|count|sum)$", "", name)
        assert f'"{base}"' in code, name


def test_every_variable_in_the_tables_is_a_setting() -> None:
    settings_text = (ROOT / "rollouts_ui" / "settings.py").read_text()
    for name in set(re.findall(r"^\| `([A-Z_]+)` \|", OPERATOR, re.M)):
        assert f'"{name}"' in settings_text, name


def test_every_manage_command_exists() -> None:
    from django.core.management import get_commands

    from manage import command_alias

    commands = set(get_commands())
    for name in set(re.findall(r"manage\.py ([a-z][a-z_-]+)", OPERATOR)):
        assert command_alias(["manage.py", name])[1] in commands, name


def test_every_deploy_path_and_screenshot_is_referenced_correctly() -> None:
    for path in set(re.findall(r"`(deploy/[a-z/-]+)`", OPERATOR)):
        assert (ROOT / path).exists(), path
    shots = set(re.findall(r"\(screenshots/([a-z]+\.png)\)", USER))
    assert shots == {"fleet.png", "rollout.png", "history.png", "insights.png", "environments.png"}


def test_every_screenshot_a_guide_shows_is_in_the_repository() -> None:
    readme = (ROOT / "README.md").read_text()
    for shot in set(re.findall(r"\(screenshots/([a-z0-9-]+\.png)\)", USER)):
        assert (ROOT / "docs" / "screenshots" / shot).exists(), shot
    for shot in set(re.findall(r"\(docs/screenshots/([a-z0-9-]+\.png)\)", readme)):
        assert (ROOT / "docs" / "screenshots" / shot).exists(), shot
