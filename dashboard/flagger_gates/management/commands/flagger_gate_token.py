"""``manage.py flagger_gate_token CLUSTER [--namespace GLOB] [--canary GLOB]``: issue a gate token.

Prints the token once (only its digest is stored); put it in the Canary's gate webhooks' ``metadata``
as ``token``. Revoke a token by deleting it in the admin (Flagger gates → Gate tokens).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from dashboard.flagger_gates.services import issue_token


class Command(BaseCommand):
    help = "Issue a token that lets the gate webhooks of the Canaries in a scope call this server."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("cluster", help="the cluster name, as in CLUSTERS and the gate URL")
        parser.add_argument("--namespace", default="*", help="namespace glob (default *)")
        parser.add_argument("--canary", default="*", help="Canary name glob (default *)")
        parser.add_argument("--label", default="", help="a note: whose hooks use it")

    def handle(self, *args: Any, **options: Any) -> None:
        row, token = issue_token(
            options["cluster"],
            namespace=options["namespace"],
            canary=options["canary"],
            label=options["label"],
        )
        self.stderr.write(f"issued {row}; it is shown once, store it now:")
        self.stdout.write(token)
