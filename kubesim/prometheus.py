"""A real Prometheus process for kubesim: scratch directory, free 127.0.0.1 port, 1 s scrapes of kubesim.

``start_prometheus(["127.0.0.1:18081"])`` writes a config scraping those targets (``honor_labels: true``
so the simulated pods' labels are kept), starts the binary with ``--web.listen-address=127.0.0.1:<free port>``
(never the binary's 0.0.0.0:9090 default), waits for ``/-/ready`` and returns a handle; ``stop()`` sends
SIGTERM to that one process and kills it if it does not exit. ``wait_for_data`` waits for the first scrape
(≈6 s after start with Debian's 2.42: its scrape manager applies targets on a fixed 5 s tick).

The binary is ``$KUBESIM_PROMETHEUS`` or ``prometheus`` on PATH; ``PrometheusUnavailable`` says how to install
it. Used by ``python -m kubesim serve --prometheus``, the demo and the tests.

``attach_prometheus(simulation)`` (async, on the simulation's loop) and ``attached_prometheus(handle)`` (sync,
for a ``kubesim.testing.running_kubesim`` handle) do the whole wiring: the traffic endpoint, the Prometheus
scraping it, and the simulation's analyses answered from it.

Non-goals: remote storage, alerting rules, TLS, more than one scrape job.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubesim.traffic import TrafficServer, start_traffic_server

INSTALL_HINT = "apt-get install -y --no-install-recommends prometheus"


class PrometheusUnavailable(RuntimeError):
    """No prometheus binary, or it would not start; the message says what to do."""


def find_prometheus() -> str | None:
    """``$KUBESIM_PROMETHEUS`` if set (it must exist), else ``prometheus`` on PATH."""
    configured = os.environ.get("KUBESIM_PROMETHEUS")
    if configured:
        return configured if Path(configured).is_file() and os.access(configured, os.X_OK) else None
    return shutil.which("prometheus")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _seconds(value: float) -> str:
    return f"{round(value * 1000)}ms"


def config_text(targets: Sequence[str], scrape_interval: float = 1.0) -> str:
    """The prometheus.yml: one job scraping kubesim's traffic endpoint(s), labels honoured."""
    interval = _seconds(scrape_interval)
    return (
        f"global: {{scrape_interval: {interval}, scrape_timeout: {interval}, "
        f"evaluation_interval: {interval}}}\n"
        "scrape_configs:\n"
        "  - job_name: kubesim\n"
        "    honor_labels: true\n"
        f"    static_configs: [{{targets: {json.dumps(list(targets))}}}]\n"
    )


@dataclass
class PrometheusProcess:
    url: str
    port: int
    directory: Path
    process: subprocess.Popen[bytes]
    owns_directory: bool = False

    @property
    def log_path(self) -> Path:
        return self.directory / "prometheus.log"

    def log_tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def running(self) -> bool:
        return self.process.poll() is None

    def query(self, promql: str, timeout: float = 5.0) -> Any:
        """An instant query's JSON answer (for tests and readiness checks)."""
        body = urllib.parse.urlencode({"query": promql}).encode()
        with urllib.request.urlopen(f"{self.url}/api/v1/query", body, timeout=timeout) as response:
            return json.loads(response.read())

    def wait_ready(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.running():
                raise PrometheusUnavailable(
                    f"prometheus exited with status {self.process.returncode}:\n{self.log_tail()}"
                )
            with (
                contextlib.suppress(OSError, urllib.error.URLError),
                urllib.request.urlopen(f"{self.url}/-/ready", timeout=1) as response,
            ):
                if response.status == 200:
                    return
            time.sleep(0.05)
        self.stop()
        raise PrometheusUnavailable(f"prometheus was not ready within {timeout:g} s:\n{self.log_tail()}")

    def wait_for_data(self, promql: str = "up", timeout: float = 30.0, settle: float = 1.5) -> float:
        """Wait until ``promql`` has a result (plus ``settle`` s, so rate() has two samples)."""
        started = time.monotonic()
        deadline = started + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError, urllib.error.URLError, ValueError):
                if self.query(promql)["data"]["result"]:
                    time.sleep(settle)
                    return time.monotonic() - started
            if not self.running():
                break
            time.sleep(0.2)
        raise PrometheusUnavailable(f"no data for {promql!r} within {timeout:g} s:\n{self.log_tail()}")

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM this process (and only it), then SIGKILL if it lingers."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout)
        if self.owns_directory:
            shutil.rmtree(self.directory, ignore_errors=True)


