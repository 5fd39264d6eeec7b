"""``manage.py bench``: the fleet-scale benchmark of the whole pipeline (see ``dashboard.bench``).

Prints a summary and the targets met or missed; ``--json`` and ``--html`` write the full report. Needs
``REDIS_URL``; uses ``DATABASE_URL``'s PostgreSQL server for a throwaway database (SQLite otherwise).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from dashboard.bench.processes import BenchError
from dashboard.bench.run import LAYOUTS, BenchConfig, run_bench


class Command(BaseCommand):
    help = "Benchmark the whole pipeline: kubesim fleet → watcher → Redis → ASGI → websocket clients."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--rollouts", type=int, default=10_000)
        parser.add_argument("--namespaces", type=int, default=100)
        parser.add_argument("--churn", type=float, default=60.0, help="new images written per second")
        parser.add_argument("--clients", type=int, default=200, help="websocket clients (fleet pages)")
        parser.add_argument("--seconds", type=float, default=60.0, help="how long the churn lasts")
        parser.add_argument("--layout", choices=LAYOUTS, default="single")
        parser.add_argument(
            "--clusters",
            type=int,
            default=0,
            help="simulated clusters for --layout clusters (the rollouts are split across them; default 2)",
        )
        parser.add_argument("--json", metavar="FILE", help="write the full report as JSON")
        parser.add_argument("--html", metavar="FILE", help="write the report as HTML with charts")
        parser.add_argument("--no-browser", action="store_true", help="skip the Chromium first-render figure")
        parser.add_argument("--no-limits", action="store_true", help="skip the raw Redis / fan-out limits")
        parser.add_argument(
            "--history-releases",
            type=int,
            default=10_000,
            help="releases seeded on one rollout for the history page's figure (0 skips it; PostgreSQL only)",
        )
        parser.add_argument(
            "--no-restart", action="store_true", help="skip restarting the web server under the open pages"
        )
        parser.add_argument("--profile", metavar="DIR", help="run watchers and web servers under py-spy")
        parser.add_argument("--keep-logs", metavar="DIR", help="copy every process's log here")
        parser.add_argument(
            "--yield-harness",
            action="store_true",
            help="run the simulators and the emulated browsers at a lower priority (nice 10): the pipeline "
            "gets a core first, as where they are other machines",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if not settings.REDIS_URL:
            raise CommandError("bench needs REDIS_URL (every process of the run shares one Redis)")
        config = BenchConfig(
            rollouts=options["rollouts"],
            namespaces=options["namespaces"],
            churn=options["churn"],
            clients=options["clients"],
            seconds=options["seconds"],
            layout=options["layout"],
            clusters=options["clusters"],
            redis_url=str(settings.REDIS_URL),
            database_url=str(settings.DATABASE_URL or ""),
            browser=not options["no_browser"],
            limits=not options["no_limits"],
            history_releases=options["history_releases"],
            restart=not options["no_restart"],
            profile_dir=Path(options["profile"]) if options["profile"] else None,
            keep_dir=Path(options["keep_logs"]) if options["keep_logs"] else None,
            yield_harness=options["yield_harness"],
        )
        config.argv = sys.argv[2:]  # type: ignore[attr-defined]  # the report names its command
        if config.profile_dir is not None and not Path(sys.executable).with_name("py-spy").exists():
            raise CommandError("--profile needs py-spy in this environment (pip install py-spy)")
        from dashboard.bench.report import summary_lines, write_html, write_json

        try:
            result = run_bench(config, log=lambda line: self.stderr.write(line))
        except BenchError as error:
            raise CommandError(str(error)) from None
        for line in summary_lines(result):
            self.stdout.write(line)
        if options["json"]:
            write_json(result, Path(options["json"]))
        if options["html"]:
            write_html(result, Path(options["html"]))
