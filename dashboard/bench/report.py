"""The run's figures: computed from the raw measurements, compared with the issue's targets, and written
as JSON (for machines), an HTML page with plotly charts (for people; plotly.js is inlined so it opens
offline) and a short text summary.

Non-goals: measuring (``run``), failing a run that misses a target (targets are reported, not asserted).
"""

from __future__ import annotations

import dataclasses
import html
import itertools
import json
import os
import platform
import subprocess
import time
from pathlib import Path
from typing import Any

import orjson

from dashboard import compiled
from dashboard.bench import analysis, watchlag
from dashboard.bench.analysis import ClientLog, parse_stream_id

TARGETS = {
    "ingest_per_second": 500.0,
    "e2e_p99_ms": 250.0,
    "first_byte_ms": 300.0,
    "first_render_ms": 1500.0,
    "watcher_rss_mb": 500.0,
    "cold_start_seconds": 5.0,  # a watcher started against the fleet has all of it on the bus (issue 23)
    "fanout_ratio": 0.5,  # updates delivered to the clients per second, at capacity, vs the raw fan-out
    # issue 23
    "filter_keystroke_ms": 100.0,  # a keystroke in the fleet filter box → table repainted + next frame
    "web_rss_mb": 500.0,
    "watcher_cpu_ms_per_change": 0.3,  # the watcher's cores during the churn / its changes per second
    "watcher_rss_per_10k_mb": 250.0,  # a watcher's peak RSS with 10,000 rollouts in its cluster
    "redis_used_mb": 1024.0,
    "rollout_first_byte_ms": 100.0,
    "rollout_first_render_ms": 1000.0,
    "history_first_byte_ms": 300.0,
    "restart_resumed_seconds": 5.0,  # web SIGTERM → every open page reconnected and resumed
    "watcher_restart_seconds": 5.0,  # a restarted watcher's start → the fleet current on the bus
}


def machine() -> dict[str, Any]:
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        mem_kb = int(Path("/proc/meminfo").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        mem_kb = 0
    redis_version = ""
    try:
        out = subprocess.run(["redis-server", "--version"], capture_output=True, text=True, timeout=5).stdout
        redis_version = out.split("v=")[1].split()[0] if "v=" in out else out.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gb": round(mem_kb / 2**20, 1),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "redis": redis_version,
        "python_work_ms": python_work_ms(),
        "domain": compiled.running(),  # the watchers run what this process does: same tree and environment
    }


def python_work_ms(rounds: int = 5) -> float:
    """CPU milliseconds this machine takes for a fixed piece of pure-Python work of the watcher's kind
    (small dicts built and read back, strings formatted, a JSON round trip), the best of ``rounds``. Every
    figure of a run is its machine's; this one says how fast the machine is, so that runs on different
    machines can be compared (docs/benchmarks.md, "Ninth session")."""
    best = float("inf")
    for _ in range(rounds):
        started = time.process_time()
        total = 0
        for i in range(20_000):
            obj = {"metadata": {"name": f"svc-{i:05d}", "labels": {"hash": str(i * 7919)}}, "replicas": i % 5}
            text = orjson.dumps(obj)
            back = orjson.loads(text)
            total += len(back["metadata"]["labels"]["hash"]) + back.get("replicas", 0) + len(text)
        best = min(best, time.process_time() - started)
    return round(1000 * best, 1)


def _ingest(
    samples: list[dict[str, Any]], start: float, end: float
) -> tuple[float | None, list[dict[str, Any]]]:
    """kubesim writes per second over [start, end] (all clusters), and the per-sample series."""
    inside = [s for s in samples if start <= s["t"] <= end and None not in s["kubesim_versions"].values()]
    series = []
    for a, b in itertools.pairwise(samples):
        va, vb = a["kubesim_versions"], b["kubesim_versions"]
        if None in va.values() or None in vb.values() or va.keys() != vb.keys():
            continue
        series.append(
            {
                "t": round(b["t"] - start, 2),
                "rate": round(sum(vb[k] - va[k] for k in vb) / (b["t"] - a["t"]), 1),
            }
        )
    if len(inside) < 2:
        return None, series
    first, last = inside[0], inside[-1]
    writes = sum(last["kubesim_versions"][k] - first["kubesim_versions"][k] for k in last["kubesim_versions"])
    return round(writes / (last["t"] - first["t"]), 1), series


def _cpu(samples: list[dict[str, Any]], start: float, end: float) -> dict[str, float]:
    """Cores each process used on average during the churn window (to a thousandth: the watcher's CPU per
    change is divided from it, and at 500 changes/s a hundredth of a core is 0.02 ms of it)."""
    inside = [s for s in samples if start <= s["t"] <= end]
    if len(inside) < 2:
        return {}
    first, last = inside[0], inside[-1]
    span = last["t"] - first["t"]
    return {
        name: round((last["processes"][name]["cpu_s"] - usage["cpu_s"]) / span, 3)
        for name, usage in first["processes"].items()
        if name in last["processes"]
    }


