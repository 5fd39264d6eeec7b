"""``manage.py postmortem CLUSTER/NAMESPACE/NAME [--release HASH] [--format md|json] [--tz ZONE]``.

Prints one release's post-mortem (the newest release when ``--release`` is not given) from the recorded
history: the same document the release page's "Post-mortem" links serve (``dashboard.domain.postmortem``).
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from dashboard.domain.postmortem import BadTimeZone, time_zone, to_markdown


class Command(BaseCommand):
    help = "Print a release's post-mortem (Markdown or JSON) from the recorded history."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("rollout", metavar="CLUSTER/NAMESPACE/NAME")
        parser.add_argument("--release", metavar="HASH", help="the release's pod hash (default: the newest)")
        parser.add_argument("--format", choices=("md", "json"), default="md")
        parser.add_argument("--tz", default="UTC", help="the reader's IANA time zone, e.g. Europe/Berlin")
        parser.add_argument(
            "--base-url",
            default="",
            help="where the dashboard is served, for the links (e.g. https://rollouts.example.com)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        from dashboard.web.data import postmortem_sync, split_key

        key = str(options["rollout"])
        if split_key(key) is None:
            raise CommandError(f"rollout: {key!r} is not CLUSTER/NAMESPACE/NAME")
        try:
            zone = time_zone(options["tz"])
        except BadTimeZone as error:
            raise CommandError(f"--tz: {error}") from None
        document = postmortem_sync(key, options["release"], zone=zone, base_url=options["base_url"])
        if document is None:
            which = f"release {options['release']}" if options["release"] else "no release"
            raise CommandError(
                f"{which} of {key} is recorded"
                if not options["release"]
                else f"{which} of {key} is not recorded"
            )
        if options["format"] == "json":
            self.stdout.write(json.dumps(document, indent=2, default=str))
        else:
            self.stdout.write(to_markdown(document), ending="")
