"""``manage.py seed_history --releases 100000``: a generated release history (``dashboard.history.seed``)."""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from dashboard.history.seed import seed_history


class Command(BaseCommand):
    help = "Insert a generated release history (PostgreSQL) for the insights benchmark."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--releases", type=int, default=100_000)
        parser.add_argument("--rollouts", type=int, default=600)
        parser.add_argument("--days", type=int, default=365)
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument(
            "--rollout",
            metavar="CLUSTER/NAMESPACE/NAME",
            help="put every release on this one rollout (a long history; --rollouts is then ignored)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        rollout = None
        if options["rollout"]:
            parts = options["rollout"].split("/")
            if len(parts) != 3 or not all(parts):
                raise CommandError(f"--rollout must be CLUSTER/NAMESPACE/NAME, not {options['rollout']!r}")
            rollout = (parts[0], parts[1], parts[2])
        began = time.perf_counter()
        seeded = seed_history(
            options["releases"],
            rollouts=options["rollouts"],
            days=options["days"],
            seed=options["seed"],
            rollout=rollout,
        )
        self.stdout.write(
            f"seeded {seeded.releases} releases, {seeded.events} events, {seeded.commits} commits, "
            f"{seeded.actions} actions in {time.perf_counter() - began:.1f} s"
        )