def machine_cpu_text(machine: dict[str, Any]) -> str:
    if not machine:
        return "machine CPU during churn: not measured (no /proc/stat)"
    return (
        f"machine CPU during churn: {machine['busy_cores']} of {machine['cores']} cores busy "
        f"({round(100 * (machine['busy_fraction'] or 0))} %), {machine['unaccounted_cores']} of them outside "
        "the measured processes (Redis, PostgreSQL, the harness, the kernel)"
    )


def _machine_cpu(
    samples: list[dict[str, Any]], start: float, end: float, processes: dict[str, float]
) -> dict[str, Any]:
    """How full the machine was during the churn: its busy cores on average (of ``cores``), and how many
    of them the measured ``processes`` (``_cpu``'s cores each) do not account for (Redis, PostgreSQL, the
    harness, the kernel). A machine near full makes every process wait for a core."""
    inside = [s for s in samples if start <= s["t"] <= end and s.get("machine")]
    if len(inside) < 2:
        return {}
    first, last = inside[0], inside[-1]
    busy = last["machine"]["busy_s"] - first["machine"]["busy_s"]
    idle = last["machine"]["idle_s"] - first["machine"]["idle_s"]
    span = last["t"] - first["t"]
    measured = sum(processes.values())
    return {
        "cores": os.cpu_count(),
        "busy_cores": round(busy / span, 2),
        "busy_fraction": round(busy / (busy + idle), 3) if busy + idle > 0 else None,
        "unaccounted_cores": round(busy / span - measured, 2),
    }


def _memory(samples: list[dict[str, Any]], redis_before_mb: float | None = None) -> dict[str, Any]:
    """Each process's peak RSS, and Redis's: the whole server's peak ``used_memory`` and, given what the
    server used before the run began (other databases, an earlier run's leftovers), the run's own part of
    that peak, which issue 23's target is about."""
    peaks: dict[str, float] = {}
    for sample in samples:
        for name, usage in sample["processes"].items():
            peaks[name] = max(peaks.get(name, 0.0), usage["peak_mb"], usage["rss_mb"])
    redis_values = [s["redis_used_mb"] for s in samples if s.get("redis_used_mb") is not None]
    redis_peak = max(redis_values) if redis_values else None
    run_peak = None
    if redis_peak is not None and redis_before_mb is not None:
        run_peak = round(redis_peak - redis_before_mb, 1)
    return {
        "peak_rss_mb": peaks,
        "redis_used_peak_mb": redis_peak,
        "redis_used_before_mb": redis_before_mb,
        "redis_run_peak_mb": run_peak,
    }


def _loss(raw: dict[str, Any], reports: list[dict[str, Any]], delays: analysis.Delays) -> dict[str, Any]:
    expected: dict[str, str] = raw["expected"]
    tables: dict[str, dict[str, str]] = raw["clients"]["tables"]
    per_table = {digest: analysis.compare_tables(expected, table) for digest, table in tables.items()}
    matching = sum(1 for r in reports if not any(per_table[r["table"]].values()))
    worst = max(per_table.values(), key=lambda c: sum(len(v) for v in c.values()), default=None)
    bus = analysis.compare_tables(expected, raw["bus_rows"])
    return {
        "rollouts_expected": len(expected),
        "clients": len(reports),
        "clients_matching": matching,
        "worst_client": {k: {"count": len(v), "examples": v[:5]} for k, v in (worst or {}).items()},
        "bus_matching": not any(bus.values()),
        "bus": {k: {"count": len(v), "examples": v[:5]} for k, v in bus.items()},
        "stale_example": _stale_example(expected, raw["bus_rows"], bus["stale"]),
        "unpublished_writes": delays.unpublished,
        "undelivered": delays.undelivered,
        "reconnects": sum(r["reconnects"] for r in reports),
        "client_errors": [e for r in reports for e in r["errors"]][:10],
        "settled": bool(raw["quiet"]),
        "zero_loss": matching == len(reports) and delays.undelivered == 0 and not any(bus.values()),
    }


