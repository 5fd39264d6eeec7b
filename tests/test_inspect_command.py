"""`manage.py inspect`: text equal to kubectl's, JSON views, and clear errors without tracebacks."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError

from dashboard.domain.objects import rfc3339
from tests.domain.upstream_fixtures import NOW, expected, golden_text, load_set, strip_trailing


def _run(*args: str) -> tuple[str, str, int]:
    out, err = StringIO(), StringIO()
    code = 0
    try:
        call_command("inspect", *args, stdout=out, stderr=err)
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    return out.getvalue(), err.getvalue(), code


def _dump(tmp_path: Path, objects: list[dict[str, Any]]) -> Path:
    path = tmp_path / "objects.yaml"
    path.write_text(yaml.safe_dump_all(objects, allow_unicode=True))
    return path


@pytest.mark.parametrize(
    ("fixture_set", "golden_file"),
    [
        ("canary", "golden/kubectl_get/TestGetCanaryRollout.txt"),
        ("blue-green", "golden/kubectl_get/TestGetBlueGreenRollout.txt"),
        ("experiment-analysis", "golden/kubectl_get/TestExperimentRollout.txt"),
        ("rollout-aborted", "golden/kubectl_get/TestGetAbortedRollout.txt"),
        ("rollout-invalid", "golden/kubectl_get/TestGetInvalidRollout.txt"),
    ],
)
def test_text_output_is_kubectls(
    tmp_path: Path, shared_fixtures: Path, fixture_set: str, golden_file: str
) -> None:
    objects = load_set(shared_fixtures, fixture_set)
    name = next(o for o in objects if o["kind"] == "Rollout")["metadata"]["name"]

    out, err, code = _run(str(_dump(tmp_path, objects)), "--rollout", name, "--now", rfc3339(NOW) or "")

    assert (err, code) == ("", 0)
    assert strip_trailing(out) == strip_trailing(golden_text(shared_fixtures, golden_file))


def test_experiment_output_is_kubectls(tmp_path: Path, shared_fixtures: Path) -> None:
    entry = expected(shared_fixtures)["experiments"][0]
    path = _dump(tmp_path, load_set(shared_fixtures, entry["fixture_set"]))

    out, _, code = _run(str(path), "--experiment", entry["name"], "--now", rfc3339(NOW) or "")

    assert code == 0
    assert strip_trailing(out) == strip_trailing(
        golden_text(shared_fixtures, entry["golden"][0]["golden_file"])
    )


def test_json_output_is_one_document_per_rollout(shared_fixtures: Path) -> None:
    directory = shared_fixtures / "argo-rollouts/pkg/kubectl-argo-rollouts/info/testdata/canary"

    out, _, code = _run(str(directory), "--format", "json", "--now", "2026-01-01T00:00:00Z")
    documents = json.loads(out)

    assert code == 0
    assert len(documents) == 6
    first = documents[0]
    assert (first["name"], first["strategy"], first["status"], first["step"]) == (
        "canary-demo",
        "Canary",
        "Degraded",
        "0/8",
    )
    assert (first["setWeight"], first["actualWeight"], first["updatedAt"]) == (20, 0, "2026-01-01T00:00:00Z")
    assert [r["revision"] for r in first["revisions"]] == [31, 30, 29]
    assert first["revisions"][0]["replicaSets"][0]["tags"] == ["canary"]
    assert first["findings"] == []


def test_a_single_rollout_is_a_single_json_object(shared_fixtures: Path) -> None:
    directory = shared_fixtures / "argo-rollouts/pkg/kubectl-argo-rollouts/info/testdata/rollout-aborted"

    out, _, _ = _run(str(directory), "--format", "json")

    assert json.loads(out)["name"] == "rollout-background-analysis"


def test_bad_input_is_reported_by_file_and_document_and_the_rest_still_prints(tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text(
        "kind: Rollout\nmetadata: {name: ok, namespace: ns}\nspec: {strategy: {canary: {}}}\nstatus: {}\n"
        "---\nkind: Rollout\nmetadata: {name: bare}\n---\nmetadata: {name: nokind}\n---\nkind: [\n"
    )

    out, err, code = _run(str(good), str(tmp_path / "missing.yaml"))

    assert code == 1
    assert "Name:            ok" in out and "Name:            bare" in out
    assert f"{good}: document 3: has no kind" in err
    assert f"{good}: document 4: invalid YAML" in err
    assert f"{good}: document 2: Rollout bare has no status" in err
    assert f"{tmp_path / 'missing.yaml'}: no such file or directory" in err
    assert "Traceback" not in err


def test_an_unknown_rollout_name_or_a_bad_now_is_a_clear_error(shared_fixtures: Path) -> None:
    directory = str(shared_fixtures / "argo-rollouts/pkg/kubectl-argo-rollouts/info/testdata/rollout-aborted")

    with pytest.raises(CommandError, match="no Rollout named 'nope'"):
        call_command("inspect", directory, "--rollout", "nope", stdout=StringIO())
    with pytest.raises(CommandError, match="--now must be an RFC3339 time"):
        call_command("inspect", directory, "--now", "yesterday", stdout=StringIO())


BAD_INPUTS = {
    "binary.yaml": (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe", "binary data"),
    "latin1.yaml": (b"kind: Rollout\nname: caf\xe9\n", "not UTF-8"),
    "truncated.json": (b'{"kind": "Rollout", "metadata": {"name": "x"', "invalid JSON"),
    "truncated.yaml": (b"kind: Rollout\nmetadata:\n  name: [x, y\n", "invalid YAML"),
    "deep.json": (b"[" * 100_000 + b"]" * 100_000, "nested 100000 levels deep"),
    "empty.yaml": (b"", "empty"),
    "blank.yaml": (b"---\n# nothing\n---\n", "no Kubernetes object"),
}


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_unreadable_input_is_one_line_naming_the_file_and_the_cause(tmp_path: Path, name: str) -> None:
    data, cause = BAD_INPUTS[name]
    path = tmp_path / name
    path.write_bytes(data)

    out, err, code = _run(str(path))

    assert code == 1
    assert out == ""
    assert err.strip().count("\n") == 0, err
    assert err.startswith(f"error: {path}") and cause in err, err
    assert "no Rollout found" not in err


def test_a_missing_file_is_named_not_reported_as_no_rollout(tmp_path: Path) -> None:
    out, err, code = _run(str(tmp_path / "nope.yaml"))
    assert (out, code) == ("", 1)
    assert err.strip() == f"error: {tmp_path / 'nope.yaml'}: no such file or directory"
