"""One benchmark run: start the layout's processes, drive churn, measure, check, stop everything.

Layouts (``--layout``):
- ``single``: one kubesim, one watcher, one ASGI server;
- ``two-web``: two ASGI servers sharing one Redis, the clients split across them;
- ``clusters``: ``--clusters N`` kubesims (the fleet split between them), one watcher each, one fleet view;
- ``two-clusters``: ``clusters`` with N = 2 (its older name);
- ``failover``: a leader and a standby watcher of one cluster; the leader is SIGKILLed halfway through
  the churn and the standby must take over (its lease expires in at most 13 s) without loss.

Phases: database and user → simulators (seeded, settled) → watchers (fleet published) → web → clients
(connected) → churn for ``seconds`` → quiet (simulators idle, stream idle) → page speed → client
tables vs the simulators' truth → stop → raw limits → figures. Every wait is bounded; ``finally``
stops every process, deletes the run's Redis keys and drops its database.

Non-goals: tuning anything under test; asserting targets (``report`` compares, never fails a run).
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import math
import os
import re
import secrets
import shutil
import sys
import tempfile
import time
import urllib.parse
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import yaml

from dashboard.bench import analysis, browser, limits, watchlag
from dashboard.bench.churn import Cluster, churn, resource_version
from dashboard.bench.clients import login
from dashboard.bench.cold import RESYNCED, WATCHER_CURRENT, caught_up, rows_to_change
from dashboard.bench.floor import decode_floor, receive_floor, watch_lines
from dashboard.bench.monitor import Sampler, StreamMonitor
from dashboard.bench.processes import ROOT, BenchError, Process, Processes, uvicorn_command, wait_http
from dashboard.bench.report import figures
from dashboard.bench.truth import bus_rows, expected_rows

LAYOUTS = ("single", "two-web", "clusters", "two-clusters", "failover")
MAX_CLUSTERS = 26  # sim-a … sim-z
CLIENTS_PER_PROCESS = 100
CAPACITY_UPDATES = 2000  # views republished at once to measure the web side's delivery capacity
CAPACITY_TIMEOUT = 60.0
RESTART_UPDATES = 200  # views published while the web server is down (the pages must resume past them)
RESTART_TIMEOUT = 90.0
WATCHER_AWAY_SECONDS = 2.0  # of churn while the restarted watcher is away
USERNAME = "bench"


@dataclass
class BenchConfig:
    rollouts: int = 10_000
    namespaces: int = 100
    churn: float = 60.0  # new images per second
    clients: int = 200
    seconds: float = 60.0
    layout: str = "single"
    clusters: int = 0  # simulated clusters for the ``clusters`` layout (0: the layout's own count)
    redis_url: str = "redis://127.0.0.1:6379/0"
    database_url: str = ""
    browser: bool = True
    limits: bool = True
    history_releases: int = 10_000  # releases seeded on one rollout for the history page (0: skip)
    restart: bool = True  # restart the web server under the open pages, then a watcher
    profile_dir: Path | None = None
    keep_dir: Path | None = None
    yield_harness: bool = False  # the simulators and the emulated browsers run at a lower priority
    setup_timeout: float = 900.0
    quiet_timeout: float = 120.0
    seed: int = 1

    def validate(self) -> None:
        problems = []
        if self.rollouts < 1:
            problems.append(f"--rollouts must be at least 1, not {self.rollouts}")
        if not 1 <= self.namespaces <= min(self.rollouts, 100):
            problems.append(f"--namespaces must be between 1 and min(--rollouts, 100), not {self.namespaces}")
        if self.churn <= 0:
            problems.append(f"--churn must be greater than 0, not {self.churn}")
        if self.clients < 1:
            problems.append(f"--clients must be at least 1, not {self.clients}")
        if self.seconds <= 0:
            problems.append(f"--seconds must be greater than 0, not {self.seconds}")
        if self.history_releases < 0:
            problems.append(f"--history-releases must be 0 or more, not {self.history_releases}")
        if self.layout not in LAYOUTS:
            problems.append(f"--layout must be one of {', '.join(LAYOUTS)}, not {self.layout!r}")
        if self.clusters and self.layout not in ("clusters", "two-clusters"):
            problems.append(f"--clusters is for --layout clusters, not {self.layout!r}")
        if self.layout == "two-clusters" and self.clusters not in (0, 2):
            problems.append("--layout two-clusters has 2 clusters (use --layout clusters --clusters N)")
        if not 1 <= self.cluster_count() <= MAX_CLUSTERS:
            problems.append(f"--clusters must be between 1 and {MAX_CLUSTERS}, not {self.clusters}")
        elif self.rollouts < self.cluster_count():
            problems.append(f"{self.cluster_count()} clusters need at least {self.cluster_count()} rollouts")
        if problems:
            raise BenchError("; ".join(problems))

    def cluster_count(self) -> int:
        """How many simulated clusters (one watcher each) the layout runs."""
        if self.layout == "two-clusters":
            return 2
        if self.layout == "clusters":
            return self.clusters or 2
        return 1


@dataclass
class RunState:
    """What the phases hand each other (and the report reads)."""

    prefix: str
    directory: Path
    database_url: str = ""
    clusters: list[Cluster] = field(default_factory=list)
    servers: list[str] = field(default_factory=list)
    watchers: list[Process] = field(default_factory=list)
    web: list[Process] = field(default_factory=list)
    client_procs: list[tuple[Process, Path, Path, Path]] = field(default_factory=list)
    progress_files: list[Path] = field(default_factory=list)
    session_cookie: str = ""
    timings: dict[str, float] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)
    metrics_ports: list[int] = field(default_factory=list)  # the watchers' /metrics
    # Each watcher's peak RSS (MB) when the fleet was first on the bus, and when the churn began.
    watcher_peaks: dict[str, dict[str, float]] = field(default_factory=dict)


def run_bench(config: BenchConfig, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Run the benchmark and return the figures (see ``report.figures`` for the document's shape)."""
    config.validate()
    directory = Path(tempfile.mkdtemp(prefix="rollouts-bench-"))
    state = RunState(prefix=f"bench-{uuid.uuid4().hex[:8]}:", directory=directory)
    yielding = frozenset({"kubesim", "clients"}) if config.yield_harness else frozenset()
    processes = Processes(directory, config.profile_dir, yielding)
    if config.profile_dir is not None:
        config.profile_dir.mkdir(parents=True, exist_ok=True)
    raw: dict[str, Any] = {}
    try:
        redis_before_mb = _redis_used_mb(config)  # the server may hold others' data: the run's is the rest
        _database(config, state, log)
        env = _env(config, state)
        _start_clusters(config, state, processes, env, log)
        _start_watchers(config, state, processes, env, log)
        _start_web(config, state, processes, env, log)
        password = (state.directory / "password").read_text()
        state.session_cookie = asyncio.run(_session_cookie(state.servers[0], password))
        _start_clients(config, state, processes, log)
        raw = asyncio.run(_measure(config, state, processes, log))
        raw["redis_used_before_mb"] = redis_before_mb
        raw["page"] = _page_speed(config, state, log)
        raw["pages"] = _other_pages(config, state, log)
        raw["capacity"] = asyncio.run(_delivery_capacity(config, state, processes, log))
        if config.restart:
            raw["restart"] = asyncio.run(_web_restart(config, state, processes, log))
            if config.layout != "failover":  # (its leader was killed: the failover figures say the rest)
                raw["watcher_restart"] = asyncio.run(_watcher_restart(config, state, processes, log))
        raw["clients"] = _collect_clients(state, processes, log)
        log("checking every client's table against the simulators' objects …")
        raw["expected"] = asyncio.run(expected_rows(state.clusters))
        raw["bus_rows"] = _bus_rows(config, state)
        raw["redis_keys_mb"] = _redis_keys_mb(config, state)
        lines = asyncio.run(watch_lines(state.clusters))
        raw["floor"] = decode_floor(lines)
        watcher_logs = {p.name: p.log_path for p in state.watchers}
        processes.close()
        raw["watcher_changes"] = {name: _watcher_changes(path) for name, path in watcher_logs.items()}
        if config.limits:
            log("measuring this machine's raw limits …")
            raw["limits"] = asyncio.run(_limits(config, state, raw))
        log("receiving watch events alone (the floor of a Python watcher's cost per change) …")
        try:
            raw["floor"]["receive"] = receive_floor(lines)
        except Exception as error:  # a floor not measured is said so; the run's own figures stand
            raw["floor"]["receive"] = {"error": f"{type(error).__name__}: {error}"}
        raw["profiles"] = _profiles(config)
        return figures(config, state, raw)
    except KeyboardInterrupt:
        raise BenchError("interrupted; every process was stopped") from None
    finally:
        processes.close()
        _cleanup(config, state)
        if config.keep_dir is not None:
            config.keep_dir.mkdir(parents=True, exist_ok=True)
            for path in directory.glob("*.log"):
                shutil.copy(path, config.keep_dir / path.name)
        shutil.rmtree(directory, ignore_errors=True)


