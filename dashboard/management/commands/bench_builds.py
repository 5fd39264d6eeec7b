"""``manage.py bench_builds``: CPU per view build, the watcher's unit of work (``dashboard.bench.builds``)."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from dashboard import compiled
from dashboard.bench.builds import run_builds


class Command(BaseCommand):
    help = (
        "CPU per view build (domain model, findings, action bar, digest, timeline), a fleet mid-release, "
        "and each part of a publish's work alone"
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--rollouts", type=int, default=300, help="rollouts in the fleet (1-5000)")
        parser.add_argument("--rounds", type=int, default=7, help="rounds over the fleet; the best counts")
        parser.add_argument("--json", metavar="FILE", help="also write the figures to FILE")

    def handle(self, *args: Any, **options: Any) -> None:
        if not 1 <= options["rollouts"] <= 5000:
            raise CommandError(f"--rollouts must be between 1 and 5000, not {options['rollouts']}")
        if not 1 <= options["rounds"] <= 100:
            raise CommandError(f"--rounds must be between 1 and 100, not {options['rounds']}")
        figures = run_builds(options["rollouts"], options["rounds"]).as_dict()
        figures["domain"] = compiled.running()
        for key, value in figures.items():
            if key != "parts_us":
                self.stdout.write(f"{key:18} {value}")
        self.stdout.write("each part alone, µs per rollout:")
        for name, value in figures["parts_us"].items():
            self.stdout.write(f"  {name:20} {value}")
        if options["json"]:
            with open(options["json"], "w", encoding="utf-8") as handle:
                json.dump(figures, handle, indent=2)
