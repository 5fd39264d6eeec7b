"""``manage.py bench_ab --reference DIR``: this tree's watcher against another tree's, through one churn
(``dashboard.bench.ab``)."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from dashboard.bench.ab import run_ab
from dashboard.bench.processes import BenchError


class Command(BaseCommand):
    help = (
        "Two watchers, this tree's and a reference tree's (e.g. a `git worktree` of the last release), "
        "watch one simulator through the same churn; prints each one's CPU and their ratio per round"
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--reference", required=True, metavar="DIR", help="the other checkout")
        parser.add_argument("--rollouts", type=int, default=10_000)
        parser.add_argument("--namespaces", type=int, default=100)
        parser.add_argument("--churn", type=float, default=18.0, help="new images written per second")
        parser.add_argument("--seconds", type=float, default=60.0, help="how long each round's churn lasts")
        parser.add_argument("--rounds", type=int, default=3)
        parser.add_argument(
            "--warmup", type=float, default=20.0, help="seconds between the fleet on both buses and the churn"
        )
        parser.add_argument("--json", metavar="FILE", help="also write the rounds to FILE")

    def handle(self, *args: Any, **options: Any) -> None:
        if not settings.REDIS_URL:
            raise CommandError("the A/B needs REDIS_URL (each watcher publishes to Redis)")
        database_url = str(settings.DATABASE_URL or "")
        if not database_url.startswith(("postgres://", "postgresql://")):
            raise CommandError("the A/B records each watcher's history into PostgreSQL: set DATABASE_URL")
        for name, low, high in (
            ("rollouts", 1, 50_000),
            ("namespaces", 1, 1000),
            ("churn", 0.1, 100.0),
            ("seconds", 1.0, 600.0),
            ("rounds", 1, 20),
            ("warmup", 0.0, 300.0),
        ):
            if not low <= options[name] <= high:
                raise CommandError(f"--{name} must be between {low} and {high}, not {options[name]}")
        try:
            rounds = run_ab(
                Path(options["reference"]).resolve(),
                rollouts=options["rollouts"],
                namespaces=options["namespaces"],
                churn_rate=options["churn"],
                seconds=options["seconds"],
                rounds=options["rounds"],
                warmup=options["warmup"],
                database_url=database_url,
                redis_url=settings.REDIS_URL,
                log=lambda line: self.stdout.write(line),
            )
        except BenchError as error:
            raise CommandError(str(error)) from error
        ratios = [r.ratio for r in rounds]
        self.stdout.write(
            f"this tree's watcher CPU / the reference's: median {statistics.median(ratios):.3f} "
            f"(rounds {', '.join(f'{r:.3f}' for r in ratios)})"
        )
        if options["json"]:
            with open(options["json"], "w", encoding="utf-8") as handle:
                json.dump([r.as_dict() for r in rounds], handle, indent=2)
