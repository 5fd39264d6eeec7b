"""``manage.py demo``: the one-command first look (see ``dashboard.demo``)."""

from __future__ import annotations

import asyncio
import importlib
import socket
from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from dashboard.demo import (
    DEFAULT_SCENARIOS,
    DemoError,
    DemoOptions,
    check_scenarios,
    demo_legend,
    demo_login,
    demo_policy,
    demo_prometheus,
    fail_the_cluster,
    plan_scenarios,
    quiet_request_logs,
    role_logins,
    serve,
    stop_on_sigterm,
    wire_flagger_gates,
)


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise CommandError(f"--speed {text!r} is not a number") from None
    if not 0 < value <= 1000:
        raise CommandError(f"--speed {value} must be above 0 and at most 1000")
    return value


class Command(BaseCommand):
    help = "Run the simulator, the watcher and the web server in one process (embedded mode)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--port", type=int, default=8000, help="web port on 127.0.0.1 (default 8000)")
        parser.add_argument(
            "--scenario",
            action="append",
            dest="scenarios",
            metavar="NAME",
            help="a kubesim scenario or scenario file (repeatable); default: every built-in scenario: "
            + ", ".join(DEFAULT_SCENARIOS),
        )
        parser.add_argument(
            "--speed", type=_positive, default=1.0, help="simulated seconds per real second (default 1)"
        )
        parser.add_argument("--seed", type=int, default=0, help="random seed of the simulation")

    def handle(self, *args: Any, **options: Any) -> None:
        port = options["port"]
        if not 0 < port < 65536:
            raise CommandError(f"--port {port} is not a TCP port")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                raise CommandError(f"port {port} is already in use; choose another with --port")
        from kubesim.prometheus import find_prometheus

        scenarios, note = plan_scenarios(
            options["scenarios"] or DEFAULT_SCENARIOS,
            explicit=bool(options["scenarios"]),
            have_prometheus=find_prometheus() is not None,
        )
        if note:
            self.stdout.write(self.style.WARNING(note))
        demo = DemoOptions(
            port=port,
            scenarios=tuple(scenarios),
            speed=options["speed"],
            seed=options["seed"],
        )
        try:
            check_scenarios(demo.scenarios)
        except DemoError as error:
            raise CommandError(str(error)) from None
        call_command("migrate", verbosity=0, interactive=False)
        username, password = demo_login()
        others = role_logins()
        wire_flagger_gates(demo)
        policy = demo_policy()
        from django.conf import settings

        settings.DEMO_LEGEND = demo_legend(demo.scenarios)  # the fleet page's legend (demo mode only)

        from kubesim.testing import running_kubesim

        self.stdout.write(f"Starting kubesim with {', '.join(demo.scenarios)} at speed {demo.speed}…")
        with (
            stop_on_sigterm(),
            running_kubesim(demo.scenarios, speed=demo.speed, seed=demo.seed) as sim,
            demo_prometheus(sim, demo.scenarios, demo.speed, self.stdout.write),
        ):
            fail_the_cluster(sim, lambda text: self.stderr.write(self.style.ERROR(text)))

            def announce(url: str) -> None:
                self.stdout.write(self.style.SUCCESS(f"\nrollouts-ui is running at {url}"))
                self.stdout.write(f"Sign in as  {username}  with password  {password}  (shown once)")
                self.stdout.write("  (demo may do everything, including the Django admin at /admin/)")
                self.stdout.write("One user per built-in role (passwords shown once):")
                for name, secret, role, may in others:
                    self.stdout.write(f"  {name:<9} password  {secret}  role {role}: {may}")
                self.stdout.write("The fleet page's legend says which rollout plays which scenario.")
                if policy:
                    self.stdout.write(f"Guard rails (approvals, a freeze to switch on) are in {policy}")
                self.stdout.write("Press Ctrl-C to stop.\n")
                self.stdout.flush()

            # Loaded here, outside the event loop: the ASGI module may check the database at import.
            importlib.import_module("rollouts_ui.asgi")
            quiet_request_logs(settings.LOG_LEVEL)  # after the import: django.setup() reconfigures logging
            try:
                asyncio.run(serve(demo, str(sim.kubeconfig), announce))
            except KeyboardInterrupt:
                pass  # Ctrl-C; when SIGINT was ignored (started in the background) uvicorn still stops
            except DemoError as error:
                raise CommandError(str(error)) from None
        self.stdout.write("Stopped.")
