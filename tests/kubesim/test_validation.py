"""Names, labels and schemas refused with apimachinery's messages."""

from __future__ import annotations

from kubesim import validation


def test_label_values_follow_the_label_syntax() -> None:
    assert validation.label_errors({"app": "web", "empty": "", "v": "1.2_3-x"}) == []
    (error,) = validation.label_errors({"app": "not ok!"})
    assert error.field == "metadata.labels"
    assert error.message.startswith('Invalid value: "not ok!": a valid label must be an empty string')
    assert any("no more than 63" in e.message for e in validation.label_errors({"a": "x" * 64}))


def test_label_keys_have_an_optional_dns_prefix_and_a_short_name() -> None:
    assert validation.label_errors({"app.kubernetes.io/name": "x", "a_b.c": "y"}) == []
    assert validation.label_errors({"-bad": "x"})
    assert validation.label_errors({"Bad_Prefix/name": "x"})
    assert validation.label_errors({"/name": "x"})
    assert validation.label_errors({"p/" + "n" * 64: "x"})


def test_names_by_kind() -> None:
    assert validation.name_errors("Rollout", "web.v2") == []
    assert validation.name_errors("Rollout", "Web")
    assert validation.name_errors("Namespace", "a.b")  # namespaces are RFC 1123 labels: no dots
    assert validation.name_errors("Service", "1web")  # services are RFC 1035 labels: start with a letter
    assert "a lowercase RFC 1123 label" in validation.name_errors("Namespace", "a.b")[0].message


def test_schema_errors_report_wrong_types_and_unknown_fields() -> None:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "required": ["replicas"],
                "properties": {
                    "replicas": {"type": "integer"},
                    "port": {"x-kubernetes-int-or-string": True},
                    "mode": {"type": "string", "enum": ["a", "b"]},
                    "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                    "items": {"type": "array", "items": {"$ref": "#/components/schemas/Item"}},
                },
            }
        },
    }
    components = {"Item": {"type": "object", "properties": {"name": {"type": "string"}}}}
    good = {"spec": {"replicas": 1, "port": "http", "mode": "a", "free": {"x": 1}, "items": [{"name": "n"}]}}
    assert validation.schema_errors(good, schema, components) == ([], [])
    bad = {"spec": {"replicas": "3", "port": 1.5, "mode": "c", "items": [{"nam": "n"}], "extra": 1}}
    errors, unknown = validation.schema_errors(bad, schema, components)
    assert {e.field for e in errors} == {"spec.replicas", "spec.port", "spec.mode"}
    assert unknown == ["spec.items[0].nam", "spec.extra"]
    errors, _ = validation.schema_errors({"spec": {}}, schema, components)
    assert [(e.field, e.reason) for e in errors] == [("spec.replicas", "FieldValueRequired")]
