"""A handoff holds each watch's objects as the cache keeps them, as of the version the watch stood at; it is
read back only by the same code, for the same API server."""

from __future__ import annotations

import orjson
import pytest

from dashboard.kube.cache import ClusterCache, Kept, Listing
from dashboard.kube.handoff import META, HandoffRefused, pack, unpack
from tests.domain.findings.builders import analysis_run, rollout

SERVER = "https://kube.example:6443"


def filled() -> ClusterCache:
    cache = ClusterCache()
    cache.apply("Rollout", "ADDED", rollout())
    cache.apply("AnalysisRun", "ADDED", analysis_run("checkout-1", "Successful", [0.01]))
    return cache


def restored(fields: dict[str, bytes]) -> ClusterCache:
    """A new cache given the handoff's watches as lists, the way the watcher applies them."""
    cache = ClusterCache()
    for watch in unpack(fields, server=SERVER).values():
        listing = Listing(watch.kind, watch.namespace)
        for page in watch.pages(size=1):
            cache.list_page(listing, page)
        cache.list_done(listing)
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


def test_the_objects_come_back_projected_already() -> None:
    fields = pack(filled(), {("Rollout", None): "7"}, server=SERVER, saved_at=1.0)
    (watch,) = unpack(fields, server=SERVER).values()
    (page,) = list(watch.pages())
    assert [type(obj) for obj in page] == [Kept]


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
    (page,) = list(unpack(fields, server=SERVER)[("Rollout", "billing")].pages())
    assert [obj["metadata"]["namespace"] for obj in page] == ["billing"]


def test_an_empty_watch_is_handed_off_as_empty() -> None:
    fields = pack(ClusterCache(), {("Pod", None): "3"}, server=SERVER, saved_at=1.0)
    assert list(unpack(fields, server=SERVER)[("Pod", None)].pages()) == []


@pytest.mark.parametrize(
    ("meta", "reason"),
    [
        (None, "no meta field"),
        (b"{not json", "not JSON"),
        (orjson.dumps({"format": 99}), "not in format"),
        (orjson.dumps({"format": 1, "code": "00"}), "another version of the code"),
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


def test_a_damaged_line_is_an_error_when_its_page_is_read() -> None:
    fields = pack(filled(), {("Rollout", None): "7"}, server=SERVER, saved_at=1.0)
    fields["Rollout/"] += b"\n{broken"
    watch = unpack(fields, server=SERVER)[("Rollout", None)]
    with pytest.raises(ValueError):
        list(watch.pages())
