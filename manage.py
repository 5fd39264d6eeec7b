#!/usr/bin/env python
"""Django's command-line utility for rollouts-ui.

Commands may be spelled with hyphens (``export-history``, ``import-history``, ``analysis-dryrun``): a
command's name is its module's name, and a module named with hyphens cannot be imported, so the modules
use underscores and ``command_alias`` turns the hyphens of the command word into underscores before
Django dispatches. Only the command word changes; options and arguments pass through untouched.

The commands an operator runs against the database first (``migrate`` above all) check that it answers,
as the web server, watcher and worker do: one line naming ``DATABASE_URL`` within seconds, not a 20 s wait
for the connection pool and a driver traceback.
"""

from __future__ import annotations

import os
import sys


def command_alias(argv: list[str]) -> list[str]:
    """``[prog, "export-history", …]`` → ``[prog, "export_history", …]``; anything else unchanged."""
    if len(argv) > 1 and "-" in argv[1] and not argv[1].startswith("-"):
        return [argv[0], argv[1].replace("-", "_"), *argv[2:]]
    if len(argv) > 2 and argv[1] == "help" and "-" in argv[2] and not argv[2].startswith("-"):
        return [argv[0], "help", argv[2].replace("-", "_"), *argv[3:]]
    return list(argv)


DATABASE_COMMANDS = frozenset({
    "migrate", "showmigrations", "createsuperuser", "changepassword", "clearsessions",
    "flagger_gate_token", "import_history", "export_history",
})


def needs_database(argv: list[str]) -> bool:
    """Whether ``argv`` (after ``command_alias``) runs a database command (not just its ``--help``)."""
    return len(argv) > 1 and argv[1] in DATABASE_COMMANDS and not {"-h", "--help"} & set(argv[2:])


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "rollouts_ui.settings")
    from django.core.management import execute_from_command_line

    argv = command_alias(sys.argv)
    if needs_database(argv):
        import django

        from rollouts_ui.settings_check import require_database

        django.setup()
        require_database()
    execute_from_command_line(argv)


if __name__ == "__main__":
    main()
