"""`python -m kubesim serve|scenarios`: the simulated cluster from the command line.

`serve` starts the store, the API server on 127.0.0.1 and the scenarios, writes a kubeconfig with a bearer
token, prints the URL and the kubeconfig path, and runs until SIGINT/SIGTERM. `scenarios` lists the built-in
scenarios one a line. Bad arguments get a one-line error and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import importlib
import logging
import secrets
import signal
import sys
from collections.abc import Sequence
from typing import Any

from kubesim.faults import Faults
from kubesim.kubeconfig import write_kubeconfig
from kubesim.server import start_server
from kubesim.store import DEFAULT_WATCH_WINDOW, Store

# Used when `serve` gets no --scenario and the scenario engine names no default of its own.
FALLBACK_SCENARIOS = ("healthy-canary",)


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be greater than 0")
    return value


def _port(text: str) -> int:
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a TCP port (0-65535; 0 picks a free one)")
    return int(text)


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m kubesim",
        description="A simulated Kubernetes cluster running Argo Rollouts and Argo CD.",
    )
    sub = p.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the simulated cluster's API server")
    serve.add_argument(
        "--scenario",
        action="extend",
        nargs="+",
        metavar="NAME|FILE",
        help="built-in scenario name or scenario file (repeatable)",
    )
    serve.add_argument("--empty", action="store_true", help="serve an empty cluster: no scenarios at all")
    serve.add_argument("--port", type=_port, default=0, help="TCP port on 127.0.0.1 (default: a free one)")
    serve.add_argument("--kubeconfig", default="kubesim.kubeconfig", help="where to write the kubeconfig")
    serve.add_argument("--speed", type=_positive_float, default=1.0, help="time compression factor")
    serve.add_argument("--seed", type=_int, default=0, help="random seed (runs are deterministic per seed)")
    serve.add_argument("--token", default=None, help="bearer token to accept (default: a random one)")
    serve.add_argument(
        "--bookmark-interval",
        type=_positive_float,
        default=60.0,
        help="seconds between watch bookmarks (default 60, like real servers)",
    )
    serve.add_argument(
        "--history-limit",
        type=_int,
        default=DEFAULT_WATCH_WINDOW,
        help=f"events kept for watches and paginated lists (default {DEFAULT_WATCH_WINDOW}, a bounded window "
        "like a real server's watch cache); older resourceVersions get 410 Gone",
    )
    serve.add_argument(
        "--prometheus",
        action="store_true",
        help="expose the pods' traffic metrics and start a real Prometheus scraping them (127.0.0.1)",
    )
    sub.add_parser("scenarios", help="list the built-in scenarios")
    return p


def _simulation_module() -> Any:
    try:
        return importlib.import_module("kubesim.simulation")
    except ImportError as error:
        raise SystemExit(
            f"kubesim: the scenario engine (kubesim.simulation) is not available: {error}"
        ) from None


def list_scenarios() -> int:
    for name, description in _simulation_module().list_scenarios():
        print(f"{name:<28} {description}")
    return 0


async def serve(args: argparse.Namespace) -> int:
    scenarios: list[Any] = []
    simulation = None
    names = args.scenario
    if args.empty and names:
        print("kubesim: error: --empty and --scenario exclude each other", file=sys.stderr)
        return 2
    if not args.empty:
        simulation = _simulation_module()
        if names is None:
            known = {name for name, _ in simulation.list_scenarios()}
            default = getattr(simulation, "DEFAULT_SCENARIOS", FALLBACK_SCENARIOS)
            names = [n for n in default if n in known]
        try:
            scenarios = simulation.load_scenarios(list(names))
        except Exception as error:  # ScenarioError and friends: the message says what is wrong
            print(f"kubesim: error: {error}", file=sys.stderr)
            return 2
    if args.history_limit < 1:
        print("kubesim: error: --history-limit must be at least 1", file=sys.stderr)
        return 2
    store = Store(seed=args.seed, history_limit=args.history_limit)
    faults = Faults(store)
    token = args.token or secrets.token_urlsafe(24)
    try:
        server = await start_server(
            store, port=args.port, token=token, faults=faults, bookmark_interval=args.bookmark_interval
        )
    except OSError as error:
        print(
            f"kubesim: error: cannot listen on 127.0.0.1:{args.port}: {error.strerror or error}",
            file=sys.stderr,
        )
        return 2
    path = write_kubeconfig(args.kubeconfig, server.url, token, ca_pem=server.ca_pem)
    print(f"kubesim serving on {server.url}", flush=True)
    print(f"kubeconfig: {path}", flush=True)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    tasks = [asyncio.create_task(stop.wait()), asyncio.create_task(_keep_heap_frozen())]
    metrics_stack = contextlib.AsyncExitStack()
    if simulation is not None and scenarios:
        sim = simulation.Simulation(store, scenarios, speed=args.speed, seed=args.seed, faults=faults)
        if args.prometheus:
            from kubesim.prometheus import PrometheusUnavailable, attach_prometheus

            try:
                prom = await metrics_stack.enter_async_context(attach_prometheus(sim))
                print(f"prometheus: {prom.url} (scraping {prom.traffic_url}/metrics)", flush=True)
            except PrometheusUnavailable as error:
                print(f"kubesim: error: {error}", file=sys.stderr)
                await server.close()
                return 2
        tasks.append(asyncio.create_task(sim.run()))
    done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    status = 0
    for task in tasks:
        if task in done and not task.cancelled() and task.exception() is not None:
            logging.getLogger("kubesim").error("the simulation stopped", exc_info=task.exception())
            status = 1
        task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await asyncio.gather(*tasks, return_exceptions=True)
    await metrics_stack.aclose()
    await server.close()
    print("kubesim stopped", flush=True)
    return status


async def _keep_heap_frozen(every: float = 10.0) -> None:
    """Move what survived the last ``every`` seconds out of the garbage collector's reach. A fleet of
    thousands of objects and a long watch history make a heap of millions of objects, and each full
    collection over it stopped the API (and every watch) for seconds — stalls no real API server has.
    The store holds plain JSON-like data without cycles, so nothing frozen is garbage that would leak."""
    while True:
        await asyncio.sleep(every)
        gc.freeze()


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["bench"]:  # the benchmark has its own options (kubesim/bench.py)
        from kubesim.bench import main_bench

        return main_bench(argv[1:])
    args = parser().parse_args(argv)
    if args.command == "scenarios":
        return list_scenarios()
    return asyncio.run(serve(args))


if __name__ == "__main__":
    sys.exit(main())