# ---- setup ---------------------------------------------------------------------------------------------


def _database(config: BenchConfig, state: RunState, log: Callable[[str], None]) -> None:
    """A fresh database for the run (PostgreSQL when configured, else SQLite), migrated, with a user."""
    if config.database_url.startswith(("postgres://", "postgresql://")):
        name = urllib.parse.urlsplit(config.database_url).path.lstrip("/") or "rollouts_ui"
        state.database_url = create_database(config.database_url, f"{name}_run_{uuid.uuid4().hex[:8]}")
    else:
        state.database_url = f"sqlite:///{state.directory / 'bench.sqlite3'}"
    env = _env(config, state)
    started = time.monotonic()
    manage(["migrate", "--no-input", "-v", "0"], env)
    password = secrets.token_urlsafe(16)
    manage(
        ["createsuperuser", "--no-input", "--username", USERNAME, "--email", "bench@example.invalid"],
        {**env, "DJANGO_SUPERUSER_PASSWORD": password},
    )
    (state.directory / "password").write_text(password)
    log(f"database ready in {time.monotonic() - started:.1f}s")


def manage(args: list[str], env: dict[str, str], tree: Path = ROOT) -> None:
    """``manage.py ARGS`` in the checkout ``tree`` (this one by default); its output in the error."""
    import subprocess

    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=tree, env=env, capture_output=True, text=True, timeout=300
    )
    if done.returncode != 0:
        raise BenchError(f"manage.py {args[0]} in {tree} failed:\n{(done.stderr or done.stdout)[-2000:]}")


