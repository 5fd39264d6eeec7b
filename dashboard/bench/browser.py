"""The fleet page's speed: server time to first byte, and a real browser's time to first render.

``ttfb`` times the shell (``/``) and the rows document (``/api/v1/fleet/rows``, the page's real payload)
with the session cookie, from request sent to first byte. ``first_render`` loads the page in headless
Chromium (Debian's ``/usr/bin/chromium`` through Playwright; nothing is downloaded) and reads, from the
page's own clock, when the table was filled (``body[data-fleet=loaded]``) and the next frame after it.

Non-goals: anything past the first screen (scrolling, filters), other pages.
"""

from __future__ import annotations

import http.client
import statistics
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# Installed before the page's scripts: notes when fleet.js marks the table loaded, then the next frame.
OBSERVER = """
new MutationObserver(function (changes, observer) {
  if (document.body && document.body.getAttribute("data-fleet") === "loaded" && !window.__benchLoaded) {
    window.__benchLoaded = performance.now();
    requestAnimationFrame(function () { window.__benchRendered = performance.now(); });
    observer.disconnect();
  }
}).observe(document, {attributes: true, subtree: true, attributeFilter: ["data-fleet"]});
"""


def ttfb(base_url: str, path: str, session_cookie: str, repeat: int = 10) -> dict[str, Any]:
    """Milliseconds from sending the request to the first byte of the answer (median and max)."""
    parts = urlsplit(base_url)
    times: list[float] = []
    sizes: list[int] = []
    for _ in range(repeat):
        connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=30)
        started = time.perf_counter()
        connection.request(
            "GET", path, headers={"Cookie": f"sessionid={session_cookie}", "Accept-Encoding": "gzip"}
        )
        response = connection.getresponse()
        response.read(1)
        times.append((time.perf_counter() - started) * 1000)
        status = response.status
        sizes.append(1 + len(response.read()))
        connection.close()
        if status != 200:
            raise RuntimeError(f"GET {path} answered {status}")
    return {
        "median_ms": round(statistics.median(times), 1),
        "max_ms": round(max(times), 1),
        "bytes": sizes[-1],
        "samples": len(times),
    }


def first_render(
    base_url: str, session_cookie: str, repeat: int = 3, timeout_s: float = 30.0
) -> dict[str, Any]:
    """Page navigation start → table filled / first frame after it, in ms (median over ``repeat``)."""
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).is_file():
        raise RuntimeError(f"{CHROMIUM} is not installed (Debian package chromium)")
    loaded: list[float] = []
    rendered: list[float] = []
    first_byte: list[float] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 900})
            context.add_cookies([{"name": "sessionid", "value": session_cookie, "url": base_url + "/"}])
            context.add_init_script(OBSERVER)
            for _ in range(repeat):
                page = context.new_page()
                errors: list[str] = []
                page.on("pageerror", lambda error: errors.append(str(error)))  # noqa: B023 - used at once
                page.goto(base_url + "/", wait_until="commit")
                try:
                    page.wait_for_function("window.__benchRendered !== undefined", timeout=timeout_s * 1000)
                except Exception as error:
                    state = page.evaluate("() => document.body && document.body.getAttribute('data-fleet')")
                    raise RuntimeError(
                        f"the fleet page at {page.url} did not render (data-fleet={state!r}; "
                        f"script errors: {errors[:3] or 'none'}): {error}"
                    ) from None
                figures = page.evaluate(
                    "() => [window.__benchLoaded, window.__benchRendered,"
                    " performance.getEntriesByType('navigation')[0].responseStart]"
                )
                loaded.append(float(figures[0]))
                rendered.append(float(figures[1]))
                first_byte.append(float(figures[2]))
                page.close()
        finally:
            browser.close()
    return {
        "first_render_ms": round(statistics.median(rendered), 1),
        "table_loaded_ms": round(statistics.median(loaded), 1),
        "first_byte_ms": round(statistics.median(first_byte), 1),
        "max_first_render_ms": round(max(rendered), 1),
        "samples": len(rendered),
    }
