from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest

from dashboard.kube.recording import RecordingError, RecordingWriter, read_recording
from dashboard.kube.watcher import PipelineSettings, Watcher
from dashboard.live.bus import MemoryBus
from dashboard.live.lease import MemoryLease

AT = datetime(2026, 11, 29, 10, 0, 0, 123000, tzinfo=UTC)


def rollout(rv: str, step: int) -> dict:  # type: ignore[type-arg]
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Rollout",
        "metadata": {"name": "web", "namespace": "shop", "uid": "u1", "resourceVersion": rv},
        "spec": {"strategy": {"canary": {"steps": [{"setWeight": 10}, {"pause": {}}, {"setWeight": 50}]}}},
        "status": {"currentPodHash": "bbb", "stableRS": "aaa", "currentStepIndex": step},
    }


def test_it_writes_and_reads_back_the_design_format(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    writer = RecordingWriter(path)
    writer.write("prod", "ADDED", rollout("1", 0), AT)
    writer.close()
    assert path.read_text().startswith('{"at":"2026-11-29T10:00:00.123Z","cluster":"prod","type":"ADDED"')
    (event,) = list(read_recording(path))
    assert (event.at, event.cluster, event.type) == (AT, "prod", "ADDED")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("nope", "not JSON"),
        ("[1]", "expected a JSON object"),
        (
            '{"at": "2026-11-29T10:00:00Z", "cluster": "c", "type": "BOOKMARK", "object": {}}',
            '"type" must be',
        ),
        ('{"at": "yesterday", "cluster": "c", "type": "ADDED", "object": {}}', '"at" must be an RFC 3339'),
        ('{"at": "2026-11-29T10:00:00Z", "cluster": "", "type": "ADDED", "object": {}}', '"cluster" must be'),
    ],
)
def test_a_bad_line_is_reported_with_its_line_number(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(
        '{"at": "2026-11-29T10:00:00Z", "cluster": "c", "type": "ADDED", "object": {}}\n' + line + "\n"
    )
    with pytest.raises(RecordingError, match=f"bad.jsonl:2: .*{message}"):
        list(read_recording(path))


def test_a_line_nested_beyond_the_parser_is_reported_with_its_line_number(tmp_path: Path) -> None:
    path = tmp_path / "deep.jsonl"
    path.write_text("[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(RecordingError, match=r"deep\.jsonl:1: nested too deeply to read"):
        list(read_recording(path))


def test_a_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(RecordingError, match="cannot be read"):
        list(read_recording(tmp_path / "missing.jsonl"))


def test_a_replay_publishes_every_recorded_state_in_order(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    writer = RecordingWriter(path)
    for i, step in enumerate([0, 1, 2, 3]):
        writer.write(
            "prod", "ADDED" if i == 0 else "MODIFIED", rollout(str(i + 1), step), AT.replace(second=i)
        )
    writer.close()
    bus = MemoryBus(prefix=uuid.uuid4().hex)
    watcher = Watcher("prod", bus=bus, lease=MemoryLease(), settings=PipelineSettings(min_publish_interval=0))
    assert asyncio.run(watcher.replay(read_recording(path))) == 4
    entries = asyncio.run(bus.read_since("0-0"))
    assert [e["view"]["step"] for _, e in entries] == ["0/3", "1/3", "2/3", "3/3"]
    steps = [ev for _, e in entries for ev in e["events"] if ev["kind"] == "step.changed"]
    assert [ev["at"] for ev in steps] == [
        "2026-11-29T10:00:01.123Z",
        "2026-11-29T10:00:02.123Z",
        "2026-11-29T10:00:03.123Z",
    ]
