"""Reading object dumps: YAML/JSON, multi-document, kind: List, and errors naming file and document."""

from __future__ import annotations

import json
from pathlib import Path

from dashboard.kube.loading import load_paths


def test_it_reads_every_document_of_a_multi_document_file(tmp_path: Path) -> None:
    path = tmp_path / "all.yaml"
    path.write_text("---\nkind: Rollout\nmetadata: {name: a}\n---\nkind: Pod\nmetadata: {name: b}\n")

    result = load_paths([path])

    assert [(o.document, o.object["kind"]) for o in result.objects] == [(1, "Rollout"), (2, "Pod")]
    assert result.errors == ()


def test_a_broken_document_leaves_the_others_readable(tmp_path: Path) -> None:
    path = tmp_path / "mixed.yaml"
    path.write_text("kind: Rollout\n---\nkind: [oops\n---\nmetadata: {name: x}\n---\nkind: Pod\n")

    result = load_paths([path])

    assert [o.object["kind"] for o in result.objects] == ["Rollout", "Pod"]
    assert [str(e) for e in result.errors] == [
        f"{path}: document 2: invalid YAML: expected ',' or ']', but got '<stream end>' at line 4, column 1",
        f"{path}: document 3: has no kind",
    ]


def test_it_expands_lists_and_fills_the_item_kind_of_typed_lists(tmp_path: Path) -> None:
    path = tmp_path / "list.json"
    path.write_text(json.dumps({"kind": "RolloutList", "items": [{"metadata": {"name": "a"}}]}))
    plain = tmp_path / "plain.yaml"
    plain.write_text("kind: List\nitems:\n- kind: Pod\n- 3\n")

    result = load_paths([path, plain])

    assert [(o.object["kind"], o.item) for o in result.objects] == [("Rollout", 1), ("Pod", 1)]
    assert [str(e) for e in result.errors] == [
        f"{plain}: document 1: item 2: expected an object, found a number"
    ]


def test_timestamps_stay_strings_like_the_api_returns_them(tmp_path: Path) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text("kind: Pod\nmetadata:\n  creationTimestamp: 2026-01-01T00:00:00Z\n")

    (loaded,) = load_paths([path]).objects

    assert loaded.object["metadata"]["creationTimestamp"] == "2026-01-01T00:00:00Z"


def test_directories_are_read_recursively_in_name_order(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "1.yml").write_text("kind: B\n")
    (tmp_path / "a.json").write_text('{"kind": "A"}')
    (tmp_path / "notes.txt").write_text("kind: Ignored\n")

    assert [o.object["kind"] for o in load_paths([tmp_path]).objects] == ["A", "B"]


def test_missing_paths_and_non_objects_are_reported(tmp_path: Path) -> None:
    scalar = tmp_path / "scalar.yaml"
    scalar.write_text("just text\n")

    result = load_paths([tmp_path / "nope.yaml", scalar])

    assert [str(e) for e in result.errors] == [
        f"{tmp_path / 'nope.yaml'}: no such file or directory",
        f"{scalar}: document 1: expected an object, found a string",
    ]


def test_it_reads_every_upstream_fixture_set_cleanly(shared_fixtures: Path) -> None:
    result = load_paths([shared_fixtures / "argo-rollouts/pkg/kubectl-argo-rollouts/info/testdata"])

    assert result.errors == ()
    assert sum(1 for o in result.objects if o.object["kind"] == "Rollout") == 11
