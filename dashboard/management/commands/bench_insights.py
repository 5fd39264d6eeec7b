"""``manage.py bench_insights [--releases 100000] [--days 30 365]``: time each insights query.

With ``--releases N`` it first tops the history up to N releases (``seed_history``). Then, for each period,
it runs every figure's query ``--repeat`` times and prints the best and the median wall time, for all
rollouts and for one team label. Prints figures; asserts nothing (speed is measured, never tested).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandParser

from dashboard.history import insights as ins
from dashboard.history.models import Release
from dashboard.history.seed import seed_history


class Command(BaseCommand):
    help = "Time each insights query on the recorded history (seeding it first with --releases)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--releases", type=int, default=0, help="top the history up to this many releases"
        )
        parser.add_argument("--days", type=int, nargs="+", default=[30, 365])
        parser.add_argument("--repeat", type=int, default=5)

    def handle(self, *args: Any, **options: Any) -> None:
        have = Release.objects.count()
        if options["releases"] > have:
            began = time.perf_counter()
            seeded = seed_history(options["releases"] - have)
            self.stdout.write(
                f"seeded {seeded.releases} releases, {seeded.events} events "
                f"in {time.perf_counter() - began:.1f} s"
            )
        self.stdout.write(f"history: {Release.objects.count()} releases")
        user = User(username="bench", is_superuser=True, is_active=True)
        now = datetime.now(UTC)
        for days in options["days"]:
            for label in (None, ("team", "team-03")):
                filters = ins.Filters(
                    start=now - timedelta(days=days),
                    end=now,
                    bucket="day" if days <= 62 else "week",
                    label=label,
                )
                self._time(filters, user, options["repeat"], days, label)

    def _time(
        self, filters: ins.Filters, user: Any, repeat: int, days: int, label: tuple[str, str] | None
    ) -> None:
        scope = ins._Scope.of(filters, user)
        queries: dict[str, Callable[[], Any]] = {
            "deployments + change failure rate": lambda: ins.release_figures(scope),
            "lead time": lambda: ins.lead_time(scope),
            "time to restore": lambda: ins.time_to_restore(scope),
            "time per step": lambda: ins.step_times(scope),
            "pauses": lambda: ins.pause_times(scope),
            "findings": lambda: ins.finding_counts(scope),
            "actors": lambda: ins.actor_counts(filters, user),
            "whole document": lambda: ins.insights(filters, user),
        }
        where = f"last {days} days" + (f", label {label[0]}={label[1]}" if label else ", all rollouts")
        self.stdout.write(f"\n{where}")
        for name, query in queries.items():
            times = []
            for _ in range(repeat):
                began = time.perf_counter()
                query()
                times.append(time.perf_counter() - began)
            self.stdout.write(
                f"  {name:36s} best {min(times) * 1000:7.1f} ms   median "
                f"{statistics.median(times) * 1000:7.1f} ms"
            )