def create_database(url: str, name: str) -> str:
    """A new PostgreSQL database ``name`` on the server of ``url``; its URL."""
    import psycopg

    parts = urllib.parse.urlsplit(url)
    with psycopg.connect(
        parts._replace(path="/postgres").geturl(), autocommit=True, connect_timeout=5
    ) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return parts._replace(path=f"/{name}").geturl()


def drop_database(url: str) -> None:
    import psycopg

    parts = urllib.parse.urlsplit(url)
    with psycopg.connect(
        parts._replace(path="/postgres").geturl(), autocommit=True, connect_timeout=5
    ) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{parts.path.lstrip("/")}" WITH (FORCE)')


def forget_prefix(redis_url: str, prefix: str) -> None:
    """Delete every key under ``prefix`` (a run's bus)."""
    import redis

    client = redis.Redis.from_url(redis_url, socket_timeout=10)
    try:
        keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
        for start in range(0, len(keys), 1000):
            client.delete(*keys[start : start + 1000])
    finally:
        client.close()


def _env(config: BenchConfig, state: RunState) -> dict[str, str]:
    return {
        **os.environ,
        "REDIS_URL": config.redis_url,
        "DATABASE_URL": state.database_url,
        "LIVE_REDIS_PREFIX": state.prefix,
        "ANONYMOUS_READ_ONLY": "false",
        "LOG_LEVEL": "INFO",
        "PYTHONUNBUFFERED": "1",
        "DJANGO_SETTINGS_MODULE": "rollouts_ui.settings",
    }


def _start_clusters(
    config: BenchConfig,
    state: RunState,
    processes: Processes,
    env: dict[str, str],
    log: Callable[[str], None],
) -> None:
    names = [f"sim-{chr(ord('a') + i)}" for i in range(config.cluster_count())]
    shares = [
        config.rollouts // len(names) + (1 if i < config.rollouts % len(names) else 0)
        for i in range(len(names))
    ]
    started = time.monotonic()
    pending = []
    for name, share in zip(names, shares, strict=True):
        namespaces = min(config.namespaces, share)
        args, kubeconfig = simulator_command(state.directory, name, share, namespaces, config.seed)
        process = processes.start(name, "kubesim", args, env)
        pending.append((name, share, namespaces, kubeconfig, process))
    for name, share, namespaces, kubeconfig, process in pending:
        deadline = time.monotonic() + 60
        while not kubeconfig.exists():
            if not process.alive() or time.monotonic() > deadline:
                raise BenchError(f"{name} did not start:\n{process.log_tail()}")
            time.sleep(0.1)
        time.sleep(0.2)  # the kubeconfig is written in one go, but give the writer its moment
        state.clusters.append(Cluster.from_kubeconfig(name, kubeconfig, share, namespaces))
    log(f"seeding {config.rollouts} rollouts in {len(names)} simulated cluster(s) …")
    asyncio.run(settle(state.clusters, processes, config.setup_timeout, quiet=3.0))
    state.timings["seed_seconds"] = round(time.monotonic() - started, 1)
    log(f"simulators seeded and settled in {state.timings['seed_seconds']}s")


def simulator_command(
    directory: Path, name: str, rollouts: int, namespaces: int, seed: int
) -> tuple[list[str], Path]:
    """The command serving a fleet of ``rollouts`` canaries in ``namespaces`` namespaces with its own churn
    off (the harness writes the churn), and the kubeconfig it writes once it listens."""
    from kubesim.testing import free_port

    scenario, kubeconfig = directory / f"{name}.yaml", directory / f"{name}.kubeconfig"
    fleet = {"rollouts": rollouts, "namespaces": namespaces, "replicas": 1, "churn_per_second": 0}
    description = f"{rollouts} canaries in {namespaces} namespaces; the harness churns"
    scenario.write_text(yaml.safe_dump({"name": "bench-fleet", "description": description, "fleet": fleet}))
    token = secrets.token_urlsafe(24)
    args = [
        sys.executable, "-m", "kubesim", "serve", "--scenario", str(scenario), "--port", str(free_port()),
        "--kubeconfig", str(kubeconfig),
        f"--token={token}",  # "=" because a urlsafe token may begin with "-"
        "--seed", str(seed), "--bookmark-interval", "30", "--history-limit", "500000",
    ]  # fmt: skip
    return args, kubeconfig


