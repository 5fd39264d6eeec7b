"""``manage.py bench_watch``: the watcher's throughput, latency and memory (see ``dashboard.bench.watch``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from dashboard.bench.cold import run_cold_start
from dashboard.bench.watch import run_bench


class Command(BaseCommand):
    help = (
        "Benchmark the watcher against a kubesim fleet: changes/s, write-to-publish latency, memory; "
        "or, with --cold-start, its cold start."
    )

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
        parser.add_argument(
            "--history",
            action="store_true",
            help="also record history into DATABASE_URL (with --cold-start too: a fresh database is the "
            "worst case)",
        )
        parser.add_argument(
            "--cold-start",
            action="store_true",
            help="only the cold start: time until the whole fleet is on the bus, and the watcher's memory",
        )
        parser.add_argument(
            "--kubeconfig",
            metavar="FILE",
            help="with --cold-start: a cluster already serving --rollouts rollouts (no simulator is seeded)",
        )
        parser.add_argument(
            "--settle", type=float, default=15.0, help="with --cold-start: seconds before the settled memory"
        )
        parser.add_argument(
            "--restart-releases",
            type=int,
            default=100,
            help="with --cold-start (kubesim): new images rolled out while the watcher is away before its "
            "restart is timed (0: a restart with nothing changed)",
        )
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
        if options["kubeconfig"] and not options["cold_start"]:
            raise CommandError("--kubeconfig is only for --cold-start")
        if options["cold_start"]:
            if not 0 <= options["settle"] <= 300:
                raise CommandError("--settle is between 0 and 300 seconds")
            if not 0 <= options["restart_releases"] <= options["rollouts"]:
                raise CommandError("--restart-releases is between 0 and --rollouts")
            cold = run_cold_start(
                rollouts=options["rollouts"],
                redis_url=settings.REDIS_URL,
                kubeconfig=Path(options["kubeconfig"]) if options["kubeconfig"] else None,
                settle=options["settle"],
                restart_releases=options["restart_releases"],
                history=options["history"],
                log=lambda line: self.stderr.write(line),
            )
            self._print(cold.as_dict(), options["json"])
            return
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
        self._print(result.as_dict(), options["json"])

    def _print(self, figures: dict[str, Any], path: str | None) -> None:
        for key, value in figures.items():
            self.stdout.write(f"{key:28} {value}")
        if path:
            with open(path, "w", encoding="utf-8") as handle:
                json.dump(figures, handle, indent=2)
