"""The benchmark's processes: the load generators can yield the cores to the pipeline."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from dashboard.bench.processes import YIELD_NICENESS, Processes, rss_mb


def test_yielding_roles_start_at_a_lower_priority_and_the_pipeline_at_ours(tmp_path: Path) -> None:
    processes = Processes(tmp_path, yielding=frozenset({"kubesim", "clients"}))
    sleep = [sys.executable, "-c", "import time; time.sleep(30)"]
    simulator = processes.start("sim-a", "kubesim", sleep, dict(os.environ))
    watcher = processes.start("watcher-sim-a", "watcher", sleep, dict(os.environ))
    try:
        ours = os.getpriority(os.PRIO_PROCESS, 0)
        wanted = min(19, ours + YIELD_NICENESS)
        for _ in range(200):  # ``nice`` lowers its own priority, then becomes the program (2 s at most)
            if os.getpriority(os.PRIO_PROCESS, simulator.pid()) == wanted:
                break
            time.sleep(0.01)
        assert os.getpriority(os.PRIO_PROCESS, simulator.pid()) == wanted
        assert os.getpriority(os.PRIO_PROCESS, watcher.pid()) == ours
    finally:
        for process in (watcher, simulator):
            processes.stop(process, timeout=5)


def test_stopping_a_process_reads_the_memory_its_own_stop_takes(tmp_path: Path) -> None:
    processes = Processes(tmp_path)
    # On SIGTERM it takes 64 MB more, as a watcher's handoff does, and exits half a second later.
    program = (
        "import signal, sys, time\n"
        "def stop(*_):\n"
        "    held = b'x' * (64 << 20)  # written: its pages are resident\n"
        "    time.sleep(0.5)\n"
        "    sys.exit(0)\n"
        "signal.signal(signal.SIGTERM, stop)\n"
        "print('ready', flush=True)\n"
        "time.sleep(30)\n"
    )
    process = processes.start("watcher-sim-a", "watcher", [sys.executable, "-c", program], dict(os.environ))
    for _ in range(500):  # its handler is in place once it says so (5 s at most)
        if b"ready" in process.log_path.read_bytes():
            break
        time.sleep(0.01)
    before = rss_mb(process.pid())[1]
    peak = processes.stop(process, timeout=5)
    assert peak >= before + 60
    assert processes.stop(process) == 0.0, "a process that is not running has no stop to measure"