async def settle(clusters: list[Cluster], processes: Processes, timeout: float, quiet: float) -> bool:
    """Wait until no simulator has written anything for ``quiet`` seconds (False on timeout)."""
    deadline = time.monotonic() + timeout
    last: dict[str, int] = {}
    since = time.monotonic()
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as session:
        while time.monotonic() < deadline:
            processes.check()
            versions = {}
            for cluster in clusters:
                with contextlib.suppress(aiohttp.ClientError, TimeoutError):
                    versions[cluster.name] = await resource_version(session, cluster)
            if versions != last or len(versions) < len(clusters):
                last, since = versions, time.monotonic()
            elif time.monotonic() - since >= quiet:
                return True
            await asyncio.sleep(0.5)
    return False


def _start_watchers(
    config: BenchConfig,
    state: RunState,
    processes: Processes,
    env: dict[str, str],
    log: Callable[[str], None],
) -> None:
    import redis

    started = time.monotonic()
    for cluster in state.clusters:
        state.watchers.append(_watcher(f"watcher-{cluster.name}", cluster, state, processes, env, config))
    client = redis.Redis.from_url(config.redis_url)
    deadline = time.monotonic() + config.setup_timeout
    while client.hlen(f"{state.prefix}fleet") < config.rollouts:
        processes.check()
        if time.monotonic() > deadline:
            raise BenchError(
                f"the watchers published {client.hlen(f'{state.prefix}fleet')} of {config.rollouts} "
                f"rollouts within {config.setup_timeout:.0f}s"
            )
        time.sleep(0.2)
    state.timings["initial_publish_seconds"] = round(time.monotonic() - started, 1)
    _note_watcher_peaks(state, processes, "fleet_published")
    log(
        f"watcher(s) listed and published {config.rollouts} rollouts "
        f"in {state.timings['initial_publish_seconds']}s"
    )
    if config.layout == "failover":  # the standby starts once the leader holds the lease
        cluster = state.clusters[0]
        state.watchers.append(_watcher(f"standby-{cluster.name}", cluster, state, processes, env, config))
        time.sleep(2.0)


def _note_watcher_peaks(state: RunState, processes: Processes, moment: str) -> None:
    usage = processes.usage()
    for watcher in state.watchers:
        if watcher.name in usage:
            state.watcher_peaks.setdefault(watcher.name, {})[moment] = usage[watcher.name]["peak_mb"]


def _watcher(
    name: str,
    cluster: Cluster,
    state: RunState,
    processes: Processes,
    env: dict[str, str],
    config: BenchConfig,
) -> Process:
    from kubesim.testing import free_port

    kubeconfig = state.directory / f"{cluster.name}.kubeconfig"
    port = free_port()
    state.metrics_ports.append(port)
    return processes.start(
        name,
        "watcher",
        [
            sys.executable,
            "manage.py",
            "watch",
            "--kubeconfig",
            str(kubeconfig),
            "--cluster",
            cluster.name,
            "--metrics-port",
            str(port),
            "--metrics-address",
            "127.0.0.1",
        ],
        env,
        profile=True,
    )


def _start_web(
    config: BenchConfig,
    state: RunState,
    processes: Processes,
    env: dict[str, str],
    log: Callable[[str], None],
) -> None:
    from kubesim.testing import free_port

    count = 2 if config.layout == "two-web" else 1
    for i in range(count):
        port = free_port()
        process = processes.start(
            f"web-{i + 1}",
            "web",
            uvicorn_command(port, "--ws-max-size", str(2**24)),
            env,
            profile=True,
        )
        url = f"http://127.0.0.1:{port}"
        wait_http(url + "/healthz", process, 60)
        state.servers.append(url)
        state.web.append(process)
    log(f"{count} ASGI server(s) up: {', '.join(state.servers)}")


async def _session_cookie(server: str, password: str) -> str:
    """Log in once, as a browser would, and return the session cookie (page speed is measured with it)."""
    jar = aiohttp.CookieJar(unsafe=True)
    async with aiohttp.ClientSession(cookie_jar=jar) as session:
        await login(session, server, USERNAME, password)
    for cookie in jar:
        if cookie.key == "sessionid":
            return cookie.value
    raise BenchError(f"logging in at {server} set no session cookie")


