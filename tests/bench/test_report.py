"""The bench summary says what it measured, and why a figure is missing when one is."""

from __future__ import annotations

from dashboard.bench.report import first_render_text


def test_a_measured_first_render_prints_its_milliseconds() -> None:
    assert first_render_text({"browser": {"first_render_ms": 412.5}}) == "412.5 ms"


def test_a_run_without_the_browser_says_so_rather_than_none() -> None:
    assert first_render_text({}) == "not measured (run with --no-browser)"


def test_a_failed_browser_run_prints_its_error() -> None:
    text = first_render_text({"browser": {"error": "RuntimeError: /usr/bin/chromium is not installed"}})
    assert text == "not measured: RuntimeError: /usr/bin/chromium is not installed"
