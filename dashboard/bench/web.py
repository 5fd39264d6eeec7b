"""The web layer's benchmark behind ``manage.py bench_web``: the fleet page at 5,000 and 10,000 rollouts —
shell time to first byte, the rows document (cold and warm), browser first render via Playwright +
Chromium — and the delay from a change to the update arriving in open pages (p50/p99 with 100
websockets). Prints figures; asserts none.

Runs a real uvicorn server in a subprocess against the Redis bus under a private key prefix (deleted
afterwards), with anonymous read-only access so no login is needed. Needs ``REDIS_URL``.

Non-goals: the whole pipeline (``dashboard.bench.run``) and the watcher (``dashboard.bench.watch``).
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.conf import settings

from dashboard.bench.processes import BenchError, uvicorn_command

ROOT = Path(__file__).resolve().parents[2]


def _view(i: int) -> dict[str, Any]:
    cluster, namespace = ("prod-eu", "prod-us", "prod-ap")[i % 3], f"team-{i % 40}"
    return {
        "cluster": cluster,
        "namespace": namespace,
        "name": f"svc-{i:05d}",
        "uid": f"uid-{i}",
        "strategy": "Canary",
        "status": ("Healthy", "Progressing", "Paused", "Degraded")[i % 4],
        "message": "",
        "step": f"{i % 5}/5",
        "setWeight": (i % 5) * 20,
        "actualWeight": (i % 5) * 20,
        "currentStepIndex": i % 5,
        "currentPodHash": f"{i:010x}",
        "stableRS": f"{i + 1:010x}",
        "labels": {"app": f"svc-{i}"},
        "releaseStartedAt": "2026-11-29T10:00:00Z",
        "steps": [
            {"setWeight": 20},
            {"pause": {}},
            {"setWeight": 60},
            {"pause": {"duration": "1m"}},
            {"setWeight": 100},
        ],
        "revisions": [],
        "findings": [],
        "images": [],
        "updatedAt": "2026-11-29T10:00:00Z",
    }


def run_web_bench(
    sizes: list[int], *, pages: int, changes: int, port: int, browser: bool, write: Callable[[str], None]
) -> None:
    """Measure each fleet size in ``sizes`` (ascending), then the live delay; ``write`` prints a figure."""
    prefix = f"bench-web-{uuid.uuid4().hex[:8]}:"
    env = {**os.environ, "LIVE_REDIS_PREFIX": prefix, "ANONYMOUS_READ_ONLY": "true"}
    views = [_view(i) for i in range(sizes[-1])]
    server: subprocess.Popen[bytes] | None = None
    try:
        published = 0
        for size in sizes:
            asyncio.run(_publish(prefix, views[published:size]))
            published = size
            if server is not None:  # a fresh process for each size: the first request is cold
                server.terminate()
                server.wait(10)
            server = _serve(port, env)
            url = f"http://127.0.0.1:{port}"
            _wait(url)
            cold = _get(port, "/api/v1/fleet/rows", gzip=True)[1]
            ttfb = [_get(port, "/")[0] for _ in range(10)]
            warm = [_get(port, "/api/v1/fleet/rows", gzip=True) for _ in range(10)]
            write(
                f"{size} rollouts: page TTFB median {statistics.median(ttfb):.0f} ms, "
                f"max {max(ttfb):.0f} ms (target < 300 ms) · rows document cold {cold:.0f} ms, "
                f"warm median {statistics.median(w[1] for w in warm):.0f} ms "
                f"({warm[0][2] / 1024:.0f} KiB gzip)"
            )
            if browser:
                renders = _first_render(url, size, repeat=5)
                write(
                    f"{size} rollouts: browser first render median {statistics.median(renders):.0f} ms, "
                    f"max {max(renders):.0f} ms (target < 1500 ms)"
                )
        assert server is not None
        url = f"http://127.0.0.1:{port}"
        watched = views[: max(1, pages // 10)]
        delays = asyncio.run(_latency(url, prefix, watched, pages, changes))
        delays.sort()
        if not delays:
            raise BenchError("no update reached an open page")
        p50 = delays[len(delays) // 2]
        p99 = delays[min(len(delays) - 1, int(len(delays) * 0.99))]
        write(
            f"change → open page delay with {pages} pages ({len(delays)} deliveries): "
            f"p50 {p50:.0f} ms, p99 {p99:.0f} ms (target p99 < 250 ms)"
        )
    finally:
        if server is not None:
            server.terminate()
            server.wait(10)
        asyncio.run(_cleanup(prefix))


def _serve(port: int, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        uvicorn_command(port),
        cwd=ROOT,
        env=env,
    )


def _get(port: int, path: str, gzip: bool = False) -> tuple[float, float, int]:
    """(ms to the first byte, ms to the last byte, body bytes)."""
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port)
    started = time.perf_counter()
    conn.request("GET", path, headers={"Accept-Encoding": "gzip"} if gzip else {})
    response = conn.getresponse()
    first = response.read(1)
    ttfb = (time.perf_counter() - started) * 1000
    body = first + response.read()
    total = (time.perf_counter() - started) * 1000
    conn.close()
    if response.status != 200:
        raise BenchError(f"{path} answered {response.status}")
    return ttfb, total, len(body)


def _first_render(url: str, size: int, repeat: int) -> list[float]:
    """ms from navigation start until the first fleet rows are in the document (headless Chromium)."""
    from playwright.sync_api import sync_playwright

    script = """
      new MutationObserver(function (_, observer) {
        if (document.querySelector('#fleet-body tr.row')) {
          window.__firstRender = performance.now(); observer.disconnect();
        }
      }).observe(document, { childList: true, subtree: true });
    """
    times = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        for _ in range(repeat):
            context = browser.new_context(viewport={"width": 1440, "height": 1000})
            page = context.new_page()
            page.add_init_script(script)
            page.goto(url + "/")
            page.wait_for_function("() => window.__firstRender !== undefined", timeout=30_000)
            times.append(float(page.evaluate("window.__firstRender")))
            shown = page.eval_on_selector_all("#fleet-body tr.row", "rows => rows.length")
            if not 0 < shown < size:
                print(f"note: {shown} rows in the DOM for {size} rollouts", file=sys.stderr)
            context.close()
        browser.close()
    return times


async def _publish(prefix: str, views: list[dict[str, Any]]) -> None:
    from dashboard.live.bus import RedisBus

    bus = RedisBus(str(settings.REDIS_URL), prefix=prefix)
    for start in range(0, len(views), 500):
        await bus.publish_many([(v, []) for v in views[start : start + 500]])
    await bus.close()


async def _cleanup(prefix: str) -> None:
    import redis.asyncio as aioredis

    client = aioredis.Redis.from_url(str(settings.REDIS_URL))
    keys = [key async for key in client.scan_iter(match=f"{prefix}*")]
    if keys:
        await client.delete(*keys)
    await client.aclose()  # type: ignore[attr-defined]


def _wait(url: str) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url + "/healthz", timeout=1).read()
            return
        except OSError:
            time.sleep(0.1)
    raise BenchError("the server did not start")


async def _latency(
    url: str, prefix: str, views: list[dict[str, Any]], pages: int, changes: int
) -> list[float]:
    import websockets

    from dashboard.live.bus import RedisBus

    # ``views``: the rollouts watched, ten pages each.
    watched = views
    host = url.removeprefix("http://")
    sent: dict[str, float] = {}
    delays: list[float] = []
    sockets = []
    for i in range(pages):
        view = watched[i % len(watched)]
        path = f"/ws/rollouts/{view['cluster']}/{view['namespace']}/{view['name']}/"
        ws = await websockets.connect(
            f"ws://{host}{path}",
            origin=f"http://{host}",  # type: ignore[arg-type]
            max_size=2**24,
        )
        await ws.send("{}")
        sockets.append(ws)
    for ws in sockets:  # the snapshots
        json.loads(await ws.recv())

    async def reader(ws: Any) -> None:
        async for raw in ws:
            message = json.loads(raw)
            if message.get("type") == "update" and message.get("view"):
                marker = message["view"].get("benchMarker")
                if marker in sent:
                    delays.append((time.perf_counter() - sent[marker]) * 1000)

    readers = [asyncio.create_task(reader(ws)) for ws in sockets]
    bus = RedisBus(str(settings.REDIS_URL), prefix=prefix)
    for n in range(changes):
        view = copy.deepcopy(watched[n % len(watched)])
        marker = f"m{n}"
        view["benchMarker"] = marker
        view["step"] = f"{n % 5}/5"
        sent[marker] = time.perf_counter()
        await bus.publish(view, [])
        await asyncio.sleep(0.02)
    await asyncio.sleep(1.0)
    for task in readers:
        task.cancel()
    for ws in sockets:
        await ws.close()
    await bus.close()
    return delays
