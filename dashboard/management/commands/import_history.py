"""``manage.py import-history FILE [--dry-run]``: read back an ``export-history`` file (``-``: stdin).

Idempotent (what exists is kept, what is missing is added) and all or nothing: a bad line stops the
import with its line number and nothing is written. ``--dry-run`` checks the file and reports the counts
without writing.
"""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from dashboard.history.jsonl import HistoryFormatError, import_lines


class Command(BaseCommand):
    help = "Import releases and timeline events from an export-history JSON Lines file."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", metavar="FILE", help="the export (JSON Lines); '-' reads standard input")
        parser.add_argument("--dry-run", action="store_true", help="check and count, write nothing")

    def handle(self, *args: Any, **options: Any) -> None:
        path = options["file"]
        try:
            stream = sys.stdin if path == "-" else open(path, encoding="utf-8")  # noqa: SIM115 - closed below
        except OSError as error:
            raise CommandError(f"{path}: {error.strerror}") from None
        try:
            result = import_lines(stream, dry_run=options["dry_run"])
        except HistoryFormatError as error:
            raise CommandError(f"{path}: {error}; nothing was imported") from None
        except UnicodeDecodeError:
            raise CommandError(f"{path}: not UTF-8 text; nothing was imported") from None
        finally:
            if stream is not sys.stdin:
                stream.close()
        verb = "would import" if options["dry_run"] else "imported"
        self.stdout.write(
            f"{verb} {result.releases_created} new releases ({result.releases_existing} already there) and "
            f"{result.events_created} new timeline events ({result.events_existing} already there)"
        )
