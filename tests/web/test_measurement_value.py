"""A measurement of NaN or ±Inf (Prometheus' 0/0) has no value on the chart and never reaches the
page's JSON as a bare NaN (which JSON.parse rejects, so the whole rollout page failed to draw)."""

from __future__ import annotations

import json

from dashboard.web.rollout import measurement_value


def test_nan_and_infinite_measurements_have_no_value() -> None:
    assert measurement_value("[NaN]") is None
    assert measurement_value("Infinity") is None
    assert measurement_value(float("nan")) is None
    assert measurement_value("[0.25]") == 0.25


def test_a_document_with_a_nan_measurement_is_valid_json() -> None:
    point = {"value": measurement_value("[NaN]"), "raw": "[NaN]"}
    assert json.loads(json.dumps(point, allow_nan=False)) == point
