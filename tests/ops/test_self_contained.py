"""The repository stands on its own: a clone with nothing beside it runs the whole suite.

Upstream test data is kept in ``tests/fixtures/upstream`` (one folder per project, each with SOURCE and
LICENSE). These tests fail when code or docs name the folder that used to sit beside the repository,
when reading beside it is no longer refused, or when the kept data loses its provenance.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import UPSTREAM_FIXTURES, ReadOutsideRepository

ROOT = Path(__file__).resolve().parents[2]
# Spelled in pieces so this file does not match itself.
FORBIDDEN = ("../" + "shared", "shared/" + "fixtures", "/work/" + "shared")
LIMIT = 2 * 1024 * 1024


def _repository_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.decode()
    return [ROOT / name for name in listed.split("\0") if name and (ROOT / name).is_file()]


def test_no_file_names_the_folder_beside_the_repository() -> None:
    offenders = []
    for path in _repository_files():
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        offenders += [f"{path.relative_to(ROOT)}: {word}" for word in FORBIDDEN if word in text]
    assert not offenders, "these files reach outside the repository:\n" + "\n".join(offenders)


def test_reading_beside_the_repository_fails_the_test() -> None:
    with pytest.raises(ReadOutsideRepository, match="outside the repository"):
        (ROOT.parent / "shared" / "fixtures" / "README.md").read_text()


@pytest.mark.parametrize("project", ["argo-rollouts", "argo-cd", "flagger"])
def test_each_upstream_folder_names_its_source_and_keeps_its_licence(project: str) -> None:
    folder = UPSTREAM_FIXTURES / project
    source = (folder / "SOURCE").read_text()
    assert "Repository: https://github.com/" in source
    assert "Commit:" in source and "Apache License 2.0" in source
    assert list(folder.glob("LICENSE*")), f"{project} has no LICENSE file"


def test_no_committed_file_is_over_two_megabytes() -> None:
    big = [str(p.relative_to(ROOT)) for p in _repository_files() if p.stat().st_size > LIMIT]
    assert not big, big