def start_prometheus(
    targets: Sequence[str],
    *,
    scrape_interval: float = 1.0,
    directory: Path | None = None,
    binary: str | None = None,
    ready_timeout: float = 30.0,
) -> PrometheusProcess:
    """Start Prometheus on a free 127.0.0.1 port scraping ``targets``; raises PrometheusUnavailable."""
    binary = binary or find_prometheus()
    if binary is None:
        raise PrometheusUnavailable(
            "prometheus binary not found (looked at $KUBESIM_PROMETHEUS and PATH); run: " + INSTALL_HINT
        )
    owns = directory is None
    workdir = Path(tempfile.mkdtemp(prefix="kubesim-prometheus-")) if directory is None else directory
    workdir.mkdir(parents=True, exist_ok=True)
    config = workdir / "prometheus.yml"
    config.write_text(config_text(targets, scrape_interval))
    last_error: PrometheusUnavailable | None = None
    for _ in range(3):  # another process may grab the free port between our probe and prometheus' bind
        port = _free_port()
        with open(workdir / "prometheus.log", "ab") as log:
            process = subprocess.Popen(
                [
                    binary,
                    f"--config.file={config}",
                    f"--storage.tsdb.path={workdir / 'data'}",
                    f"--web.listen-address=127.0.0.1:{port}",
                    "--storage.tsdb.retention.time=2h",
                    "--log.level=warn",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        handle = PrometheusProcess(f"http://127.0.0.1:{port}", port, workdir, process, owns)
        try:
            handle.wait_ready(ready_timeout)
            return handle
        except PrometheusUnavailable as error:
            handle.owns_directory = False
            handle.stop()
            last_error = error
            if "address already in use" not in str(error):
                break
    if owns:
        shutil.rmtree(workdir, ignore_errors=True)
    assert last_error is not None
    raise last_error


@contextlib.contextmanager
def running_prometheus(targets: Sequence[str], **options: Any) -> Iterator[PrometheusProcess]:
    handle = start_prometheus(targets, **options)
    try:
        yield handle
    finally:
        handle.stop()


@dataclass
class AttachedPrometheus:
    """A Prometheus wired to a simulation: its URL, the traffic endpoint it scrapes, the process."""

    url: str
    traffic_url: str
    process: PrometheusProcess
    traffic: TrafficServer


@contextlib.asynccontextmanager
async def attach_prometheus(
    simulation: Any, *, scrape_interval: float = 1.0, directory: Path | None = None
) -> AsyncIterator[AttachedPrometheus]:
    """Serve ``simulation``'s traffic, start Prometheus scraping it, and route its analyses there.

    Call on the simulation's event loop (``python -m kubesim serve --prometheus`` and the demo do). Raises
    PrometheusUnavailable (with the install command) when the binary is missing or will not start.
    """
    import asyncio

    traffic = await start_traffic_server(simulation.traffic)
    loop = asyncio.get_running_loop()
    try:
        process = await loop.run_in_executor(
            None,
            lambda: start_prometheus([traffic.target], scrape_interval=scrape_interval, directory=directory),
        )
    except BaseException:
        await traffic.close()
        raise
    simulation.use_prometheus(process.url)
    try:
        yield AttachedPrometheus(process.url, traffic.url, process, traffic)
    finally:
        await loop.run_in_executor(None, process.stop)
        await traffic.close()


@contextlib.contextmanager
def attached_prometheus(handle: Any, *, scrape_interval: float = 1.0) -> Iterator[AttachedPrometheus]:
    """The same wiring for a ``running_kubesim`` handle, from a test thread; stops Prometheus on exit."""
    simulation = handle.simulation
    traffic: TrafficServer = handle.call(start_traffic_server, simulation.traffic)
    try:
        process = start_prometheus([traffic.target], scrape_interval=scrape_interval)
    except BaseException:
        handle.call(traffic.close)
        raise
    try:
        handle.call(simulation.use_prometheus, process.url)
        yield AttachedPrometheus(process.url, traffic.url, process, traffic)
    finally:
        process.stop()
        handle.call(traffic.close)
