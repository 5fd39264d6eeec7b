"""A small run of ``manage.py bench`` end to end: the harness itself works and writes its reports.

It runs with the browser, as CI should: Debian's Chromium is part of the test machine, and a run that
printed "first render None … not measured" with Chromium installed is the bug this guards against.

Figures are printed, never asserted (a shared CI machine times nothing reliably); the structure is.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.timeout(360)
def test_a_small_run_writes_the_json_and_html_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_json, out_html = tmp_path / "bench.json", tmp_path / "bench.html"
    env = {**os.environ, "DATABASE_URL": os.environ["DATABASE_URL"], "REDIS_URL": os.environ["REDIS_URL"]}
    done = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "bench",
            "--rollouts",
            "200",
            "--namespaces",
            "10",
            "--churn",
            "10",
            "--clients",
            "10",
            "--seconds",
            "10",
            "--history-releases",
            "1000",  # the history page's phase, cheaply (the full run seeds 10,000)
            "--json",
            str(out_json),
            "--html",
            str(out_html),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=330,
    )
    with capsys.disabled():  # the figures, for whoever reads the CI log (even when the test passes)
        print("\n" + done.stdout)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(out_json.read_text())
    for key in (
        "command",
        "machine",
        "config",
        "ingest",
        "end_to_end",
        "loss",
        "fleet_page",
        "memory",
        "limits",
        "capacity",
        "ratios",
        "targets",
        "scale_out",
        "pages",
        "restart",
        "watcher_restart",
    ):
        assert key in report, key
    assert {"p50", "p95", "p99"} <= report["end_to_end"]["ms"].keys()
    # Chromium is part of the test machine (like PostgreSQL and Redis): first render is measured.
    browser = report["fleet_page"].get("browser") or {}
    assert isinstance(browser.get("first_render_ms"), float), browser
    assert f"first render {browser['first_render_ms']} ms" in done.stdout
    assert {"xadd", "fanout"} <= report["limits"].keys()
    assert report["loss"]["clients"] == 10
    assert report["capacity"]["updates"] == 200 and report["capacity"]["clients"] == 10
    assert {"name", "target", "value", "met"} <= report["targets"][0].keys()
    # Issue 23's phases: past the fleet's first screen, a long history, a web restart under the pages.
    pages = report["pages"]
    assert isinstance(pages["fleet_interaction"]["keystrokes"]["median_ms"], float), pages
    assert isinstance(pages["rollout"]["first_byte"]["median_ms"], float)
    assert isinstance(pages["rollout"]["browser"]["first_render_ms"], float)
    assert pages["history"]["releases"] == 1000
    assert isinstance(pages["history"]["history"]["median_ms"], float)
    assert report["restart"]["clients"] == 10 and report["restart"]["clients_resumed"] == 10
    assert "web restart under 10 open pages" in done.stdout
    # The watcher restarted with new images written while it was away; the pages still equal the
    # simulator at the end (the loss check above), so what changed meanwhile reached them.
    watcher = report["watcher_restart"]
    assert isinstance(watcher["seconds_until_current"], float), watcher
    assert watcher["writes_while_away"] > 0 and watcher["rows_behind"] > 0, watcher
    assert "watcher restart (" in done.stdout
    assert report["end_to_end"]["write_request_ms"]["count"] > 0
    assert report["end_to_end"]["from_commit_ms"]["count"] > 0, "kubesim stamps each write's commit"
    names = {t["name"] for t in report["targets"]}
    assert "fleet filter keystroke → repaint + next frame (ms, median)" in names
    assert "web restart: all 10 open pages resumed (s)" in names
    assert "watcher restart: the fleet current on the bus (s)" in names
    page = out_html.read_text()
    assert "<html" in page and "Plotly" in page
    assert "<script src=" not in page  # plotly.js is inlined: the report opens offline


def test_bad_arguments_get_a_clear_error() -> None:
    done = subprocess.run(
        [sys.executable, "manage.py", "bench", "--rollouts", "0"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert "--rollouts must be at least 1" in done.stderr
    assert "Traceback" not in done.stderr
