"""``manage.py bench_watch``: the watcher's throughput, latency and memory (see ``dashboard.bench.watch``)."""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from dashboard.bench.watch import run_bench


class Command(BaseCommand):
    help = "Benchmark the watcher against a kubesim fleet: changes/s, write-to-publish latency, memory."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--rollouts", type=int, default=5000)
        parser.add_argument("--rate", type=float, default=200.0, help="changes/s for the latency phase")
        parser.add_argument("--seconds", type=float, default=15.0, help="length of the latency phase")
        parser.add_argument(
            "--burst-churn", type=float, default=80.0, help="new releases/s during the throughput phase"
        )
        parser.add_argument(
            "--burst-seconds",
            type=float,
            default=4.0,
            help="seconds the watcher is stopped while the backlog builds (at most 5: the lease TTL is 10 s)",
        )
        parser.add_argument("--history", action="store_true", help="also record history (needs DATABASE_URL)")
        parser.add_argument("--json", metavar="FILE", help="also write the figures to FILE")

    def handle(self, *args: Any, **options: Any) -> None:
        if not settings.REDIS_URL:
            raise CommandError("the benchmark needs REDIS_URL (the watcher publishes to Redis)")
        for name in ("rollouts", "rate", "seconds", "burst_churn", "burst_seconds"):
            if options[name] <= 0:
                flag = name.replace("_", "-")
                raise CommandError(f"--{flag} must be positive, not {options[name]}")
        if options["seconds"] > 600:
            raise CommandError("--seconds is at most 600 (the benchmark is bounded)")
        if options["burst_seconds"] > 5:
            raise CommandError("--burst-seconds is at most 5 (a stopped watcher must keep its 10 s lease)")
        result = run_bench(
            rollouts=options["rollouts"],
            rate=options["rate"],
            seconds=options["seconds"],
            redis_url=settings.REDIS_URL,
            history=options["history"],
            burst_churn=options["burst_churn"],
            burst_seconds=options["burst_seconds"],
            log=lambda line: self.stderr.write(line),
        )
        figures = result.as_dict()
        for key, value in figures.items():
            self.stdout.write(f"{key:28} {value}")
        if options["json"]:
            with open(options["json"], "w", encoding="utf-8") as handle:
                json.dump(figures, handle, indent=2)
