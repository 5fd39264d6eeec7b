"""``manage.py watch``: the watcher of one cluster (see ``dashboard.kube.watcher``)."""

from __future__ import annotations

import asyncio
import logging
import re
import signal
import sys
from typing import Any

from django.core.checks import Tags
from django.core.checks.registry import registry
from django.core.management.base import BaseCommand, CommandError, CommandParser

from dashboard.kube.connection import ConfigError, KubeApi
from dashboard.kube.recording import RecordingWriter
from dashboard.kube.service import history_recorder, lease_for, live_bus, pipeline_settings
from dashboard.kube.watcher import Watcher, describe_stats
from dashboard.observability.memory import return_large_blocks_when_freed

log = logging.getLogger("dashboard.watch")
RECORDER_SWITCH_INTERVAL = 0.0005  # seconds
CLUSTER_NAME = re.compile(r"^[a-z0-9]([a-z0-9._-]{0,61}[a-z0-9])?$")


class Command(BaseCommand):
    help = "Watch one cluster's rollouts and publish their views and history."
    # Every system check but the URLconf's, which imports every view: the watcher serves none, and the
    # import would cost each start ~0.08 s of CPU.
    requires_system_checks = sorted(registry.tags_available() - {Tags.urls})

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--kubeconfig",
            help="kubeconfig file (default: KUBECONFIG, ~/.kube/config, else the in-cluster service account)",
        )
        parser.add_argument("--context", help="kubeconfig context (default: the current context)")
        parser.add_argument("--cluster", default="default", help="the cluster's name in every key and view")
        parser.add_argument(
            "--namespace",
            action="append",
            dest="namespaces",
            metavar="NS",
            help="watch only this namespace (repeatable; default: all)",
        )
        parser.add_argument("--record", metavar="FILE.jsonl", help="also write every watch event to FILE")
        parser.add_argument("--no-history", action="store_true", help="do not record history in the database")
        parser.add_argument(
            "--metrics-port", type=int, default=0, metavar="PORT",
            help="serve this process's Prometheus /metrics (and /healthz) on PORT (default: off)",
        )
        parser.add_argument("--metrics-address", default="0.0.0.0", help="address of --metrics-port")

    def handle(self, *args: Any, **options: Any) -> None:
        cluster = options["cluster"]
        if not CLUSTER_NAME.match(cluster):
            raise CommandError(
                f"--cluster {cluster!r}: use lowercase letters, digits, '.', '_' or '-' "
                "(at most 63, starting and ending with a letter or digit)"
            )
        if not options["no_history"]:
            from rollouts_ui.settings_check import require_database

            require_database()  # the history needs it: say so now, not after the first list
        if options["metrics_port"]:
            from dashboard.observability.metrics import start_metrics_server

            try:
                start_metrics_server(options["metrics_port"], options["metrics_address"])
            except OSError as error:
                raise CommandError(f"--metrics-port {options['metrics_port']}: {error.strerror}") from None
        # The history recorder's thread is CPU-bound (the ORM): at Python's default 5 ms switch interval,
        # every one of the event loop's many short I/O waits could cost it up to 5 ms to get the GIL back.
        sys.setswitchinterval(RECORDER_SWITCH_INTERVAL)
        return_large_blocks_when_freed()  # list pages and publish batches, not kept resident once freed
        try:
            with asyncio.Runner(loop_factory=loop_factory()) as runner:
                runner.run(self._run(cluster, options))
        except ConfigError as error:
            raise CommandError(str(error)) from None
        except OSError as error:
            raise CommandError(f"--record {options['record']}: {error.strerror or error}") from None

    async def _run(self, cluster: str, options: dict[str, Any]) -> None:
        api = await KubeApi.connect(options["kubeconfig"], options["context"])
        record_to = RecordingWriter(options["record"]) if options["record"] else None
        recorder = None if options["no_history"] else history_recorder()
        watcher = Watcher(
            cluster,
            bus=live_bus(),
            lease=lease_for(cluster),
            recorder=recorder,
            record_to=record_to,
            settings=pipeline_settings(),
            namespaces=options["namespaces"],
        )
        log.info(
            "watching %s as cluster %r (%s)",
            api.host,
            cluster,
            ", ".join(options["namespaces"]) if options["namespaces"] else "all namespaces",
        )
        task = asyncio.create_task(watcher.run(api))
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, task.cancel)
        reporter = asyncio.create_task(_report(watcher))
        try:
            await task
        except asyncio.CancelledError:
            log.info("stopping: %s", describe_stats(watcher))
        finally:
            reporter.cancel()
            if record_to is not None:
                record_to.close()
            if recorder is not None:
                await asyncio.to_thread(recorder.stop)


def loop_factory() -> Any:
    """uvloop when installed (it comes with uvicorn[standard]): its event loop is libuv, and each turn of
    it costs the watcher less CPU and fewer releases of the GIL than asyncio's, which the history
    recorder's thread would take every time."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - installed with the web server's extras
        return None
    return uvloop.new_event_loop


async def _report(watcher: Watcher, every: float = 60.0) -> None:
    while True:
        await asyncio.sleep(every)
        log.info("%s: %s (leader=%s)", watcher.cluster, describe_stats(watcher), watcher.leader)
