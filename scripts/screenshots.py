"""Take the README screenshots from real demo data: ``python scripts/screenshots.py [--out DIR]``.

Starts ``manage.py demo`` (kubesim scenarios → the real watcher → the web app, in one process) on a free
port with a throw-away SQLite database, signs in with the demo password it prints, waits for the
scenarios to reach the interesting moments (the re-render race's hash change), and saves ``fleet.png``,
``rollout.png`` (rerender-race; ``rollout-dark.png`` is the same in the dark theme) and ``history.png``
(its release timeline) with headless Chromium, cropped to at most 1600 px tall (by the browser itself,
so nothing but /usr/bin/chromium is needed).
Non-goal: pixel-stable images (the demo runs in real time, so ages and countdowns differ per run).
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_HEIGHT = 1600
VIEWPORT = {"width": 1440, "height": 1000}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_demo(port: int, database: Path, speed: float) -> tuple[subprocess.Popen[str], str]:
    """The demo server and its one-time password (read from what it prints)."""
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")},
        "DATABASE_URL": f"sqlite:///{database}",
        "RBAC_DEFAULT_ROLE": "viewer",  # the demo user reads everything
        "DJANGO_SETTINGS_MODULE": "rollouts_ui.settings",
    }
    process = subprocess.Popen(
        [sys.executable, "manage.py", "demo", "--port", str(port), "--speed", str(speed)],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    assert process.stdout is not None
    deadline = time.monotonic() + 120
    seen: list[str] = []
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        seen.append(line)
        if not line and process.poll() is not None:
            tail = "".join(seen[-15:])
            raise SystemExit(f"the demo stopped before it was ready (exit {process.returncode}):\n{tail}")
        match = re.search(r"with password\s+(\S+)", line)
        if match:
            # Keep draining its log, or a full pipe would stall the server.
            threading.Thread(target=process.stdout.read, daemon=True).start()
            return process, match.group(1)
    process.terminate()
    raise SystemExit("the demo did not print its password within 120 s")


def shoot(page: object, path: Path) -> None:
    """The page from its top, at most MAX_HEIGHT px tall."""
    height = min(MAX_HEIGHT, int(page.evaluate("() => document.documentElement.scrollHeight")))  # type: ignore[attr-defined]
    page.screenshot(  # type: ignore[attr-defined]
        path=str(path), full_page=True, clip={"x": 0, "y": 0, "width": VIEWPORT["width"], "height": height}
    )


def take(url: str, password: str, out: Path, timeout: float) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        context = browser.new_context(viewport=VIEWPORT, device_scale_factor=1, color_scheme="light")
        page = context.new_page()
        page.set_default_timeout(timeout * 1000)
        page.goto(url + "accounts/login/")
        page.fill("input[name=username]", "demo")
        page.fill("input[name=password]", password)
        page.click("button[type=submit]")
        page.wait_for_selector("body[data-fleet=loaded]")

        # The re-render race: wait for the hash change to be seen, then the rollout page.
        page.goto(url + "rollouts/demo/web/frontend/")
        page.wait_for_selector("[data-marker=step-reset]")
        # ...and for the pause after it, when the page suggests its fix (Promote) beside the actions.
        page.wait_for_selector("#action-suggest:not([hidden])")
        page.wait_for_timeout(1500)  # let the analysis charts settle
        shoot(page, out / "rollout.png")
        # The same page in the dark theme (the choice the theme toggle stores), then back to light.
        page.evaluate("localStorage.setItem('theme', 'dark')")
        page.reload()
        page.wait_for_selector("[data-marker=step-reset]")
        page.wait_for_timeout(1500)
        shoot(page, out / "rollout-dark.png")
        page.evaluate("localStorage.setItem('theme', 'light')")

        page.goto(url + "?healthy=1")  # the healthy group expanded, so every demo rollout shows
        page.wait_for_selector("#fleet-body tr.row")
        page.wait_for_timeout(500)
        shoot(page, out / "fleet.png")

        page.goto(url + "rollouts/demo/web/frontend/history/")
        page.wait_for_selector("#releases a")
        page.click("#releases tbody tr:first-child a")
        page.wait_for_selector("#release-chart .main-svg")
        page.wait_for_timeout(800)
        shoot(page, out / "history.png")
        browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    parser.add_argument("--speed", type=float, default=8.0, help="demo speed (simulated s per real s)")
    parser.add_argument("--timeout", type=float, default=180.0, help="seconds to wait for each moment")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    port = free_port()
    with tempfile.TemporaryDirectory() as scratch:
        process, password = start_demo(port, Path(scratch) / "demo.sqlite3", args.speed)
        try:
            take(f"http://127.0.0.1:{port}/", password, args.out, args.timeout)
        finally:
            process.terminate()
            process.wait(15)
    for name in ("fleet.png", "rollout.png", "rollout-dark.png", "history.png"):
        print(f"{args.out / name}: {(args.out / name).stat().st_size // 1024} KiB")


if __name__ == "__main__":
    main()
