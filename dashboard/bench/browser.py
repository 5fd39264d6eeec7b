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


# ---- past the first screen: a filter keystroke, scrolling, another page's first render --------------

# Installed before the fleet page's scripts. A keystroke in the filter box starts at its keydown's
# timestamp; fleet.js's input handler (on the box itself, so before this one on the document) queues the
# re-render for the next frame, and the frame callback queued here runs after it: the table has been
# repainted then, and the frame after that is on screen.
KEYSTROKE_OBSERVER = """
window.__benchKeys = [];
document.addEventListener("keydown", function (event) {
  if (event.target && event.target.id === "fleet-search") window.__benchKeyAt = event.timeStamp;
}, true);
document.addEventListener("input", function (event) {
  if (!event.target || event.target.id !== "fleet-search" || window.__benchKeyAt === undefined) return;
  var started = window.__benchKeyAt;
  window.__benchKeyAt = undefined;
  requestAnimationFrame(function () {
    var repainted = performance.now();
    requestAnimationFrame(function () {
      window.__benchKeys.push({ repainted: repainted - started, frame: performance.now() - started,
        shown: (document.getElementById("fleet-shown") || {}).textContent || "" });
    });
  });
});
"""
# One viewport further each frame, as a fast scroll wheel or a dragged scrollbar does; the frames' spacing
# says whether drawing the rows that scroll into view kept up (60 Hz: 16.7 ms).
SCROLL_SCRIPT = """
async (steps) => {
  const frame = () => new Promise((resolve) => requestAnimationFrame(resolve));
  window.scrollTo(0, 0);
  await frame(); await frame();
  const gaps = [];
  let last = await frame();
  for (let i = 0; i < steps; i++) {
    window.scrollBy(0, Math.round(window.innerHeight * 0.9));
    const now = await frame();
    gaps.push(now - last);
    last = now;
  }
  return { gaps: gaps, rows: document.querySelectorAll("#fleet-body tr.row").length,
           scrolled: window.scrollY, height: document.body.scrollHeight };
}
"""
# Installed before a page's scripts: the page's own "drawn" event, then the next frame.
EVENT_OBSERVER = """
document.addEventListener(%s, function () {
  if (window.__benchLoaded !== undefined) return;
  window.__benchLoaded = performance.now();
  requestAnimationFrame(function () { window.__benchRendered = performance.now(); });
});
"""


def _launch(p: Any) -> Any:
    if not Path(CHROMIUM).is_file():
        raise RuntimeError(f"{CHROMIUM} is not installed (Debian package chromium)")
    return p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)


def _ms(values: list[float]) -> dict[str, Any]:
    ordered = sorted(values)
    return {
        "median_ms": round(statistics.median(ordered), 1) if ordered else None,
        "max_ms": round(ordered[-1], 1) if ordered else None,
        "samples": len(ordered),
    }


def filter_and_scroll(
    base_url: str,
    session_cookie: str,
    text: str = "svc-012",
    pause_ms: int = 250,
    scroll_steps: int = 40,
    timeout_s: float = 60.0,
) -> dict[str, Any]:
    """Type ``text`` into the fleet filter box one key at a time, then delete it again, timing each
    keystroke until the table was repainted and the next frame (median over all keystrokes); then, with
    every row in the list (``?healthy=1``), scroll one viewport a frame and time the frames."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = _launch(p)
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 900})
            context.add_cookies([{"name": "sessionid", "value": session_cookie, "url": base_url + "/"}])
            context.add_init_script(KEYSTROKE_OBSERVER)
            page = context.new_page()
            page.goto(base_url + "/", wait_until="commit")
            page.wait_for_function(
                "document.body && document.body.getAttribute('data-fleet') === 'loaded'",
                timeout=timeout_s * 1000,
            )
            page.wait_for_timeout(500)  # the first render's frames, and the websocket's snapshot settle
            box = page.locator("#fleet-search")
            box.click()
            for key in [*text, *["Backspace"] * len(text)]:
                page.keyboard.press(key)
                page.wait_for_timeout(pause_ms)
            page.wait_for_function(f"window.__benchKeys.length >= {2 * len(text)}", timeout=timeout_s * 1000)
            keys = page.evaluate("window.__benchKeys")
            page.goto(base_url + "/?healthy=1", wait_until="commit")
            page.wait_for_function(
                "document.body && document.body.getAttribute('data-fleet') === 'loaded'",
                timeout=timeout_s * 1000,
            )
            page.wait_for_timeout(500)
            scrolled = page.evaluate(SCROLL_SCRIPT, scroll_steps)
        finally:
            browser.close()
    gaps = [float(g) for g in scrolled["gaps"]]
    return {
        "text": text,
        "keystrokes": {
            **_ms([float(k["frame"]) for k in keys]),
            "repainted": _ms([float(k["repainted"]) for k in keys]),
            "each_ms": [round(float(k["frame"]), 1) for k in keys],
        },
        "scroll": {
            "frames": len(gaps),
            "frame_ms": _ms(gaps),
            "frames_over_50_ms": sum(1 for g in gaps if g > 50),
            "rows_drawn": scrolled["rows"],
            "scrolled_px": scrolled["scrolled"],
        },
    }


def page_render(
    base_url: str, path: str, session_cookie: str, event: str, repeat: int = 3, timeout_s: float = 30.0
) -> dict[str, Any]:
    """Navigation start → the page's ``event`` (dispatched on ``document`` once it drew its document) and
    the next frame, in ms (median over ``repeat`` loads)."""
    import json as _json

    from playwright.sync_api import sync_playwright

    loaded: list[float] = []
    rendered: list[float] = []
    with sync_playwright() as p:
        browser = _launch(p)
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 900})
            context.add_cookies([{"name": "sessionid", "value": session_cookie, "url": base_url + "/"}])
            context.add_init_script(EVENT_OBSERVER % _json.dumps(event))
            for _ in range(repeat):
                page = context.new_page()
                errors: list[str] = []
                page.on("pageerror", lambda error: errors.append(str(error)))  # noqa: B023 - used at once
                page.goto(base_url + path, wait_until="commit")
                try:
                    page.wait_for_function("window.__benchRendered !== undefined", timeout=timeout_s * 1000)
                except Exception as error:
                    raise RuntimeError(
                        f"{path} did not render (script errors: {errors[:3] or 'none'}): {error}"
                    ) from None
                figures = page.evaluate("() => [window.__benchLoaded, window.__benchRendered]")
                loaded.append(float(figures[0]))
                rendered.append(float(figures[1]))
                page.close()
        finally:
            browser.close()
    return {
        "first_render_ms": round(statistics.median(rendered), 1),
        "drawn_ms": round(statistics.median(loaded), 1),
        "max_first_render_ms": round(max(rendered), 1),
        "samples": len(rendered),
    }
