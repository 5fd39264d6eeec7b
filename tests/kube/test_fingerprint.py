"""The fingerprint of a view's inputs names exactly the versions of the objects it was built from."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dashboard.kube.cache import ClusterCache
from dashboard.kube.fingerprint import Built, build_salt, code_version, inputs_fingerprint, object_name

SALT = b"s" * 16


def obj(uid: str, version: str | None, **extra: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"uid": uid}
    if version is not None:
        meta["resourceVersion"] = version
    return {"metadata": meta, **extra}


ROLLOUT = object_name(obj("r", "10"))
REPLICA_SETS = [object_name(obj("rs-1", "11")), object_name(obj("rs-2", "12"))]


def test_the_order_the_cache_met_the_children_in_does_not_count() -> None:
    assert inputs_fingerprint([[ROLLOUT], REPLICA_SETS], SALT) == inputs_fingerprint(
        [[ROLLOUT], list(reversed(REPLICA_SETS))], SALT
    )


def test_a_new_version_of_any_input_changes_it() -> None:
    before = inputs_fingerprint([[ROLLOUT], REPLICA_SETS], SALT)
    assert inputs_fingerprint([[ROLLOUT], [REPLICA_SETS[0], object_name(obj("rs-2", "13"))]], SALT) != before
    assert inputs_fingerprint([[object_name(obj("r", "14"))], REPLICA_SETS], SALT) != before
    assert inputs_fingerprint([[ROLLOUT], REPLICA_SETS[:1]], SALT) != before


def test_an_object_moved_to_another_group_changes_it() -> None:
    assert inputs_fingerprint([[ROLLOUT], REPLICA_SETS, []], SALT) != inputs_fingerprint(
        [[ROLLOUT], [], REPLICA_SETS], SALT
    )


def test_other_code_or_settings_change_it() -> None:
    assert inputs_fingerprint([[ROLLOUT]], SALT) != inputs_fingerprint([[ROLLOUT]], b"t" * 16)


def test_an_object_without_a_resource_version_is_named_by_its_content() -> None:
    plain = obj("x", None, status={"phase": "Healthy"})
    changed = obj("x", None, status={"phase": "Degraded"})
    assert object_name(plain) != object_name(changed)


def test_the_cache_names_a_packed_object_by_its_text_and_a_change_the_view_reads_changes_it() -> None:
    cache = ClusterCache()
    rollout = {
        "metadata": {"uid": "r", "name": "a", "namespace": "shop", "resourceVersion": "1"},
        "status": {"phase": "Paused"},
    }
    cache.apply("Rollout", "ADDED", rollout)

    def fingerprint() -> bytes:
        refs = cache.input_refs("r")
        assert refs is not None
        return cache.fingerprint(refs, SALT)

    before = fingerprint()
    assert fingerprint() == before
    cache.apply("Rollout", "MODIFIED", {**rollout, "status": {"phase": "Healthy"}})
    assert fingerprint() != before
    assert cache.input_refs("gone") is None


def test_the_salt_names_the_cluster_the_settings_and_the_code() -> None:
    code = b"c" * 16
    salt = build_salt("prod", {"recheck": 30}, code)
    assert salt == build_salt("prod", {"recheck": 30}, code)
    assert salt != build_salt("staging", {"recheck": 30}, code)
    assert salt != build_salt("prod", {"recheck": 60}, code)
    assert salt != build_salt("prod", {"recheck": 30}, b"d" * 16)


def test_the_code_version_changes_with_any_source_file(tmp_path: Path) -> None:
    (tmp_path / "domain").mkdir()
    source = tmp_path / "domain" / "view.py"
    source.write_text("WEIGHT = 1\n")
    before = code_version(tmp_path)
    source.write_text("WEIGHT = 2\n")
    code_version.cache_clear()
    assert code_version(tmp_path) != before


def test_a_record_reads_back_and_anything_else_reads_as_none() -> None:
    record = Built(b"f" * 16, b"d" * 16, timed=True)
    assert Built.decode(record.encode()) == record
    quiet = Built(b"f" * 16, b"d" * 16, timed=False)
    assert Built.decode(quiet.encode()) == quiet
    assert Built.decode(b"") is None
    assert Built.decode(record.encode()[:-1] + b"?") is None
    assert Built.decode(b"{\"old\": \"format\"}") is None
