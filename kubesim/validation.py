"""What a real API server refuses before storing an object: bad names, bad labels, schema violations.

- Names: DNS-1123 subdomains (most kinds), DNS-1123 labels (namespaces), DNS-1035 labels (services), with the
  messages apimachinery's validators give.
- Labels: key syntax (optional DNS-1123 prefix, a 63-character name part) and value syntax; annotation keys.
- Schemas: the structural checks of an OpenAPI v3 schema (types, enums, required fields, int-or-string,
  preserve-unknown-fields) and the unknown fields that `fieldValidation=Strict|Warn` reports.

Every function is pure and returns the problems found as `FieldError`s; the store turns them into one 422.
Non-goals: CEL rules (`x-kubernetes-validations`), formats, patterns, numeric bounds, defaulting, pruning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_DNS1123_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN = _DNS1123_LABEL + r"(\." + _DNS1123_LABEL + ")*"
_DNS1035_LABEL = "[a-z]([-a-z0-9]*[a-z0-9])?"
_QUALIFIED_NAME = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?"
# apimachinery's messages, word for word (clients and people match on them).
_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    f"start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    f"'{_DNS1123_SUBDOMAIN}')"
)
_LABEL1123_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
    "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    f"'{_DNS1123_LABEL}')"
)
_LABEL1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
    "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
    f"validation is '{_DNS1035_LABEL}')"
)
_QUALIFIED_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    f"'{_QUALIFIED_NAME}')"
)
_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
    f"for validation is '{_LABEL_VALUE}')"
)


@dataclass(frozen=True)
class FieldError:
    """One cause of a 422: `reason` is FieldValueInvalid, FieldValueRequired, FieldValueTypeInvalid…"""

    field: str
    message: str
    reason: str = "FieldValueInvalid"

    def cause(self) -> dict[str, str]:
        return {"reason": self.reason, "message": self.message, "field": self.field}


def _full(regex: str, value: str) -> bool:
    return re.fullmatch(regex, value) is not None


def _invalid(field: str, value: Any, why: str) -> FieldError:
    return FieldError(field, f'Invalid value: "{value}": {why}')


def dns1123_subdomain(value: str, field: str) -> list[FieldError]:
    errors = []
    if len(value) > 253:
        errors.append(_invalid(field, value, "must be no more than 253 characters"))
    if not _full(_DNS1123_SUBDOMAIN, value):
        errors.append(
            _invalid(
                field,
                value,
                _SUBDOMAIN_MSG,
            )
        )
    return errors


def dns1123_label(value: str, field: str) -> list[FieldError]:
    errors = []
    if len(value) > 63:
        errors.append(_invalid(field, value, "must be no more than 63 characters"))
    if not _full(_DNS1123_LABEL, value):
        errors.append(
            _invalid(
                field,
                value,
                _LABEL1123_MSG,
            )
        )
    return errors


def dns1035_label(value: str, field: str) -> list[FieldError]:
    errors = []
    if len(value) > 63:
        errors.append(_invalid(field, value, "must be no more than 63 characters"))
    if not _full(_DNS1035_LABEL, value):
        errors.append(
            _invalid(
                field,
                value,
                _LABEL1035_MSG,
            )
        )
    return errors


def name_errors(kind: str, name: Any, field: str = "metadata.name") -> list[FieldError]:
    """The name rules of `kind` (Namespace: RFC 1123 label, Service: RFC 1035 label, else subdomain)."""
    if not isinstance(name, str):
        return [_invalid(field, name, "must be a string")]
    if kind == "Namespace" or field == "metadata.namespace":
        return dns1123_label(name, field)
    if kind == "Service":
        return dns1035_label(name, field)
    return dns1123_subdomain(name, field)


def qualified_name(key: str, field: str) -> list[FieldError]:
    """A label or annotation key: `[prefix/]name` (prefix a DNS-1123 subdomain, name 63 characters)."""
    prefix, slash, name = key.rpartition("/")
    errors: list[FieldError] = []
    if slash and not prefix:
        errors.append(_invalid(field, key, "prefix part must be non-empty"))
    elif slash:
        errors += [
            _invalid(field, key, "prefix part " + e.message.split(": ", 2)[-1])
            for e in dns1123_subdomain(prefix, field)
        ]
    if not name:
        errors.append(_invalid(field, key, "name part must be non-empty"))
    else:
        if len(name) > 63:
            errors.append(_invalid(field, key, "name part must be no more than 63 characters"))
        if not _full(_QUALIFIED_NAME, name):
            errors.append(
                _invalid(
                    field,
                    key,
                    _QUALIFIED_MSG,
                )
            )
    return errors


def label_errors(labels: Any, field: str = "metadata.labels") -> list[FieldError]:
    if labels is None:
        return []
    if not isinstance(labels, dict):
        return [FieldError(field, "Invalid value: must be a map of strings", "FieldValueTypeInvalid")]
    errors: list[FieldError] = []
    for key, value in labels.items():
        errors += qualified_name(str(key), field)
        if not isinstance(value, str):
            errors.append(_invalid(field, value, "label values must be strings"))
            continue
        if len(value) > 63:
            errors.append(_invalid(field, value, "must be no more than 63 characters"))
        if not _full(_LABEL_VALUE, value):
            errors.append(
                _invalid(
                    field,
                    value,
                    _VALUE_MSG,
                )
            )
    return errors


def annotation_errors(annotations: Any, field: str = "metadata.annotations") -> list[FieldError]:
    if annotations is None:
        return []
    if not isinstance(annotations, dict):
        return [FieldError(field, "Invalid value: must be a map of strings", "FieldValueTypeInvalid")]
    errors: list[FieldError] = []
    for key, value in annotations.items():
        errors += qualified_name(str(key).lower(), field)
        if not isinstance(value, str):
            errors.append(_invalid(field, value, "annotation values must be strings"))
    return errors


def metadata_errors(meta: dict[str, Any]) -> list[FieldError]:
    return label_errors(meta.get("labels")) + annotation_errors(meta.get("annotations"))


# ---- schemas ---------------------------------------------------------------------------------------------

Schema = dict[str, Any]
Resolver = dict[str, Schema]  # component name -> schema, for "$ref": "#/components/schemas/<name>"

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
}


def _resolve(schema: Schema, components: Resolver) -> Schema:
    while "$ref" in schema:
        schema = components.get(schema["$ref"].rsplit("/", 1)[-1], {})
    for sub in schema.get("allOf") or []:  # real documents wrap refs in allOf to carry a description
        if "$ref" in sub:
            schema = {**_resolve(sub, components), **{k: v for k, v in schema.items() if k != "allOf"}}
    return schema


def _type_ok(value: Any, expected: str) -> bool:
    if isinstance(value, bool) and expected in ("integer", "number"):
        return False
    if expected == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _TYPES.get(expected, (object,)))


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


def schema_errors(
    value: Any, schema: Schema, components: Resolver, path: str = ""
) -> tuple[list[FieldError], list[str]]:
    """(type errors, unknown field paths) of `value` against an OpenAPI v3 schema."""
    errors: list[FieldError] = []
    unknown: list[str] = []
    _walk(value, schema, components, path, errors, unknown)
    return errors, unknown


def _walk(
    value: Any, schema: Schema, components: Resolver, path: str, errors: list[FieldError], unknown: list[str]
) -> None:
    schema = _resolve(schema, components)
    if value is None:
        if not schema.get("nullable") and schema.get("type") not in (None, "object", "array"):
            pass  # real servers drop nulls of non-nullable fields when decoding
        return
    if schema.get("x-kubernetes-int-or-string"):
        if not (isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))):
            errors.append(
                FieldError(
                    path,
                    f'Invalid value: "{_type_name(value)}": {path} in body must be of type '
                    f'integer,string: "{_type_name(value)}"',
                    "FieldValueTypeInvalid",
                )
            )
        return
    expected = schema.get("type")
    if expected and not _type_ok(value, expected):
        errors.append(
            FieldError(
                path,
                f'Invalid value: "{_type_name(value)}": {path or "body"} in body must be of type {expected}: '
                f'"{_type_name(value)}"',
                "FieldValueTypeInvalid",
            )
        )
        return
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(f'"{e}"' for e in schema["enum"])
        errors.append(
            FieldError(
                path, f'Unsupported value: "{value}": supported values: {allowed}', "FieldValueNotSupported"
            )
        )
    if isinstance(value, dict):
        props = schema.get("properties")
        for name in schema.get("required") or []:
            if name not in value:
                errors.append(FieldError(_join(path, name), "Required value", "FieldValueRequired"))
        extra = schema.get("additionalProperties")
        for key, child in value.items():
            child_path = _join(path, key)
            if props is not None and key in props:
                _walk(child, props[key], components, child_path, errors, unknown)
            elif isinstance(extra, dict):
                _walk(child, extra, components, child_path, errors, unknown)
            elif (
                props is not None
                and not schema.get("x-kubernetes-preserve-unknown-fields")
                and extra is not True
            ):
                unknown.append(child_path)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            _walk(item, schema["items"], components, f"{path}[{i}]", errors, unknown)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key
