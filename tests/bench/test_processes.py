"""The benchmark's processes: the load generators can yield the cores to the pipeline."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from dashboard.bench.processes import YIELD_NICENESS, Processes


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