def _start_clients(
    config: BenchConfig, state: RunState, processes: Processes, log: Callable[[str], None]
) -> None:
    password = (state.directory / "password").read_text()
    count = math.ceil(config.clients / CLIENTS_PER_PROCESS)
    offset = 0
    for n in range(count):
        share = config.clients // count + (1 if n < config.clients % count else 0)
        paths = [
            state.directory / f"clients-{n}.{suffix}"
            for suffix in ("json", "out.json", "ready", "stop", "progress")
        ]
        paths[0].write_text(
            json.dumps(
                {
                    "servers": state.servers,
                    "count": share,
                    "offset": offset,
                    "username": USERNAME,
                    "password": password,
                    "out": str(paths[1]),
                    "ready": str(paths[2]),
                    "stop": str(paths[3]),
                    "progress": str(paths[4]),
                }
            )
        )
        process = processes.start(
            f"clients-{n}",
            "clients",
            [sys.executable, "-m", "dashboard.bench.clients", str(paths[0])],
            {**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        state.client_procs.append((process, paths[1], paths[2], paths[3]))
        state.progress_files.append(paths[4])
        offset += share
    deadline = time.monotonic() + 300
    for process, _, ready, _ in state.client_procs:
        while not ready.exists():
            processes.check()
            if time.monotonic() > deadline:
                raise BenchError(f"{process.name} did not connect its clients in time:\n{process.log_tail()}")
            time.sleep(0.2)
    log(f"{config.clients} websocket clients connected ({count} process(es))")


# ---- measuring -----------------------------------------------------------------------------------------


async def _measure(
    config: BenchConfig, state: RunState, processes: Processes, log: Callable[[str], None]
) -> dict[str, Any]:
    monitor = StreamMonitor(config.redis_url, state.prefix)
    sampler = Sampler(processes.usage, config.redis_url, state.clusters)
    tasks = [asyncio.create_task(monitor.run()), asyncio.create_task(sampler.run())]
    failover: dict[str, Any] = {}
    killer = None
    try:
        await asyncio.sleep(2.0)  # baseline samples before the churn
        lag_before = await _watch_lag(state)
        _note_watcher_peaks(state, processes, "churn_began")
        log(f"churning {config.churn:g} new images/s for {config.seconds:g}s …")
        if config.layout == "failover":
            killer = asyncio.create_task(_kill_leader(config.seconds / 2, state, processes, failover, log))
        churned = await churn(state.clusters, config.churn, config.seconds, seed=config.seed)
        if killer is not None:
            await killer
        log(f"churn done ({len(churned.writes)} writes, {len(churned.failures)} failed); waiting for quiet …")
        # Quiet = no write for longer than the fleet's 10 s pause step: every canary has finished, so the
        # end state no longer moves (nor do findings that depend on the clock).
        quiet = await settle(state.clusters, processes, config.quiet_timeout, quiet=12.0)
        await _stream_idle(monitor, idle=2.0, timeout=60.0)
        await asyncio.sleep(2.0)  # the clients' last updates
        quiet_at = time.time()
        lag_after = await _watch_lag(state)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    if failover:
        after = [e.at for e in monitor.entries if e.at > failover["killed_at"]]
        failover["first_publish_after_kill_s"] = (
            round(min(after) - failover["killed_at"], 2) if after else None
        )
        failover["largest_publish_gap_s"] = round(
            analysis.largest_gap([e.at for e in monitor.entries], churned.started, churned.ended), 2
        )
    return {
        "churn": churned,
        "entries": monitor.entries,
        "payloads": monitor.payloads,
        "samples": sampler.samples,
        "quiet": quiet,
        "quiet_at": quiet_at,
        "failover": failover,
        "watch_lag": (
            watchlag.summary(lag_before, lag_after)
            if lag_before is not None and lag_after is not None
            else {"error": "a watcher's /metrics could not be read"}
        ),
    }


async def _watch_lag(state: RunState) -> dict[float, float] | None:
    """The watchers' receipt → publish histogram now (None when one could not be read, e.g. a watcher
    killed by the failover layout)."""
    try:
        return await asyncio.to_thread(watchlag.scrape, state.metrics_ports)
    except OSError:
        return None


async def _kill_leader(
    after: float, state: RunState, processes: Processes, failover: dict[str, Any], log: Callable[[str], None]
) -> None:
    await asyncio.sleep(after)
    leader = state.watchers[0]
    failover["killed"] = leader.name
    failover["killed_at"] = time.time()
    processes.kill(leader)
    log(f"killed the leading watcher {leader.name} (SIGKILL); the standby must take over")


async def _stream_idle(monitor: StreamMonitor, idle: float, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        last = monitor.entries[-1].at if monitor.entries else 0.0
        if time.time() - last >= idle:
            return
        await asyncio.sleep(0.2)


def _page_speed(config: BenchConfig, state: RunState, log: Callable[[str], None]) -> dict[str, Any]:
    server = state.servers[0]
    page: dict[str, Any] = {}
    for name, path in (("shell", "/"), ("rows", "/api/v1/fleet/rows")):
        try:
            page[name] = browser.ttfb(server, path, state.session_cookie)
        except (OSError, RuntimeError, http.client.HTTPException) as error:  # a slow server is a figure too
            page[name] = {"error": f"GET {path}: {type(error).__name__}: {error}"[:500]}
    log(
        f"fleet page first byte: shell {page['shell'].get('median_ms', page['shell'].get('error'))} ms, "
        f"rows {page['rows'].get('median_ms', page['rows'].get('error'))} ms"
    )
    if config.browser:
        try:
            page["browser"] = browser.first_render(server, state.session_cookie)
            log(f"fleet page first render in Chromium: {page['browser']['first_render_ms']} ms")
        except Exception as error:  # no browser here: the rest of the figures still stand
            page["browser"] = {"error": f"{type(error).__name__}: {error}"[:500]}
            log(f"browser measurement failed: {page['browser']['error']}")
    return page


def _other_pages(config: BenchConfig, state: RunState, log: Callable[[str], None]) -> dict[str, Any]:
    """Past the fleet page's first screen: a filter keystroke and scrolling in Chromium, a rollout page
    (first byte and first render), and the history page of a rollout with ``history_releases`` releases
    (seeded into the run's database with the insights generator; PostgreSQL only)."""
    import redis

    server = state.servers[0]
    keys = sorted(k.decode() for k in redis.Redis.from_url(config.redis_url).hkeys(f"{state.prefix}fleet"))
    pages: dict[str, Any] = {}
    if not keys:
        return pages

    def timed(name: str, path: str, figure: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        try:
            return figure()
        except Exception as error:  # a slow or failing page is a figure too; the rest still stand
            return {"error": f"{name} {path}: {type(error).__name__}: {error}"[:500]}

    rollout = keys[len(keys) // 2]
    path = "/rollouts/" + "/".join(urllib.parse.quote(p, safe="") for p in rollout.split("/")) + "/"
    pages["rollout"] = {"key": rollout, "path": path}
    pages["rollout"]["first_byte"] = timed(
        "GET", path, lambda: browser.ttfb(server, path, state.session_cookie)
    )
    if config.browser:
        pages["rollout"]["browser"] = timed(
            "render", path, lambda: browser.page_render(server, path, state.session_cookie, "rolloutpage")
        )
        pages["fleet_interaction"] = timed(
            "filter", "/", lambda: browser.filter_and_scroll(server, state.session_cookie)
        )
    render = pages["rollout"].get("browser") or {}
    keystrokes = (pages.get("fleet_interaction") or {}).get("keystrokes") or {}
    log(
        f"rollout page {rollout}: first byte {pages['rollout']['first_byte'].get('median_ms')} ms, "
        f"first render {render.get('first_render_ms')} ms; fleet filter keystroke "
        f"{keystrokes.get('median_ms')} ms"
    )
    if config.history_releases and state.database_url.startswith(("postgres://", "postgresql://")):
        pages["history"] = _history_page(config, state, keys[0], log)
    return pages


def _history_page(
    config: BenchConfig, state: RunState, key: str, log: Callable[[str], None]
) -> dict[str, Any]:
    """Seed ``history_releases`` releases (with their timelines) on ``key`` and time its history page,
    its timeline API and its rollout page (which reads the rollout's recent recorded events)."""
    server = state.servers[0]
    started = time.monotonic()
    manage(
        ["seed_history", "--releases", str(config.history_releases), "--rollout", key, "--days", "365"],
        _env(config, state),
    )
    seeded = round(time.monotonic() - started, 1)
    quoted = "/".join(urllib.parse.quote(p, safe="") for p in key.split("/"))
    figures: dict[str, Any] = {"key": key, "releases": config.history_releases, "seed_seconds": seeded}
    for name, path in (
        ("history", f"/rollouts/{quoted}/history/"),
        ("timeline_api", f"/api/v1/rollouts/{quoted}/timeline"),
        ("rollout", f"/rollouts/{quoted}/"),
    ):
        try:
            figures[name] = {"path": path, **browser.ttfb(server, path, state.session_cookie)}
        except (OSError, RuntimeError, http.client.HTTPException) as error:
            figures[name] = {"path": path, "error": f"GET {path}: {type(error).__name__}: {error}"[:500]}
    log(
        f"history of {key} with {config.history_releases} releases (seeded in {seeded}s): page first byte "
        f"{figures['history'].get('median_ms')} ms, "
        f"timeline API {figures['timeline_api'].get('median_ms')} ms, "
        f"rollout page {figures['rollout'].get('median_ms')} ms"
    )
    return figures


async def _delivery_capacity(
    config: BenchConfig, state: RunState, processes: Processes, log: Callable[[str], None]
) -> dict[str, Any]:
    """How fast the web side can deliver updates: republish up to ``CAPACITY_UPDATES`` current views
    straight to the bus as fast as it takes them, and time until every client has had them all (the raw
    fan-out limit is the same thing without the application). The views are unchanged, so the clients'
    tables still equal the simulators' afterwards."""
    from dashboard.live.bus import RedisBus

    views = await _current_views(config, state, CAPACITY_UPDATES)
    if not views:
        return {"updates": 0}
    bus = RedisBus(config.redis_url, prefix=state.prefix)
    log(f"delivery capacity: republishing {len(views)} views to {config.clients} clients at once …")
    started = time.time()
    ids: list[str] = []
    try:
        for start in range(0, len(views), 100):
            ids += await bus.publish_many([(view, []) for view in views[start : start + 100]])
        published = time.time()
    finally:
        await bus.close()
    deadline = time.monotonic() + CAPACITY_TIMEOUT
    while time.monotonic() < deadline and not _clients_reached(state, ids[-1]):
        processes.check()
        await asyncio.sleep(0.1)
    return {
        "updates": len(views),
        "started": started,
        "published_seconds": round(published - started, 3),
        "first_id": ids[0],
        "last_id": ids[-1],
        "all_delivered": _clients_reached(state, ids[-1]),
    }


async def _web_restart(
    config: BenchConfig, state: RunState, processes: Processes, log: Callable[[str], None]
) -> dict[str, Any]:
    """Restart the first web server under its open pages, as a deploy does: SIGTERM, and once it has
    exited, publish ``RESTART_UPDATES`` current views (unchanged, so the tables still equal the simulators')
    that only a resume can bring; start it again on the same port; wait until every client has them.
    The report times each client from the SIGTERM to its first message at or past the last of them."""
    from dashboard.live.bus import RedisBus

    views = await _current_views(config, state, RESTART_UPDATES)
    old = state.web[0]
    port = urllib.parse.urlsplit(state.servers[0]).port
    log(f"restarting {old.name} under its open pages (SIGTERM, then start again on port {port}) …")
    stopped_at = time.time()
    await asyncio.to_thread(processes.stop, old)
    exited_at = time.time()
    bus = RedisBus(config.redis_url, prefix=state.prefix)
    ids: list[str] = []
    try:
        for start in range(0, len(views), 100):
            ids += await bus.publish_many([(view, []) for view in views[start : start + 100]])
    finally:
        await bus.close()
    new = processes.start(
        old.name,
        "web",
        uvicorn_command(port or 0, "--ws-max-size", str(2**24)),
        _env(config, state),
        profile=True,
    )
    state.web[0] = new
    await asyncio.to_thread(wait_http, state.servers[0] + "/healthz", new, 60)
    up_at = time.time()
    deadline = time.monotonic() + RESTART_TIMEOUT
    while ids and time.monotonic() < deadline and not _clients_reached(state, ids[-1]):
        processes.check()
        await asyncio.sleep(0.1)
    reached = bool(ids) and _clients_reached(state, ids[-1])
    log(
        f"web restart: exited {exited_at - stopped_at:.1f}s after SIGTERM, answering again after "
        f"{up_at - stopped_at:.1f}s; every page resumed: {reached} ({time.time() - stopped_at:.1f}s)"
    )
    return {
        "server": state.servers[0],
        "stopped_at": stopped_at,
        "exit_seconds": round(exited_at - stopped_at, 3),
        "answering_seconds": round(up_at - stopped_at, 3),
        "updates_while_down": len(ids),
        "last_id": ids[-1] if ids else None,
        "all_resumed": reached,
    }


async def _watcher_restart(
    config: BenchConfig, state: RunState, processes: Processes, log: Callable[[str], None]
) -> dict[str, Any]:
    """Restart the first cluster's watcher as a deploy does: SIGTERM; while it is away the churn goes on
    for ``WATCHER_AWAY_SECONDS`` and the releases it started run to their end; start it again on the same
    bus and time it until it logs that the fleet is current on the bus (every view it had to build
    published) and every row that was behind equals the simulator's (a watch resumed from the handoff
    brings the changes after the resync). Then wait for the simulators and the stream to go quiet, so the
    run's final check (every page equals the simulator) covers the restart."""
    import redis

    old, cluster = state.watchers[0], state.clusters[0]
    log(f"restarting {old.name} (SIGTERM; {WATCHER_AWAY_SECONDS:g}s of churn while it is away) …")
    peaks = state.watcher_peaks.setdefault(old.name, {})
    before = processes.usage().get(old.name)
    if before is not None:  # what its stop adds is the difference
        peaks["before_its_stop"] = before["peak_mb"]
    peaks["stopped"] = await asyncio.to_thread(processes.stop, old)
    away = await churn([cluster], config.churn, WATCHER_AWAY_SECONDS, seed=config.seed + 1)
    # As quiet as the final check waits for: a release paused for a while must have gone on first.
    await settle([cluster], processes, config.quiet_timeout, quiet=12.0)
    client = redis.Redis.from_url(config.redis_url)
    pending = rows_to_change(client, state.prefix, await expected_rows([cluster]), cluster.name)
    offset = old.log_path.stat().st_size if old.log_path.exists() else 0
    started = time.monotonic()
    new = _watcher(old.name, cluster, state, processes, _env(config, state), config)
    state.watchers[0] = new
    text, current = "", None
    deadline = started + min(config.setup_timeout, 120.0)
    while current is None and time.monotonic() < deadline:
        processes.check()
        await asyncio.sleep(0.05)
        with open(new.log_path, "rb") as handle:
            handle.seek(offset)
            text = handle.read().decode(errors="replace")
        if WATCHER_CURRENT in text and caught_up(client, state.prefix, pending):
            current = time.monotonic() - started
    usage = processes.usage().get(new.name)
    if usage is not None:
        state.watcher_peaks.setdefault(new.name, {})["restarted"] = usage["peak_mb"]
    counts = RESYNCED.search(text)
    log(
        f"watcher restart: the fleet current on the bus after {current} s "
        f"({counts.group(0) if counts else 'no resync logged'})"
    )
    if current is None:
        held = bus_rows(client, state.prefix)
        for key in [key for key, row in pending.items() if held.get(key) != row][:3]:
            log(f"  {key} still differs: the simulator's row {pending[key]}, the bus's {held.get(key)}")
    await settle(state.clusters, processes, config.quiet_timeout, quiet=12.0)
    last, since, give_up = None, time.monotonic(), time.monotonic() + 60.0
    # The stream still for 2 s (at most a minute of waiting): the clients have the end state.
    while time.monotonic() - since < 2.0 and time.monotonic() < give_up:
        newest = client.xrevrange(f"{state.prefix}stream", count=1)
        if newest != last:
            last, since = newest, time.monotonic()
        await asyncio.sleep(0.2)
    return {
        "seconds_until_current": round(current, 2) if current is not None else None,
        "writes_while_away": len(away.writes),
        "rows_behind": len(pending),
        "views_kept": int(counts["kept"]) if counts else None,
        "views_built": int(counts["built"]) if counts else None,
    }


def _clients_reached(state: RunState, stream_id: str) -> bool:
    from dashboard.live.bus import parse_id

    try:
        reached = [parse_id(path.read_text()) for path in state.progress_files]
    except (OSError, ValueError):
        return False
    return bool(reached) and min(reached) >= parse_id(stream_id)


def _collect_clients(state: RunState, processes: Processes, log: Callable[[str], None]) -> dict[str, Any]:
    for _, _, _, stop in state.client_procs:
        stop.write_text("stop")
    reports: list[dict[str, Any]] = []
    tables: dict[str, dict[str, str]] = {}
    for process, out, _, _ in state.client_procs:
        process.expected_exit = True
        try:
            process.popen.wait(120)
        except Exception as error:
            raise BenchError(f"{process.name} did not stop: {error}") from None
        if not out.exists():
            raise BenchError(f"{process.name} wrote no results:\n{process.log_tail()}")
        data = json.loads(out.read_text())
        reports.extend(data["clients"])
        tables.update(data["tables"])
    return {"reports": reports, "tables": tables}


def _bus_rows(config: BenchConfig, state: RunState) -> dict[str, str]:
    """The fleet rows the bus itself holds at the end, presented like the clients' (a server-side check)."""
    import redis

    return bus_rows(redis.Redis.from_url(config.redis_url), state.prefix)


def _redis_used_mb(config: BenchConfig) -> float:
    """Redis's ``used_memory`` now (the whole server's), in MB as the monitor samples it."""
    import redis

    try:
        used = redis.Redis.from_url(config.redis_url, socket_timeout=10).info("memory")["used_memory"]
    except redis.RedisError as error:
        raise BenchError(f"Redis at REDIS_URL did not answer: {error}") from None
    return round(int(used) / 2**20, 1)


def _redis_keys_mb(config: BenchConfig, state: RunState) -> dict[str, float]:
    """The memory of the run's own Redis keys by key (MEMORY USAGE, every element counted): Redis's
    ``used_memory`` is the whole server's, other databases on it included."""
    import redis

    client = redis.Redis.from_url(config.redis_url, socket_timeout=60)
    sizes: dict[str, float] = {}
    for key in client.scan_iter(match=f"{state.prefix}*", count=1000):
        used = client.memory_usage(key, samples=0) or 0
        name = key.decode().removeprefix(state.prefix)
        sizes[name] = round(used / 2**20, 1)
    return dict(sorted(sizes.items(), key=lambda item: -item[1])[:10])


def _watcher_changes(path: Path) -> int | None:
    """The watcher's own count of Kubernetes changes processed, from its stop line."""
    try:
        found = re.findall(r"changes=(\d+)", path.read_text(errors="replace"))
    except OSError:
        return None
    return int(found[-1]) if found else None


async def _limits(config: BenchConfig, state: RunState, raw: dict[str, Any]) -> dict[str, Any]:
    reports = raw["clients"]["reports"]
    rows = sum(r["rows_received"] for r in reports)
    size = int(sum(r["bytes_received"] for r in reports) / rows) if rows else 300  # one row's update
    return {
        "xadd": await limits.xadd_limit(config.redis_url, f"{state.prefix}raw-stream", raw["payloads"]),
        "fanout": await limits.fanout_limit(config.redis_url, state.prefix, config.clients, size),
    }


def _profiles(config: BenchConfig) -> dict[str, Any]:
    if config.profile_dir is None:
        return {}
    found = {}
    for path in sorted(config.profile_dir.glob("*.collapsed.txt")):
        found[path.name.removesuffix(".collapsed.txt")] = analysis.profile_summary(
            path.read_text(errors="replace").splitlines()
        )
    return found


def _cleanup(config: BenchConfig, state: RunState) -> None:
    with contextlib.suppress(Exception):
        forget_prefix(config.redis_url, state.prefix)
    if state.database_url.startswith(("postgres://", "postgresql://")):
        with contextlib.suppress(Exception):
            drop_database(state.database_url)


async def _current_views(config: BenchConfig, state: RunState, count: int) -> list[dict[str, Any]]:
    """The first ``count`` views the bus holds now (by key): republished unchanged, they leave every
    client's table equal to the simulators'."""
    import redis.asyncio as aioredis

    client: Any = aioredis.Redis.from_url(config.redis_url, socket_timeout=30)
    try:
        keys = sorted(await client.hkeys(f"{state.prefix}snap"))[:count]
        return [json.loads(v) for v in await client.hmget(f"{state.prefix}snap", keys) if v] if keys else []
    finally:
        await client.aclose()