def _clients_per_server(raw: dict[str, Any], reports: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """How many clients each web server had, and how many of those ended equal to the simulators."""
    expected = raw["expected"]
    tables = raw["clients"]["tables"]
    equal = {digest: not any(analysis.compare_tables(expected, t).values()) for digest, t in tables.items()}
    servers: dict[str, dict[str, int]] = {}
    for report in reports:
        counts = servers.setdefault(report["server"], {"clients": 0, "matching": 0})
        counts["clients"] += 1
        counts["matching"] += int(equal.get(report["table"], False))
    return servers


def _stale_example(expected: dict[str, str], held: dict[str, str], stale: list[str]) -> dict[str, Any] | None:
    """The first stale row's expected and held values, for whoever has to find out why."""
    if not stale:
        return None
    return {"key": stale[0], "expected": expected[stale[0]], "held": held[stale[0]]}


def _capacity(burst: dict[str, Any], reports: list[dict[str, Any]]) -> dict[str, Any]:
    """The web side's delivery capacity: the burst's updates times the clients, over the time from the
    burst's start until the last client had the last of them."""
    if not burst.get("updates"):
        return {}
    last = parse_stream_id(burst["last_id"])
    arrivals = [
        next((float(at) for stream_id, at in r["messages"] if parse_stream_id(stream_id) >= last), None)
        for r in reports
    ]
    done = sorted(at - burst["started"] for at in arrivals if at is not None)
    figures: dict[str, Any] = {
        "updates": burst["updates"],
        "clients": len(reports),
        "publish_seconds": burst["published_seconds"],
        "clients_complete": len(done),
    }
    if len(done) < len(reports) or not done:
        return {**figures, "updates_delivered_per_second": None}
    return {
        **figures,
        "seconds_until_all_had_all": round(done[-1], 3),
        "median_client_seconds": round(done[len(done) // 2], 3),
        "updates_delivered_per_second": round(burst["updates"] * len(reports) / max(done[-1], 1e-9), 1),
    }


def _restart(restart: dict[str, Any], reports: list[dict[str, Any]]) -> dict[str, Any]:
    """The web restart: for each client of the restarted server, from the SIGTERM to its first message at
    or past the last update published while the server was down (only a resume brings those)."""
    if not restart or not restart.get("last_id"):
        return dict(restart or {})
    last = parse_stream_id(restart["last_id"])
    mine = [r for r in reports if r["server"] == restart["server"]]
    arrivals = [
        next((float(at) for stream_id, at in r["messages"] if parse_stream_id(stream_id) >= last), None)
        for r in mine
    ]
    done = sorted(at - restart["stopped_at"] for at in arrivals if at is not None)
    figures = {
        **{k: v for k, v in restart.items() if k != "stopped_at"},
        "clients": len(mine),
        "clients_resumed": len(done),
    }
    if not done or len(done) < len(mine):
        return {**figures, "seconds_until_all_resumed": None}
    return {
        **figures,
        "seconds_until_all_resumed": round(done[-1], 3),
        "median_client_seconds": round(done[len(done) // 2], 3),
    }


def config_dict(config: Any) -> dict[str, Any]:
    """A run's settings for the report (a ``BenchConfig``), without the service URLs (they hold secrets)."""
    data = dataclasses.asdict(config)
    data.pop("redis_url", None)
    data.pop("database_url", None)
    return {k: str(v) if isinstance(v, Path) else v for k, v in data.items()}


def figures(config: Any, state: Any, raw: dict[str, Any]) -> dict[str, Any]:
    churned = raw["churn"]
    start, end = churned.started, churned.ended
    window = max(end - start, 1e-9)
    cores = _cpu(raw["samples"], start, end)
    reports = raw["clients"]["reports"]
    logs = [
        ClientLog([parse_stream_id(m[0]) for m in r["messages"]], [float(m[1]) for m in r["messages"]])
        for r in reports
    ]
    index = analysis.PublishIndex.build(raw["entries"])
    delays = analysis.delays(churned.writes, index, logs)
    ingest, ingest_series = _ingest(raw["samples"], start, end)
    published = [e.at for e in raw["entries"] if start <= e.at <= end]
    client_messages = sum(max(0, len(r["messages"]) - 1) for r in reports)
    delivery_span = max(raw["quiet_at"] - start, 1e-9)
    # Rows of the churn (and of the capacity burst, which came after ``quiet_at``, taken out).
    burst = (raw.get("capacity") or {}).get("updates", 0) * len(reports)
    rows_delivered = max(0, sum(r["rows_received"] for r in reports) - burst)
    memory = _memory(raw["samples"], raw.get("redis_used_before_mb"))
    memory["redis_run_keys_mb"] = raw.get("redis_keys_mb") or {}  # the run's own keys, at the end
    page = raw.get("page", {})
    result: dict[str, Any] = {
        "command": "python manage.py bench " + " ".join(getattr(config, "argv", [])),
        "machine": machine(),
        "config": config_dict(config),
        "layout": config.layout,
        "setup": state.timings,
        "ingest": {
            "changes_per_second": ingest,
            "churn_writes": len(churned.writes),
            "churn_failures": len(churned.failures),
            "churn_per_second": round(len(churned.writes) / window, 1),
            "window_seconds": round(window, 1),
            "published_per_second": round(len(published) / window, 1),
            "watcher_changes_total": raw.get("watcher_changes", {}),
            "series": ingest_series,
        },
        "end_to_end": {
            "ms": analysis.summarize(ms for _, ms in delays.end_to_end),
            "write_to_bus_ms": analysis.summarize(ms for _, ms in delays.publish),
            # The write requests' own time (sending → the API's answer), and end to end counted from the
            # answer: the write was committed in between, so the truth lies between the two figures.
            "write_request_ms": analysis.summarize(delays.requests),
            "from_api_answer_ms": analysis.summarize(delays.end_to_end_from_answer),
            # From the API server's own time of the commit (kubesim says it): the pipeline's part alone.
            "from_commit_ms": analysis.summarize(delays.end_to_end_from_commit),
            "commit_to_bus_ms": analysis.summarize(delays.publish_from_commit),
            "write_to_bus_share_over": watchlag.delay_shares(ms for _, ms in delays.publish),
            # The watcher's own part of write → bus (dashboard.bench.watchlag).
            "watcher_receipt_to_bus": raw.get("watch_lag") or {},
            "over_time": analysis.over_time(delays.end_to_end, start),
            "published_over_time": analysis.rate_series(published, start),
        },
        "delivery": {
            "client_messages_per_second": round(client_messages / delivery_span, 1),
            "rows_delivered_per_second": round(rows_delivered / delivery_span, 1),
        },
        "capacity": _capacity(raw.get("capacity") or {}, reports),
        "loss": _loss(raw, reports, delays),
        "fleet_page": page,
        "pages": raw.get("pages") or {},
        "restart": _restart(raw.get("restart") or {}, reports),
        "watcher_restart": raw.get("watcher_restart") or {},
        "memory": {
            **memory,
            "series": [
                {
                    "t": round(s["t"] - start, 2),
                    "redis_used_mb": s.get("redis_used_mb"),
                    **{name: u["rss_mb"] for name, u in s["processes"].items()},
                }
                for s in raw["samples"]
            ],
        },
        "cpu_cores_during_churn": cores,
        "machine_cpu_during_churn": _machine_cpu(raw["samples"], start, end, cores),
        "limits": raw.get("limits", {}),
        "scale_out": {
            "layout": config.layout,
            "servers": len(state.servers),
            "clients_per_server": _clients_per_server(raw, reports),
            "clusters": len(state.clusters),
            "watchers": len(state.watchers),
            **raw.get("failover", {}),
        },
        "profiles": raw.get("profiles", {}),
    }
    result["cold_start"] = _cold_start(config, state)
    result["watcher_cost"] = _watcher_cost(result, raw.get("floor") or {})
    result["ratios"] = _ratios(result)
    result["targets"] = _targets(config, result)
    return result


def _cold_start(config: Any, state: Any) -> dict[str, Any]:
    """From starting the watcher process(es) until the bus held every rollout (listing, building and
    publishing the whole fleet; the process's own start included)."""
    return {
        "seconds": state.timings.get("initial_publish_seconds"),
        "rollouts": config.rollouts,
        "target_seconds": TARGETS["cold_start_seconds"],
        # Where the watchers' peak memory was reached (``PEAK_MOMENTS``): by the cold start, before the
        # churn, before and as one stopped (its handoff), by the time its restart was current.
        "watcher_peak_rss_mb": state.watcher_peaks,
    }


# The moments a watcher's peak RSS is read at (``run``), as the report names them.
PEAK_MOMENTS = {
    "fleet_published": "the fleet was on the bus",
    "churn_began": "the churn began",
    "before_its_stop": "it was told to stop",
    "stopped": "it stopped (its handoff saved)",
    "restarted": "its restart was current",
}


def _moments(peaks: dict[str, float]) -> str:
    return ", ".join(f"{PEAK_MOMENTS.get(moment, moment)} {mb}" for moment, mb in peaks.items())


def watcher_peak_mb(result: dict[str, Any]) -> float | None:
    """The watchers' highest RSS in the run: sampled through the churn, and read at each of
    ``PEAK_MOMENTS`` (a stop or a restart happens outside the churn's samples)."""
    sampled = [v for k, v in result["memory"]["peak_rss_mb"].items() if k.startswith(("watcher", "standby"))]
    moments = (result.get("cold_start") or {}).get("watcher_peak_rss_mb") or {}
    read = [mb for at in moments.values() for mb in at.values() if isinstance(mb, int | float)]
    return max([*sampled, *read], default=None)


def _watcher_cost(result: dict[str, Any], floor: dict[str, Any]) -> dict[str, Any]:
    """The watchers' CPU per Kubernetes change during the churn (their processes and the processes they
    started, i.e. the history recorder), beside its two floors: decoding the same kinds of object with
    orjson alone, and receiving them as watch events over TLS with the watcher's reader (``floor``)."""
    used = result["cpu_cores_during_churn"]
    cores = sum(v for k, v in used.items() if k.startswith(("watcher", "standby")))
    changes = result["ingest"]["changes_per_second"]
    per_change = round(cores * 1000 / changes, 3) if changes else None
    decode = floor.get("orjson_decode_ms_per_change")
    receive = floor.get("receive") or {}
    received = receive.get("ms_per_change")
    return {
        "watcher_cores": round(cores, 3),
        "watcher_cpu_ms_per_change": per_change,
        "orjson_decode_ms_per_change": decode,
        "watcher_vs_decode": round(per_change / decode, 1) if per_change and decode else None,
        "receive_ms_per_change": received,
        "watcher_vs_receive": round(per_change / received, 1) if per_change and received else None,
        "decode_sample": {
            k: v for k, v in floor.items() if k not in ("orjson_decode_ms_per_change", "receive")
        },
        "receive_stream": {k: v for k, v in receive.items() if k != "ms_per_change"},
    }


def _received_text(cost: dict[str, Any]) -> str:
    error = (cost.get("receive_stream") or {}).get("error")
    if error:
        return f"not measured: {error}"
    return f"{cost.get('receive_ms_per_change')} ms, ratio {cost.get('watcher_vs_receive')}"


def _ratios(result: dict[str, Any]) -> dict[str, Any]:
    limits = result["limits"]
    ratios: dict[str, Any] = {}
    xadd = (limits.get("xadd") or {}).get("entries_per_second")
    if xadd:
        ratios["published_vs_raw_xadd"] = round(result["ingest"]["published_per_second"] / xadd, 3)
        if result["ingest"]["changes_per_second"]:
            ratios["ingest_vs_raw_xadd"] = round(result["ingest"]["changes_per_second"] / xadd, 3)
    fanout = (limits.get("fanout") or {}).get("deliveries_per_second")
    if fanout:
        ratios["client_messages_vs_raw_fanout"] = round(
            result["delivery"]["client_messages_per_second"] / fanout, 3
        )
        capacity = result["capacity"].get("updates_delivered_per_second")
        if capacity:
            ratios["updates_delivered_vs_raw_fanout"] = round(capacity / fanout, 3)
    return ratios


def _targets(config: Any, result: dict[str, Any]) -> list[dict[str, Any]]:
    at_scale = config.rollouts >= 10_000 and config.namespaces >= 100
    full = at_scale and config.clients >= 200 and config.seconds >= 60
    browser = result["fleet_page"].get("browser") or {}
    e2e = result["end_to_end"]["ms"]
    committed = result["end_to_end"].get("from_commit_ms") or analysis.summarize([])
    watcher_peak = watcher_peak_mb(result)
    rows = [
        (
            "ingest changes/s, sustained with zero loss",
            ">= 500",
            result["ingest"]["changes_per_second"],
            (result["ingest"]["changes_per_second"] or 0) >= TARGETS["ingest_per_second"]
            and result["loss"]["zero_loss"],
            full,
        ),
        ("end-to-end p99 (ms)", "< 250", e2e["p99"], e2e["p99"] is not None and e2e["p99"] < 250, full),
        (
            "end-to-end p99 from the API server's commit (ms)",
            "< 250",
            committed["p99"],
            _below(committed["p99"], TARGETS["e2e_p99_ms"]),
            full and committed["count"] > 0,
        ),
        (
            "fleet page first byte (ms)",
            "< 300",
            result["fleet_page"].get("shell", {}).get("median_ms"),
            (result["fleet_page"].get("shell", {}).get("median_ms") or 1e9) < 300,
            at_scale,
        ),
        (
            "fleet page first render (ms)",
            "< 1500",
            browser.get("first_render_ms"),
            (browser.get("first_render_ms") or 1e9) < 1500,
            at_scale,
        ),
        ("watcher peak RSS (MB)", "< 500", watcher_peak, (watcher_peak or 1e9) < 500, at_scale),
        (
            "watcher cold start: the whole fleet on the bus (s)",
            "<= 5",
            result["cold_start"]["seconds"],
            (result["cold_start"]["seconds"] or 1e9) <= TARGETS["cold_start_seconds"],
            at_scale,
        ),
        (
            "updates delivered per second at capacity vs raw fan-out",
            ">= 0.5",
            result["ratios"].get("updates_delivered_vs_raw_fanout"),
            (result["ratios"].get("updates_delivered_vs_raw_fanout") or 0) >= TARGETS["fanout_ratio"],
            full,
        ),
        (
            "zero loss",
            "every client equals the simulator",
            result["loss"]["zero_loss"],
            result["loss"]["zero_loss"],
            True,
        ),
    ]
    rows += _targets_23(config, result)
    return [
        {"name": n, "target": t, "value": v, "met": bool(m), "at_target_scale": s} for n, t, v, m, s in rows
    ]


def _below(value: Any, limit: float) -> bool:
    return isinstance(value, int | float) and value < limit


def redis_memory_text(memory: dict[str, Any]) -> str:
    """Redis's peak: the whole server's, what it held before the run, and the run's keys at the end."""
    keys = round(sum((memory.get("redis_run_keys_mb") or {}).values()), 1)
    before = memory.get("redis_used_before_mb")
    if before is None:
        return (
            f"Redis used {memory['redis_used_peak_mb']} MB at its peak (the whole server; the run's keys "
            f"{keys} MB at the end)"
        )
    return (
        f"Redis used {memory['redis_used_peak_mb']} MB at its peak (the whole server, which held {before} MB "
        f"before the run: the run's own peak {memory['redis_run_peak_mb']} MB; its keys {keys} MB at the end)"
    )


def _targets_23(config: Any, result: dict[str, Any]) -> list[tuple[str, str, Any, bool, bool]]:
    """Issue 23's targets: 50,000 rollouts in 5 clusters (the fleet page, filtering, memory), the rollout
    page at 10,000 rollouts, the history page of a rollout with 10,000 releases, a web restart."""
    clusters = result["scale_out"]["clusters"]
    fleet_scale = config.rollouts >= 50_000 and clusters >= 5
    pages = result.get("pages") or {}
    keystroke = ((pages.get("fleet_interaction") or {}).get("keystrokes") or {}).get("median_ms")
    memory = result["memory"]["peak_rss_mb"]
    web = max((v for k, v in memory.items() if k.startswith("web")), default=None)
    # The run's own part of Redis's peak where the server's use before the run is known (a shared server).
    redis_mb = result["memory"].get("redis_run_peak_mb")
    if redis_mb is None:
        redis_mb = result["memory"]["redis_used_peak_mb"]
    rollout = pages.get("rollout") or {}
    rollout_byte = (rollout.get("first_byte") or {}).get("median_ms")
    rollout_render = (rollout.get("browser") or {}).get("first_render_ms")
    history = pages.get("history") or {}
    history_byte = (history.get("history") or {}).get("median_ms")
    restart = result.get("restart") or {}
    resumed = restart.get("seconds_until_all_resumed")
    current = (result.get("watcher_restart") or {}).get("seconds_until_current")
    per_change = result["watcher_cost"]["watcher_cpu_ms_per_change"]
    watcher_peak = watcher_peak_mb(result)
    per_cluster = config.rollouts // max(1, clusters or 1)
    return [
        (
            "watcher CPU per change during the churn (ms)",
            "<= 0.3",
            per_change,
            isinstance(per_change, int | float) and per_change <= TARGETS["watcher_cpu_ms_per_change"],
            config.rollouts >= 10_000 and config.clients >= 200 and config.seconds >= 60,
        ),
        (
            f"watcher peak RSS, {per_cluster} rollouts in its cluster (MB)",
            "<= 250",
            watcher_peak,
            isinstance(watcher_peak, int | float) and watcher_peak <= TARGETS["watcher_rss_per_10k_mb"],
            per_cluster == 10_000,
        ),
        (
            "fleet filter keystroke → repaint + next frame (ms, median)",
            "< 100",
            keystroke,
            _below(keystroke, TARGETS["filter_keystroke_ms"]),
            fleet_scale,
        ),
        ("web server peak RSS (MB)", "< 500", web, _below(web, TARGETS["web_rss_mb"]), fleet_scale),
        (
            "Redis used memory peak, the run's own (MB)",
            "< 1024",
            redis_mb,
            _below(redis_mb, TARGETS["redis_used_mb"]),
            fleet_scale,
        ),
        (
            "rollout page first byte (ms)",
            "< 100",
            rollout_byte,
            _below(rollout_byte, TARGETS["rollout_first_byte_ms"]),
            config.rollouts >= 10_000,
        ),
        (
            "rollout page first render (ms)",
            "< 1000",
            rollout_render,
            _below(rollout_render, TARGETS["rollout_first_render_ms"]),
            config.rollouts >= 10_000,
        ),
        (
            f"history page first byte, {history.get('releases', 0)} releases (ms)",
            "< 300",
            history_byte,
            _below(history_byte, TARGETS["history_first_byte_ms"]),
            history.get("releases", 0) >= 10_000,
        ),
        (
            f"web restart: all {restart.get('clients', 0)} open pages resumed (s)",
            "<= 5",
            resumed,
            isinstance(resumed, int | float) and resumed <= TARGETS["restart_resumed_seconds"],
            restart.get("clients", 0) >= 200,
        ),
        (
            "watcher restart: the fleet current on the bus (s)",
            "<= 5",
            current,
            isinstance(current, int | float) and current <= TARGETS["watcher_restart_seconds"],
            config.rollouts >= 10_000,
        ),
    ]


# ---- output --------------------------------------------------------------------------------------------


def write_json(result: dict[str, Any], path: Path) -> None:
    path.write_text(json.dumps(result, indent=2, default=str))


def _mark(target: dict[str, Any]) -> str:
    return "met" if target["met"] else "not measured" if target["value"] is None else "missed"


def first_render_text(page: dict[str, Any]) -> str:
    """The first-render figure, or why there is none (skipped on purpose, or the browser's error)."""
    browser = page.get("browser")
    if browser is None:
        return "not measured (run with --no-browser)"
    if browser.get("first_render_ms") is not None:
        return f"{browser['first_render_ms']} ms"
    return f"not measured: {browser.get('error', 'no figure')}"


def watch_lag_text(end_to_end: dict[str, Any]) -> str:
    lag = end_to_end.get("watcher_receipt_to_bus") or {}
    if "share_over" not in lag:
        return f"  of which in the watcher: not measured ({lag.get('error', 'no figure')})"
    bus = end_to_end.get("write_to_bus_share_over") or {}

    def shares(figures: dict[str, Any]) -> str:
        return ", ".join(
            f"{'–' if value is None else f'{value * 100:.1f} %'} over {name}"
            for name, value in figures.items()
        )

    return (
        f"  of which in the watcher (the oldest Rollout change a publish includes, receipt → bus; "
        f"{lag['publishes']} publishes): {shares(lag['share_over'])}; write → bus: {shares(bus)}"
    )


def answer_text(end_to_end: dict[str, Any]) -> str:
    """The write requests' own time, and end to end counted from the API's answer instead (a lower bound:
    the write was committed between sending it and that answer)."""
    request, answered = end_to_end.get("write_request_ms") or {}, end_to_end.get("from_api_answer_ms") or {}
    if not request.get("count"):
        return "  the write requests' own time was not recorded"
    text = (
        f"  the write requests themselves (sent → the API's answer): p50 {request['p50']} ms, p99 "
        f"{request['p99']} ms; end to end counted from the answer instead (a lower bound): p50 "
        f"{answered.get('p50')} ms, p99 {answered.get('p99')} ms"
    )
    committed, to_bus = end_to_end.get("from_commit_ms") or {}, end_to_end.get("commit_to_bus_ms") or {}
    if committed.get("count"):
        text += (
            f"; from the API server's commit (its own stamp): p50 {committed['p50']} ms, p95 "
            f"{committed['p95']} ms, p99 {committed['p99']} ms (commit → bus p99 {to_bus.get('p99')} ms)"
        )
    return text


def summary_lines(result: dict[str, Any]) -> list[str]:
    e2e, bus = result["end_to_end"]["ms"], result["end_to_end"]["write_to_bus_ms"]
    page = result["fleet_page"]
    loss = result["loss"]
    lines = [
        f"layout {result['layout']}: {result['config']['rollouts']} rollouts, "
        f"{result['config']['clients']} clients, "
        f"{result['config']['churn']:g} new images/s for {result['config']['seconds']:g}s"
        + ("; simulators and clients at a lower priority (--yield-harness)"
           if result["config"].get("yield_harness") else ""),
        f"ingest: {result['ingest']['changes_per_second']} Kubernetes changes/s "
        f"({result['ingest']['published_per_second']} views published/s)",
        f"end to end (write → client): p50 {e2e['p50']} ms, p95 {e2e['p95']} ms, p99 {e2e['p99']} ms, "
        f"max {e2e['max']} ms over {e2e['count']} deliveries",
        f"  of which write → bus: p50 {bus['p50']} ms, p99 {bus['p99']} ms",
        watch_lag_text(result["end_to_end"]),
        answer_text(result["end_to_end"]),
        f"loss: {loss['clients_matching']}/{loss['clients']} clients equal the simulator; bus matches: "
        f"{loss['bus_matching']}; undelivered {loss['undelivered']}; zero loss: {loss['zero_loss']}",
        f"fleet page: first byte shell {page.get('shell', {}).get('median_ms')} ms, rows document "
        f"{page.get('rows', {}).get('median_ms')} ms; first render {first_render_text(page)}",
        "memory (peak RSS MB): "
        + ", ".join(f"{k} {v}" for k, v in result["memory"]["peak_rss_mb"].items())
        + f"; {redis_memory_text(result['memory'])}",
        "CPU cores during churn: "
        + ", ".join(f"{k} {v}" for k, v in result["cpu_cores_during_churn"].items()),
        machine_cpu_text(result.get("machine_cpu_during_churn") or {}),
    ]
    cost = result.get("watcher_cost") or {}
    lines.append(
        f"watcher cold start: {result.get('cold_start', {}).get('seconds')} s to publish "
        f"{result['config']['rollouts']} rollouts; "
        f"CPU per change: {cost.get('watcher_cpu_ms_per_change')} ms "
        f"(decoding alone with orjson: {cost.get('orjson_decode_ms_per_change')} ms, ratio "
        f"{cost.get('watcher_vs_decode')}; receiving and decoding as watch events over TLS with the "
        f"watcher's reader: {_received_text(cost)})"
    )
    peaks = result.get("cold_start", {}).get("watcher_peak_rss_mb") or {}
    if peaks:
        lines.append(
            "watcher peak RSS (MB) by the time "
            + "; ".join(f"{name}: {_moments(at)}" for name, at in peaks.items())
        )
    capacity = result["capacity"]
    if capacity:
        lines.append(
            f"delivery capacity: {capacity['updates']} updates to {capacity['clients']} clients in "
            f"{capacity.get('seconds_until_all_had_all')} s (median client "
            f"{capacity.get('median_client_seconds')} s): "
            f"{capacity.get('updates_delivered_per_second')} updates delivered/s "
            f"({capacity['clients_complete']}/{capacity['clients']} clients had them all)"
        )
    limits = result["limits"]
    if limits:
        lines.append(
            f"raw limits: XADD {limits['xadd'].get('entries_per_second')}/s, channel-layer fan-out "
            f"{limits['fanout'].get('deliveries_per_second')} deliveries/s "
            f"to {limits['fanout'].get('receivers')}; "
            f"ratios {result['ratios']}"
        )
    if result["scale_out"].get("killed"):
        so = result["scale_out"]
        lines.append(
            f"failover: killed {so['killed']}; first publish after {so.get('first_publish_after_kill_s')}s, "
            f"largest publish gap {so.get('largest_publish_gap_s')}s"
        )
    lines += _summary_lines_23(result)
    for target in result["targets"]:
        mark = _mark(target).replace("missed", "MISSED")
        scale = "" if target["at_target_scale"] else " (not at the target's scale)"
        lines.append(f"target {target['name']} {target['target']}: {target['value']} — {mark}{scale}")
    return lines


def _ms_text(figure: dict[str, Any] | None, name: str = "median_ms") -> str:
    """``12.5 ms``, or why there is no figure."""
    figure = figure or {}
    if figure.get(name) is not None:
        return f"{figure[name]} ms"
    return f"not measured: {figure['error']}" if figure.get("error") else "not measured"


def _summary_lines_23(result: dict[str, Any]) -> list[str]:
    """The pages past the fleet's first screen, and the web restart (issue 23)."""
    pages = result.get("pages") or {}
    lines = []
    interaction = pages.get("fleet_interaction") or {}
    if interaction.get("error"):
        lines.append(f"fleet filter and scroll: not measured: {interaction['error']}")
    elif interaction:
        keys, scroll = interaction["keystrokes"], interaction["scroll"]
        lines.append(
            f"fleet filter ({len(keys['each_ms'])} keystrokes typing and deleting {interaction['text']!r}): "
            f"keystroke → repaint + next frame median {keys['median_ms']} ms, max {keys['max_ms']} ms; "
            f"scrolling a viewport a frame: frame median {scroll['frame_ms']['median_ms']} ms, "
            f"max {scroll['frame_ms']['max_ms']} ms, {scroll['frames_over_50_ms']} of {scroll['frames']} "
            "frames over 50 ms"
        )
    rollout = pages.get("rollout") or {}
    if rollout:
        render = rollout.get("browser") or {}
        lines.append(
            f"rollout page ({rollout['key']}): first byte {_ms_text(rollout.get('first_byte'))}; "
            f"first render {_ms_text(render, 'first_render_ms')}"
        )
    history = pages.get("history") or {}
    if history:
        lines.append(
            f"history of {history['key']} with {history['releases']} releases: page first byte "
            f"{_ms_text(history.get('history'))}, timeline API {_ms_text(history.get('timeline_api'))}, "
            f"its rollout page {_ms_text(history.get('rollout'))}"
        )
    restart = result.get("restart") or {}
    if restart:
        lines.append(
            f"web restart under {restart.get('clients')} open pages: exited {restart.get('exit_seconds')} s "
            f"after SIGTERM, answering again at {restart.get('answering_seconds')} s; "
            f"{restart.get('clients_resumed')}/{restart.get('clients')} pages resumed past "
            f"{restart.get('updates_while_down')} updates published while it was down, the last at "
            f"{restart.get('seconds_until_all_resumed')} s (median {restart.get('median_client_seconds')} s)"
        )
    watcher = result.get("watcher_restart") or {}
    if watcher:
        lines.append(
            f"watcher restart ({watcher.get('writes_while_away')} new images while it was away, "
            f"{watcher.get('rows_behind')} fleet rows behind): the fleet current on the bus "
            f"{watcher.get('seconds_until_current')} s after its start; "
            f"{watcher.get('views_kept')} views kept as the bus held them at its resync, "
            f"{watcher.get('views_built')} built then"
        )
    return lines


def write_html(result: dict[str, Any], path: Path) -> None:
    import plotly.graph_objects as go
    from plotly.offline import get_plotlyjs

    charts = []
    series = result["end_to_end"]["over_time"]
    fig = go.Figure()
    for p in ("p50", "p95", "p99"):
        fig.add_trace(go.Scatter(x=[s["t"] for s in series], y=[s[p] for s in series], name=p, mode="lines"))
    fig.update_layout(
        title="End-to-end delay (write → client) by second of write", xaxis_title="s", yaxis_title="ms"
    )
    charts.append(fig)
    fig = go.Figure()
    ingest = result["ingest"]["series"]
    fig.add_trace(
        go.Scatter(x=[s["t"] for s in ingest], y=[s["rate"] for s in ingest], name="kubesim writes/s")
    )
    published = result["end_to_end"]["published_over_time"]
    fig.add_trace(
        go.Scatter(x=[s["t"] for s in published], y=[s["rate"] for s in published], name="views published/s")
    )
    fig.update_layout(title="Throughput", xaxis_title="s since churn start", yaxis_title="per second")
    charts.append(fig)
    fig = go.Figure()
    memory = result["memory"]["series"]
    names = sorted({k for s in memory for k in s if k != "t"})
    for name in names:
        fig.add_trace(go.Scatter(x=[s["t"] for s in memory], y=[s.get(name) for s in memory], name=name))
    fig.update_layout(
        title="Memory (RSS per process, Redis used memory)",
        xaxis_title="s since churn start",
        yaxis_title="MB",
    )
    charts.append(fig)

    rows = "".join(
        f"<tr><td>{html.escape(t['name'])}</td><td>{html.escape(str(t['target']))}</td>"
        f"<td>{html.escape(str(t['value']))}</td><td class={_mark(t).replace(' ', '-')}>"
        f"{_mark(t)}</td><td>{'yes' if t['at_target_scale'] else 'no'}</td></tr>"
        for t in result["targets"]
    )
    summary = "".join(f"<li>{html.escape(line)}</li>" for line in summary_lines(result))
    body = "".join(c.to_html(full_html=False, include_plotlyjs=False) for c in charts)
    everything = json.dumps({k: v for k, v in result.items() if k != "memory"}, indent=1, default=str)
    document = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>rollouts-ui benchmark</title>
<script>{get_plotlyjs()}</script>
<style>body{{font-family:system-ui,sans-serif;margin:2rem;max-width:1200px}}
table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:.3rem .6rem}}
.met{{color:#176b32}}.missed{{color:#b3261e;font-weight:600}}pre{{background:#f4f4f4;padding:1rem;overflow:auto}}</style>
</head><body>
<h1>rollouts-ui benchmark — layout {html.escape(result["layout"])}</h1>
<p><code>{html.escape(result["command"])}</code></p>
<p>Machine: {html.escape(json.dumps(result["machine"]))}</p>
<h2>Targets</h2>
<table><tr><th>figure</th><th>target</th><th>value</th><th></th><th>at target scale</th></tr>{rows}</table>
<h2>Summary</h2><ul>{summary}</ul>
{body}
<h2>All figures</h2><pre>{html.escape(everything)}</pre>
</body></html>"""
    path.write_text(document, encoding="utf-8")
