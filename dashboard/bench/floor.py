"""The floor of a Python watcher's cost per change, twice: decoding the objects with orjson and nothing
else, and receiving them as watch events with the watcher's own reader.

After a run, every kind the watcher watches is listed once from each simulator (the objects a watcher
decodes, in the fleet's own mix), and each object is encoded on its own as the API server sends it in a
watch line. Then:
- ``decode_floor``: ``orjson.loads`` of those lines is timed (CPU time, best of three passes);
- ``receive_floor``: a server in a process of its own streams them over TLS, one event per chunk as an API
  server sends them, round-robin over as many watch connections as the watcher holds at 100 namespaces,
  at the target's rate; this process reads them with ``KubeApi.stream`` on the watcher's event loop, and
  its CPU time per event is the figure: TLS, HTTP chunks, lines, the event loop's wakeups and the decoding,
  what any Python watcher pays before its own work begins.
The report puts the watcher's CPU per change (its cores during the churn over the changes per second)
beside both.

Non-goals: timing the watcher (the run measures it in place), asserting anything.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import orjson
from aiohttp import web

from dashboard.bench.churn import Cluster

SAMPLE_LIMIT = 20_000  # objects decoded at most (a sample of a large fleet is as good as all of it)
# The receiving floor's stream: about the watches a watcher holds at 100 namespaces (113), at the rate the
# target asks for, long enough for a steady figure; bounded in time on both sides.
RECEIVE_CONNECTIONS = 100
RECEIVE_RATE = 500.0
RECEIVE_SECONDS = 10.0
RECEIVE_LINES = 2_000  # of the sample, sent round and round


async def watch_lines(clusters: list[Cluster]) -> list[bytes]:
    """Every watched kind's objects from each simulator, each as the watch line an API server sends."""
    from dashboard.kube.watch import WATCHED_KINDS

    lines: list[bytes] = []
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=120)) as session:
        for cluster in clusters:
            for kind in WATCHED_KINDS:
                if len(lines) >= SAMPLE_LIMIT:
                    break
                async with session.get(
                    cluster.url + kind.path(None),
                    params={**kind.selectors(), "limit": "2000"},
                    headers=cluster.headers(),
                    ssl=cluster.ssl_context(),
                ) as response:
                    if response.status != 200:  # a kind the simulator does not serve
                        continue
                    page = orjson.loads(await response.read())
                lines += [
                    orjson.dumps({"type": "MODIFIED", "object": item}) for item in page.get("items") or ()
                ]
    return lines[:SAMPLE_LIMIT]


def decode_floor(lines: list[bytes]) -> dict[str, Any]:
    if not lines:
        return {}
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        for line in lines:
            orjson.loads(line)
        best = min(best, time.process_time() - started)
    return {
        "objects": len(lines),
        "mean_bytes": round(sum(map(len, lines)) / len(lines)),
        "orjson_decode_ms_per_change": round(best * 1000 / len(lines), 4),
    }


