"""Spawning, watching and reaping the benchmark's processes; reading their memory from /proc.

Every process gets its own session (a Ctrl-C in the terminal reaches only the harness, which then stops
them in reverse order) and a log file in the run's directory. A process can run under ``py-spy record``
for profiling; memory and signals then go to the Python process py-spy started, not to py-spy.

Non-goals: restarting crashed processes (a crash ends the run with the log's tail in the error).
"""

from __future__ import annotations

import compileall
import contextlib
import functools
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
YIELD_NICENESS = 10


class BenchError(Exception):
    """The run could not go on; the message says which process or step failed and why."""


@functools.cache
def compile_sources() -> None:
    """Write the bytecode of the project's packages, once per harness, as the image does at build time
    (Dockerfile): a process started for a measured start-up (a watcher's cold start or restart, a web
    server's restart) then loads it instead of compiling every module first, which under
    ``PYTHONDONTWRITEBYTECODE`` (set in the image and on these machines) it would do on every start."""
    for package in ("rollouts_ui", "dashboard", "kubesim"):
        if not compileall.compile_dir(ROOT / package, quiet=2):
            raise BenchError(f"compiling {package} failed: python -m compileall {package} says where")


@dataclass
class Process:
    name: str
    role: str  # kubesim | watcher | web | clients
    popen: subprocess.Popen[bytes]
    log_path: Path
    profiled: bool = False
    expected_exit: bool = False

    def pid(self) -> int:
        """The Python process itself (py-spy's child when profiled)."""
        if self.profiled:
            children = _children(self.popen.pid)
            if children:
                return children[0]
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def log_tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


@dataclass
class Processes:
    """The run's processes; ``close()`` stops every one still running (also after a failure)."""

    directory: Path
    profile_dir: Path | None = None
    # Roles started at a lower scheduling priority (``nice``): the load generators, so that on a machine
    # they share with the pipeline the pipeline's processes get a core first, as they would where the API
    # server and the browsers are other machines (``manage.py bench --yield-harness``).
    yielding: frozenset[str] = frozenset()
    running: list[Process] = field(default_factory=list)

    def start(
        self, name: str, role: str, args: list[str], env: dict[str, str], *, profile: bool = False
    ) -> Process:
        log_path = self.directory / f"{name}.log"
        profiled = profile and self.profile_dir is not None
        if profiled:
            assert self.profile_dir is not None
            spy = str(Path(sys.executable).with_name("py-spy"))
            # A process started again (a restart) is profiled into a file of its own.
            starts = sum(1 for p in self.running if p.name == name and p.profiled)
            out = self.profile_dir / f"{name}{f'.{starts + 1}' if starts else ''}.collapsed.txt"
            args = [spy, "record", "--format", "raw", "--rate", "200", "--output", str(out), "--", *args]
        compile_sources()
        if role in self.yielding:
            args = ["nice", "-n", str(YIELD_NICENESS), *args]  # nice execs the program: the same pid
        with open(log_path, "ab") as log:
            popen = subprocess.Popen(
                args, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, env=env, start_new_session=True
            )
        process = Process(name, role, popen, log_path, profiled)
        self.running.append(process)
        return process

    def check(self) -> None:
        """Raise if a process died on its own."""
        for p in self.running:
            if not p.alive() and not p.expected_exit:
                raise BenchError(f"{p.name} exited with status {p.popen.returncode}:\n{p.log_tail()}")

    def stop(self, process: Process, *, timeout: float = 20.0) -> float:
        """SIGTERM, then up to ``timeout`` for it to exit (SIGKILL after). Returns its peak RSS in MB as
        last read while it stopped, every 10 ms (what a stop does, a watcher's handoff, can be a process's
        peak); 0.0 if it was not running."""
        process.expected_exit = True
        peak = 0.0
        if process.alive():
            pid = process.pid()
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + timeout
            while process.popen.poll() is None and time.monotonic() < deadline:
                peak = max(peak, rss_mb(pid)[1])
                time.sleep(0.01)
            if process.popen.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.popen.pid, signal.SIGKILL)
                process.popen.wait(10)
        return peak

    def kill(self, process: Process) -> None:
        """SIGKILL, as a crashed machine would: no lease release, no goodbye."""
        process.expected_exit = True
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid(), signal.SIGKILL)
        process.popen.wait(10)
        if process.profiled:  # py-spy outlives its target briefly; it exits by itself
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.popen.wait(10)

    def close(self) -> None:
        for process in reversed(self.running):
            self.stop(process)

    def usage(self) -> dict[str, dict[str, float]]:
        """RSS now and the peak (VmHWM) in MB, and CPU seconds used so far, of each live process."""
        found: dict[str, dict[str, float]] = {}
        for p in self.running:
            if p.alive():
                pid = p.pid()
                rss, peak = rss_mb(pid)
                if rss:
                    found[p.name] = {"rss_mb": rss, "peak_mb": peak, "cpu_s": cpu_seconds(pid)}
                # What it started (the watcher's history recorder process): its work counts too.
                children = [(rss_mb(child), cpu_seconds(child)) for child in _children(pid)]
                if children:
                    found[f"{p.name}-children"] = {
                        "rss_mb": round(sum(m[0] for m, _ in children), 1),
                        "peak_mb": round(sum(m[1] for m, _ in children), 1),
                        "cpu_s": round(sum(cpu for _, cpu in children), 2),
                    }
        return found


def rss_mb(pid: int) -> tuple[float, float]:
    values: dict[str, float] = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(("VmRSS:", "VmHWM:")):
                values[line.split(":")[0]] = int(line.split()[1]) / 1024
    except (OSError, ValueError):
        return 0.0, 0.0
    return round(values.get("VmRSS", 0.0), 1), round(values.get("VmHWM", 0.0), 1)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of ``pid`` so far (its threads included), from /proc/PID/stat."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return round((int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"), 2)
    except (OSError, ValueError, IndexError):
        return 0.0


def _children(pid: int) -> list[int]:
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            text = (task / "children").read_text().split()
            found.extend(int(c) for c in text)
    return found


def wait_http(url: str, process: Process, timeout: float) -> None:
    """Wait until ``url`` answers 200 (raising with the log's tail if the process dies or time runs out)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not process.alive():
            raise BenchError(f"{process.name} exited with {process.popen.returncode}:\n{process.log_tail()}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.2)
    raise BenchError(f"{process.name} did not answer {url} within {timeout:.0f}s:\n{process.log_tail()}")


def uvicorn_command(port: int, *extra: str) -> list[str]:
    """The benchmark's web server: the project's ASGI app under uvicorn on 127.0.0.1:``port``, quiet."""
    return [
        sys.executable, "-m", "uvicorn", "rollouts_ui.asgi:application", "--host", "127.0.0.1",
        "--port", str(port), "--lifespan", "off", "--log-level", "warning", *extra,
    ]  # fmt: skip
