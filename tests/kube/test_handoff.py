"""A handoff holds each watch's objects as the cache keeps them, as of the version the watch stood at; it is
read back only by the same code, for the same API server."""

from __future__ import annotations

import orjson
import pytest

from dashboard.kube import handoff
from dashboard.kube.cache import ClusterCache, Packed
from dashboard.kube.handoff import FORMAT, META, HandoffRefused, pack, unpack
from tests.domain.findings.builders import analysis_run, rollout

SERVER = "https://kube.example:6443"


def filled() -> ClusterCache:
    cache = ClusterCache()
    cache.apply("Rollout", "ADDED", rollout())
    cache.apply("AnalysisRun", "ADDED", analysis_run("checkout-1", "Successful", [0.01]))
    return cache


def rollout_event(uid: str, reason: str) -> dict[str, object]:
    subject = rollout()["metadata"]
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"checkout.{uid}", "namespace": subject["namespace"], "uid": uid},
        "involvedObject": {"kind": "Rollout", **{k: subject[k] for k in ("namespace", "name", "uid")}},
        "reason": reason,
        "message": "Rollout step 1/2 completed",
        "type": "Normal",
        "lastTimestamp": "2026-12-01T10:00:00Z",
        "count": 1,
    }


def restored(fields: dict[str, bytes]) -> ClusterCache:
    """A new cache filled from the handoff's watches, the way the watcher fills it."""
    cache = ClusterCache()
    for watch in unpack(fields, server=SERVER).values():
        cache.restore(watch.kind, watch.kept())
    return cache


def test_a_handoff_gives_back_the_cache_it_was_packed_from() -> None:
    cache = filled()
    fields = pack(cache, {("Rollout", None): "41", ("AnalysisRun", None): "42"}, server=SERVER, saved_at=1.0)
    watches = unpack(fields, server=SERVER)
    assert {key: watch.version for key, watch in watches.items()} == {
        ("Rollout", None): "41", ("AnalysisRun", None): "42"
    }
    again = restored(fields)
    for kind in ("Rollout", "AnalysisRun"):
        assert dict(again.objects[kind].items()) == dict(cache.objects[kind].items())
    uid = next(iter(cache.rollouts()))
    refs, refs_again = cache.input_refs(uid), again.input_refs(uid)
    assert refs is not None and refs_again is not None
    assert again.fingerprint(refs_again, b"s") == cache.fingerprint(refs, b"s"), "its views are kept"


def test_the_objects_come_back_as_the_very_text_the_cache_kept() -> None:
    cache = filled()
    again = restored(pack(cache, {("Rollout", None): "7"}, server=SERVER, saved_at=1.0))
    uid = next(iter(cache.rollouts()))
    assert type(again.objects["Rollout"]) is Packed
    assert again.objects["Rollout"].kept(uid) == cache.objects["Rollout"].kept(uid)  # type: ignore[attr-defined]



def test_a_large_watch_is_handed_off_in_parts_and_comes_back_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    cache = filled()
    for number in range(40):
        cache.apply("RolloutEvent", "ADDED", rollout_event(f"e-{number}", f"Reason{number}"))
    monkeypatch.setattr(handoff, "PIECE_BYTES", 64)  # every object or two fills a piece
    monkeypatch.setattr(handoff, "PART_BYTES", 200)  # and a few pieces a part
    fields = pack(cache, {("RolloutEvent", None): "5"}, server=SERVER, saved_at=1.0)
    parts = [name for name in fields if name.startswith("RolloutEvent/#")]
    assert len(parts) > 2
    assert orjson.loads(fields[META])["parts"] == {"RolloutEvent/": len(parts)}
    texts = unpack(fields, server=SERVER)[("RolloutEvent", None)].kept()
    events = cache.objects["RolloutEvent"]
    assert type(events) is Packed
    assert len(texts) == len(events) > 2
    assert sorted(texts) == sorted(events.kept(uid) for uid in events)


def test_a_watch_with_a_part_missing_is_not_resumed_but_listed(monkeypatch: pytest.MonkeyPatch) -> None:
    cache = filled()
    for number in range(40):
        cache.apply("RolloutEvent", "ADDED", rollout_event(f"e-{number}", f"Reason{number}"))
    monkeypatch.setattr(handoff, "PIECE_BYTES", 64)
    monkeypatch.setattr(handoff, "PART_BYTES", 200)
    fields = pack(cache, {("RolloutEvent", None): "5", ("Rollout", None): "7"}, server=SERVER, saved_at=1.0)
    del fields["RolloutEvent/#1"]
    assert set(unpack(fields, server=SERVER)) == {("Rollout", None)}