def receive_floor(
    lines: list[bytes],
    *,
    connections: int = RECEIVE_CONNECTIONS,
    rate: float = RECEIVE_RATE,
    seconds: float = RECEIVE_SECONDS,
) -> dict[str, Any]:
    """CPU time per watch event received and decoded by ``KubeApi.stream`` on the watcher's event loop."""
    from dashboard.management.commands.watch import loop_factory

    for name, value in (("connections", connections), ("rate", rate), ("seconds", seconds)):
        if not value > 0:
            raise ValueError(f"the receiving floor's {name} must be greater than 0, not {value}")
    if not lines:
        return {}
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        sample = lines[:: max(1, len(lines) // RECEIVE_LINES)]  # through all of them: the fleet's mix
        return runner.run(_receive(sample, connections, rate, seconds))


async def _receive(lines: list[bytes], connections: int, rate: float, seconds: float) -> dict[str, Any]:
    from dashboard.kube.connection import KubeApi, Timeouts
    from kubesim.kubeconfig import self_signed_certificate, write_kubeconfig

    with tempfile.TemporaryDirectory(prefix="bench-floor-") as tmp:
        cert, key = self_signed_certificate()
        token = secrets.token_hex(16)
        files = {name: Path(tmp) / name for name in ("lines", "tls.crt", "tls.key", "kubeconfig")}
        files["lines"].write_bytes(b"\n".join(lines))
        files["tls.crt"].write_bytes(cert)
        files["tls.key"].write_bytes(key)
        files["tls.key"].chmod(0o600)
        args = [*(str(files[name]) for name in ("lines", "tls.crt", "tls.key")), token]
        server = subprocess.Popen(
            [sys.executable, "-m", "dashboard.bench.floor", *args, *map(str, (connections, rate, seconds))],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert server.stdout is not None
            async with asyncio.timeout(30):
                said = await asyncio.to_thread(server.stdout.readline)
            if not said.startswith("listening "):
                raise RuntimeError(f"the floor's server did not start (exit status {server.poll()})")
            port = int(said.split()[-1])
            write_kubeconfig(files["kubeconfig"], f"https://127.0.0.1:{port}", token, ca_pem=cert)
            api = await KubeApi.connect(str(files["kubeconfig"]))
            received = [0]
            first: list[float] = []

            def count(_: dict[str, Any]) -> None:
                received[0] += 1
                if not first:
                    first.append(time.thread_time())

            async def watch() -> None:
                await api.stream("/watch", {}, Timeouts(connect=10, read=seconds + 30), count)

            async with asyncio.timeout(seconds + 60):
                await asyncio.gather(*(watch() for _ in range(connections)))
            used = time.thread_time() - first[0] if first else 0.0
        finally:
            server.kill()
            server.wait(10)
    events = received[0] - 1  # the CPU is counted from the first event's arrival
    return {
        "connections": connections,
        "events": events,
        "events_per_second": round(events / seconds, 1),
        "ms_per_change": round(used * 1000 / events, 4) if events > 0 else None,
    }


# ---- the server side: ``python -m dashboard.bench.floor LINES CERT KEY TOKEN CONNECTIONS RATE SECONDS`` ----


async def _serve(
    lines: list[bytes], cert: str, key: str, token: str, connections: int, rate: float, seconds: float
) -> None:
    """Serve ``connections`` watches; once all are open, send ``lines`` round-robin over them at ``rate``
    a second for ``seconds``, each line one chunk, then end every stream."""
    import socket
    import ssl

    streams: list[asyncio.Queue[bytes | None]] = []
    all_open = asyncio.Event()

    async def watch(request: web.Request) -> web.StreamResponse:
        if request.headers.get("Authorization") != f"Bearer {token}":
            return web.Response(status=401)
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        response.enable_chunked_encoding()
        await response.prepare(request)
        queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        streams.append(queue)
        if len(streams) == connections:
            all_open.set()
        while (line := await queue.get()) is not None:
            await response.write(line)
        return response

    app = web.Application()
    app.router.add_get("/watch", watch)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    runner = web.AppRunner(app)
    await runner.setup()
    listening = socket.create_server(("127.0.0.1", 0))
    await web.SockSite(runner, listening, ssl_context=context).start()
    print("listening", listening.getsockname()[1], flush=True)
    async with asyncio.timeout(30):
        await all_open.wait()
    started = time.monotonic()
    for sent, line in enumerate(itertools.cycle(lines), start=1):
        if time.monotonic() - started >= seconds:
            break
        streams[sent % connections].put_nowait(line + b"\n")
        ahead = started + sent / rate - time.monotonic()
        if ahead > 0:
            await asyncio.sleep(ahead)
    for queue in streams:
        queue.put_nowait(None)
    await asyncio.sleep(1.0)
    await runner.cleanup()


def main() -> None:
    parser = argparse.ArgumentParser(description="the receiving floor's watch server (see receive_floor)")
    for name in ("lines", "cert", "key", "token"):
        parser.add_argument(name)
    parser.add_argument("connections", type=int)
    parser.add_argument("rate", type=float)
    parser.add_argument("seconds", type=float)
    args = parser.parse_args()
    lines = Path(args.lines).read_bytes().split(b"\n")
    asyncio.run(_serve(lines, args.cert, args.key, args.token, args.connections, args.rate, args.seconds))


if __name__ == "__main__":
    main()
