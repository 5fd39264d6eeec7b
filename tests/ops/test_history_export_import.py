"""``export-history`` / ``import-history``: a JSON Lines round trip that is idempotent and all or nothing."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from dashboard.history.models import Outcome, Release, TimelineEvent

ROOT = Path(__file__).resolve().parents[2]


def make_history() -> None:
    at = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)
    release = Release.objects.create(
        cluster="prod",
        namespace="shop",
        rollout="checkout",
        pod_hash="abc123",
        revision=2,
        started_at=at,
        ended_at=at.replace(hour=11),
        outcome=Outcome.PROMOTED,
        images=["shop/checkout:2"],
        steps_reached=4,
        step_count=4,
        git_revision="deadbeef",
    )
    TimelineEvent.objects.create(release=release, kind="release.started", dedupe="started", at=at, title="go")
    TimelineEvent.objects.create(
        release=release,
        kind="finding.raised",
        dedupe="finding:x:1",
        at=at,
        title="stuck",
        data={"code": "x", "severity": "warning"},
    )


@pytest.mark.django_db
def test_it_round_trips_releases_and_events(tmp_path: Path) -> None:
    make_history()
    path = tmp_path / "history.jsonl"
    call_command("export_history", output=str(path))
    lines = path.read_text().splitlines()
    assert json.loads(lines[0])["format"] == "rollouts-ui-history"
    TimelineEvent.objects.all().delete()
    Release.objects.all().delete()
    out = io.StringIO()
    call_command("import_history", str(path), stdout=out)
    assert "1 new releases" in out.getvalue() and "2 new timeline events" in out.getvalue()
    release = Release.objects.get()
    assert (release.pod_hash, release.outcome, release.git_revision) == ("abc123", "promoted", "deadbeef")
    assert sorted(release.events.values_list("kind", flat=True)) == ["finding.raised", "release.started"]


@pytest.mark.django_db
def test_importing_twice_adds_nothing(tmp_path: Path) -> None:
    make_history()
    path = tmp_path / "history.jsonl"
    call_command("export_history", output=str(path))
    out = io.StringIO()
    call_command("import_history", str(path), stdout=out)
    assert "0 new releases (1 already there)" in out.getvalue()
    assert TimelineEvent.objects.count() == 2


@pytest.mark.django_db
def test_a_bad_line_names_itself_and_nothing_is_imported(tmp_path: Path) -> None:
    make_history()
    path = tmp_path / "history.jsonl"
    call_command("export_history", output=str(path))
    good = path.read_text().splitlines()
    Release.objects.all().delete()
    record = json.loads(good[1])
    record["startedAt"] = "yesterday"
    path.write_text("\n".join([good[0], good[1].replace("abc123", "other1"), json.dumps(record)]) + "\n")
    with pytest.raises(CommandError, match=r"line 3: 'startedAt' is not an RFC 3339 time"):
        call_command("import_history", str(path))
    assert Release.objects.count() == 0


@pytest.mark.django_db
def test_a_file_that_is_not_an_export_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"hello": 1}\n')
    with pytest.raises(CommandError, match="not a rollouts-ui history export"):
        call_command("import_history", str(path))
    with pytest.raises(CommandError, match="No such file"):
        call_command("import_history", str(tmp_path / "missing.jsonl"))


def test_the_hyphenated_names_reach_the_commands() -> None:
    from manage import command_alias

    assert command_alias(["manage.py", "export-history", "--since", "2026-01-01"]) == [
        "manage.py",
        "export_history",
        "--since",
        "2026-01-01",
    ]
    assert command_alias(["manage.py", "help", "import-history"])[2] == "import_history"
    assert command_alias(["manage.py", "--version"]) == ["manage.py", "--version"]
    result = subprocess.run(
        [sys.executable, "manage.py", "import-history", "--help"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0 and "--dry-run" in result.stdout


def test_retention_and_the_notification_sweep_are_scheduled() -> None:
    from rollouts_ui.celery import BEAT_SCHEDULE, app

    app.loader.import_default_modules()
    for entry in BEAT_SCHEDULE.values():
        assert entry["task"] in app.tasks, entry["task"]
