"""Run kubesim from tests: in a background thread of this process, or as a `python -m kubesim` subprocess.

`running_kubesim()` runs store, API server and simulation on their own event loop in a daemon thread and
yields a handle with the URL, token, kubeconfig path, the store and the faults; `handle.call(fn)` runs a
function (or coroutine function) on that loop, which is the only safe way to touch the store from a test.
`kubesim_process()` starts the real command line on a fixed free port and can stop and restart it — for
tests of what clients do when the API server goes away.

Non-goals: pytest fixtures (tests wrap these in their own), more than one cluster per handle.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import importlib
import inspect
import os
import secrets
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml

from kubesim.faults import Faults
from kubesim.kubeconfig import write_kubeconfig
from kubesim.server import RunningServer, start_server
from kubesim.store import Store

T = TypeVar("T")
PROJECT_ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def build_simulation(
    store: Store, scenarios: Sequence[str], *, speed: float, seed: int, faults: Faults
) -> Any:
    """The controller's Simulation for `scenarios`, or None when no scenario is asked for."""
    if not scenarios:
        return None
    # Imported here: the scenario engine is only needed when scenarios are asked for.
    simulation: Any = importlib.import_module("kubesim.simulation")

    loaded = simulation.load_scenarios(list(scenarios))
    return simulation.Simulation(store, loaded, speed=speed, seed=seed, faults=faults)


@dataclass
class KubesimHandle:
    url: str
    token: str
    kubeconfig: Path
    store: Store
    faults: Faults
    loop: asyncio.AbstractEventLoop
    server: RunningServer
    simulation: Any = None
    ca_pem: bytes | None = None
    _tasks: list[asyncio.Task[Any]] = field(default_factory=list)

    def call(self, fn: Callable[..., T], *args: Any, timeout: float = 30.0, **kwargs: Any) -> T:
        """Run `fn(*args, **kwargs)` on the simulator's loop; returns its result, awaited if a coroutine."""

        async def run() -> Any:
            result = fn(*args, **kwargs)
            return await result if inspect.isawaitable(result) else result

        return asyncio.run_coroutine_threadsafe(run(), self.loop).result(timeout)


@contextlib.contextmanager
def running_kubesim(
    scenarios: Sequence[str] = (),
    *,
    speed: float = 1.0,
    seed: int = 0,
    port: int = 0,
    bookmark_interval: float = 5.0,
    history_limit: int = 50_000,
) -> Iterator[KubesimHandle]:
    """Store + API server + simulation in a background thread; stops everything on exit."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="kubesim", daemon=True)
    thread.start()
    tmp = tempfile.TemporaryDirectory(prefix="kubesim-")
    token = secrets.token_urlsafe(24)

    async def setup() -> KubesimHandle:
        store = Store(seed=seed, history_limit=history_limit)
        faults = Faults(store)
        sim = build_simulation(store, scenarios, speed=speed, seed=seed, faults=faults)
        server = await start_server(
            store, port=port, token=token, faults=faults, bookmark_interval=bookmark_interval
        )
        path = write_kubeconfig(Path(tmp.name) / "kubeconfig", server.url, token, ca_pem=server.ca_pem)
        handle = KubesimHandle(server.url, token, path, store, faults, loop, server, sim, server.ca_pem)
        if sim is not None:
            handle._tasks.append(asyncio.create_task(sim.run(), name="kubesim-simulation"))
        return handle

    async def teardown(handle: KubesimHandle) -> BaseException | None:
        error: BaseException | None = None
        for task in handle._tasks:
            if task.done() and not task.cancelled():
                error = task.exception()
            task.cancel()
        await asyncio.gather(*handle._tasks, return_exceptions=True)
        await handle.server.close()
        return error

    handle: KubesimHandle | None = None
    try:
        handle = asyncio.run_coroutine_threadsafe(setup(), loop).result(60)
        yield handle
    finally:
        error = None
        if handle is not None:
            error = asyncio.run_coroutine_threadsafe(teardown(handle), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()
        tmp.cleanup()
        if error is not None:
            raise RuntimeError(f"the kubesim simulation crashed: {error!r}") from error


class KubesimProcess:
    """`python -m kubesim serve` as a subprocess on a fixed port, restartable with the same token."""

    def __init__(
        self,
        scenarios: Sequence[str] = (),
        *,
        speed: float = 1.0,
        seed: int = 0,
        port: int = 0,
        extra_args: Sequence[str] = (),
        directory: Path | None = None,
        token: str | None = None,
    ) -> None:
        self.port = port or free_port()
        self.url = f"https://127.0.0.1:{self.port}"
        self.token = token or secrets.token_urlsafe(24)
        self._dir = directory or Path(tempfile.mkdtemp(prefix="kubesim-proc-"))
        self.kubeconfig = self._dir / "kubeconfig"
        self.log_path = self._dir / "kubesim.log"
        self.args = [
            sys.executable,
            "-m",
            "kubesim",
            "serve",
            "--port",
            str(self.port),
            "--kubeconfig",
            str(self.kubeconfig),
            "--speed",
            str(speed),
            "--seed",
            str(seed),
            f"--token={self.token}",  # "=" because a urlsafe token may begin with "-"
            *([a for s in scenarios for a in ("--scenario", s)] or ["--empty"]),
            *extra_args,
        ]
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 30.0) -> None:
        self.kubeconfig.unlink(missing_ok=True)
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                self.args,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=PROJECT_ROOT,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"kubesim exited with {self.process.returncode}: {self.log_tail()}")
            if self.healthy():
                return
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"kubesim did not become healthy within {timeout}s: {self.log_tail()}")

    def ssl_context(self) -> ssl.SSLContext:
        """Trusts the certificate of the running server (taken from its kubeconfig)."""
        config = yaml.safe_load(self.kubeconfig.read_text())
        ca = base64.b64decode(config["clusters"][0]["cluster"]["certificate-authority-data"]).decode()
        return ssl.create_default_context(cadata=ca)

    def healthy(self) -> bool:
        if not self.kubeconfig.exists():
            return False
        request = urllib.request.Request(
            f"{self.url}/kubesim/healthz", headers={"Authorization": f"Bearer {self.token}"}
        )
        try:
            with urllib.request.urlopen(request, timeout=1, context=self.ssl_context()) as response:
                return bool(response.status == 200)
        except (urllib.error.URLError, OSError, KeyError, TypeError, yaml.YAMLError):
            return False

    def stop(self, timeout: float = 10.0) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout)
        self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


@contextlib.contextmanager
def kubesim_process(
    scenarios: Sequence[str] = (),
    *,
    speed: float = 1.0,
    seed: int = 0,
    port: int = 0,
    extra_args: Sequence[str] = (),
    token: str | None = None,
) -> Iterator[KubesimProcess]:
    """Start `python -m kubesim serve`, wait until /kubesim/healthz answers, and stop it on exit."""
    with tempfile.TemporaryDirectory(prefix="kubesim-proc-") as tmp:
        proc = KubesimProcess(
            scenarios,
            speed=speed,
            seed=seed,
            port=port,
            extra_args=extra_args,
            directory=Path(tmp),
            token=token,
        )
        proc.start()
        try:
            yield proc
        finally:
            proc.stop()
