"""``manage.py bench_web``: the fleet page's speed by fleet size and the live update delay (see
``dashboard.bench.web``). Prints figures; asserts none. Needs ``REDIS_URL``.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from dashboard.bench.processes import BenchError
from dashboard.bench.web import run_web_bench


class Command(BaseCommand):
    help = "Benchmark the web layer: fleet TTFB, rows and first render by fleet size; live update delay."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--rollouts", default="5000,10000", help="fleet sizes, comma-separated")
        parser.add_argument("--no-browser", action="store_true", help="skip the browser first render")
        parser.add_argument("--pages", type=int, default=100)
        parser.add_argument("--changes", type=int, default=200)
        parser.add_argument("--port", type=int, default=0)

    def handle(self, *args: Any, **options: Any) -> None:
        if not settings.REDIS_URL:
            raise CommandError("bench_web needs REDIS_URL (the server runs in another process)")
        from kubesim.testing import free_port

        try:
            sizes = sorted({int(n) for n in str(options["rollouts"]).split(",") if n.strip()})
        except ValueError:
            given = options["rollouts"]
            raise CommandError(f"--rollouts takes comma-separated counts, got {given!r}") from None
        if not sizes or sizes[0] < 1:
            raise CommandError("--rollouts needs at least one positive count")
        try:
            run_web_bench(
                sizes,
                pages=options["pages"],
                changes=options["changes"],
                port=options["port"] or free_port(),
                browser=not options["no_browser"],
                write=self.stdout.write,
            )
        except BenchError as error:
            raise CommandError(str(error)) from None
