"""Server-side apply's pure parts: merging, conflicts, removal of fields a manager stops applying."""

from __future__ import annotations

from kubesim import apply, patching


def test_merge_keeps_live_fields_and_merges_keyed_lists_by_key() -> None:
    live = {
        "spec": {"replicas": 1, "paused": True, "containers": [{"name": "a", "image": "1"}, {"name": "b"}]}
    }
    applied = {"spec": {"replicas": 2, "containers": [{"name": "a", "image": "2"}, {"name": "c"}]}}
    merged = apply.merge(live, applied)
    assert merged["spec"]["paused"] is True and merged["spec"]["replicas"] == 2
    assert merged["spec"]["containers"] == [{"name": "a", "image": "2"}, {"name": "b"}, {"name": "c"}]
    steps = apply.merge({"steps": [{"setWeight": 1}, {"pause": {}}]}, {"steps": [{"setWeight": 5}]})
    assert steps == {"steps": [{"setWeight": 5}]}  # lists without keys are atomic


def test_conflicts_name_each_field_and_manager_and_equal_values_are_shared() -> None:
    live = {"spec": {"replicas": 1, "paused": False}}
    owned = patching.fields_v1(live)
    applied = {"spec": {"replicas": 3, "paused": False}}
    found = apply.conflicts(live, applied, patching.fields_v1(applied), [('"kubectl" using v1', owned)])
    assert found == [apply.FieldConflict('"kubectl" using v1', ".spec.replicas")]
    assert (
        apply.conflict_message(found)
        == 'Apply failed with 1 conflict: conflict with "kubectl" using v1: .spec.replicas'
    )
    two = [apply.FieldConflict('"b"', ".spec.x"), apply.FieldConflict('"a"', ".spec.y")]
    assert (
        apply.conflict_message(two)
        == 'Apply failed with 2 conflicts: conflicts with "a":\n- .spec.y\nconflicts with "b":\n- .spec.x'
    )


def test_paths_print_like_the_api_server() -> None:
    path = ("f:spec", "f:containers", 'k:{"name":"web"}', "f:image")
    assert apply.path_string(path) == '.spec.containers[name="web"].image'


def test_remove_drops_leaves_and_keyed_items() -> None:
    obj = {"spec": {"replicas": 1, "containers": [{"name": "a", "image": "x"}, {"name": "b"}]}}
    fields = {"f:spec": {"f:replicas": {}, "f:containers": {'k:{"name":"b"}': {".": {}, "f:name": {}}}}}
    assert apply.remove(obj, fields) == {"spec": {"containers": [{"name": "a", "image": "x"}]}}


def test_manager_descriptions_follow_the_server() -> None:
    entry = {"manager": "m", "operation": "Update", "apiVersion": "v1", "time": "2026-01-01T00:00:00Z"}
    assert apply.describe_manager(entry) == '"m" using v1 at 2026-01-01T00:00:00Z'
    assert apply.describe_manager({"manager": "m", "operation": "Apply", "subresource": "status"}) == (
        '"m" with subresource "status"'
    )


def test_remove_keeps_an_item_still_applied_and_drops_its_unapplied_fields() -> None:
    obj = {"containers": [{"name": "a", "image": "x", "args": ["y"]}]}
    fields = {"f:containers": {'k:{"name":"a"}': {"f:args": {}}}}
    assert apply.remove(obj, fields) == {"containers": [{"name": "a", "image": "x"}]}