def test_restoring_names_the_rollouts_to_build_like_a_list_and_hands_over_each_rollout_as_read() -> None:
    cache = filled()
    fields = pack(cache, {("Rollout", None): "7", ("AnalysisRun", None): "8"}, server=SERVER, saved_at=1.0)
    watches = unpack(fields, server=SERVER)
    empty = ClusterCache()
    read: list[dict[str, object]] = []
    affected = empty.restore("Rollout", watches[("Rollout", None)].kept(), read.append)
    assert affected == set(cache.rollouts()) and [r["metadata"]["name"] for r in read] == ["checkout"]  # type: ignore[index]
    affected = empty.restore("AnalysisRun", watches[("AnalysisRun", None)].kept(), read.append)
    assert affected == set(cache.rollouts()) and len(read) == 1  # only Rollouts are handed over


def test_a_watch_without_a_version_is_left_out() -> None:
    fields = pack(filled(), {("Rollout", None): "7", ("AnalysisRun", None): ""}, server=SERVER, saved_at=1.0)
    assert set(unpack(fields, server=SERVER)) == {("Rollout", None)}
    assert "AnalysisRun/" not in fields


def test_a_namespaced_watch_keeps_only_its_namespace() -> None:
    cache = filled()
    other = rollout()
    other["metadata"] |= {"namespace": "billing", "uid": "uid-billing"}
    cache.apply("Rollout", "ADDED", other)
    fields = pack(cache, {("Rollout", "billing"): "9"}, server=SERVER, saved_at=1.0)
    texts = unpack(fields, server=SERVER)[("Rollout", "billing")].kept()
    assert [orjson.loads(text)["metadata"]["namespace"] for text in texts] == ["billing"]


def test_an_empty_watch_is_handed_off_as_empty() -> None:
    fields = pack(ClusterCache(), {("Pod", None): "3"}, server=SERVER, saved_at=1.0)
    assert unpack(fields, server=SERVER)[("Pod", None)].kept() == []


@pytest.mark.parametrize(
    ("meta", "reason"),
    [
        (None, "no meta field"),
        (b"{not json", "not JSON"),
        (orjson.dumps({"format": 99}), "not in format"),
        (orjson.dumps({"format": 1}), "not in format"),  # JSON texts one per line: an older watcher's
        (orjson.dumps({"format": FORMAT, "code": "00"}), "another version of the code"),
    ],
)
def test_a_handoff_that_cannot_be_used_is_refused_naming_why(meta: bytes | None, reason: str) -> None:
    fields = pack(filled(), {("Rollout", None): "7"}, server=SERVER, saved_at=1.0)
    if meta is None:
        del fields[META]
    else:
        fields[META] = meta
    with pytest.raises(HandoffRefused, match=reason):
        unpack(fields, server=SERVER)


def test_a_handoff_from_another_api_server_is_refused() -> None:
    fields = pack(filled(), {("Rollout", None): "7"}, server=SERVER, saved_at=1.0)
    with pytest.raises(HandoffRefused, match="another API server"):
        unpack(fields, server="https://other.example:6443")


def test_a_damaged_field_is_an_error_naming_its_kind() -> None:
    fields = pack(filled(), {("Rollout", None): "7"}, server=SERVER, saved_at=1.0)
    fields["Rollout/#0"] = fields["Rollout/#0"][:-9]
    with pytest.raises(ValueError, match="the handoff's Rollout cannot be decompressed"):
        unpack(fields, server=SERVER)[("Rollout", None)].kept()


def test_events_are_handed_off_compressed_and_kept_as_the_very_bytes_they_came_as() -> None:
    cache = ClusterCache()
    for number in range(3):
        event = rollout_event(f"e-{number}", "RolloutStepCompleted\n(a newline in its text)")
        cache.apply("RolloutEvent", "ADDED", event)
    fields = pack(cache, {("RolloutEvent", None): "5"}, server=SERVER, saved_at=1.0)
    again = restored(fields)
    store, store_again = cache.objects["RolloutEvent"], again.objects["RolloutEvent"]
    assert type(store) is Packed and type(store_again) is Packed
    assert dict(store_again.items()) == dict(store.items()) and len(store) == 3
    assert [store_again.kept(uid) for uid in store] == [store.kept(uid) for uid in store]
    assert cache.events_by_rollout and again.events_by_rollout == cache.events_by_rollout  # indexed alike


def test_a_field_cut_short_is_an_error_naming_its_kind() -> None:
    import zlib

    fields = pack(filled(), {("Rollout", None): "7"}, server=SERVER, saved_at=1.0)
    fields["Rollout/#0"] = zlib.compress(zlib.decompress(fields["Rollout/#0"])[:-3])
    with pytest.raises(ValueError, match="the handoff's Rollout is cut short"):
        unpack(fields, server=SERVER)[("Rollout", None)].kept()


def test_restoring_an_event_that_is_not_compressed_as_the_cache_keeps_it_is_an_error() -> None:
    with pytest.raises(ValueError, match="cannot be decompressed"):
        ClusterCache().restore("RolloutEvent", [b'{"metadata": {"uid": "e"}}'])


@pytest.mark.parametrize("line", [b"{broken", b"[]", b'{"metadata": {}}'])
def test_restoring_a_line_that_is_not_a_kept_object_is_an_error(line: bytes) -> None:
    with pytest.raises(ValueError):
        ClusterCache().restore("Rollout", [line])
