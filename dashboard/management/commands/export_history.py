"""``manage.py export-history [--output FILE] [--cluster NAME] [--since DATE]``: history as JSON Lines.

For backups and for moving an installation; ``import-history`` reads the file back. The format is in
``dashboard.history.jsonl``. Without ``--output`` the lines go to standard output.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from typing import Any, TextIO

from django.core.management.base import BaseCommand, CommandError, CommandParser

from dashboard.history.jsonl import export_lines


class Command(BaseCommand):
    help = "Export releases and their timeline events as JSON Lines (see import-history)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--output", "-o", metavar="FILE", help="write here (default: standard output)")
        parser.add_argument("--cluster", help="only this cluster's releases")
        parser.add_argument(
            "--since", metavar="DATE", help="only releases started at or after (RFC 3339 or YYYY-MM-DD)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        since = _parse_since(options["since"]) if options["since"] else None
        output: TextIO
        try:
            output = open(options["output"], "w", encoding="utf-8") if options["output"] else sys.stdout  # noqa: SIM115
        except OSError as error:
            raise CommandError(f"--output {options['output']}: {error.strerror}") from None
        count = -1  # the header is not a release
        try:
            for line in export_lines(cluster=options["cluster"], since=since):
                output.write(line + "\n")
                count += 1
        finally:
            if output is not sys.stdout:
                output.close()
        if options["output"]:
            self.stderr.write(f"exported {count} releases to {options['output']}")


def _parse_since(value: str) -> datetime:
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise CommandError(
            f"--since {value!r}: use RFC 3339 (2026-11-29T10:00:00Z) or a date (2026-11-29)"
        ) from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
