"""``manage.py replay FILE.jsonl [--speed X]``: feed a watch recording through the watcher's pipeline."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from dashboard.kube.recording import RecordingError, read_recording
from dashboard.kube.service import history_recorder, live_bus, pipeline_settings
from dashboard.kube.watcher import Watcher
from dashboard.live.lease import MemoryLease


class Command(BaseCommand):
    help = "Replay a watch recording (.jsonl) into the live bus and the history, as it happened."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("recording", metavar="FILE.jsonl")
        parser.add_argument(
            "--speed",
            type=float,
            default=0.0,
            help="1 = real time, 10 = ten times faster, 0 (default) = as fast as possible",
        )
        parser.add_argument("--no-history", action="store_true", help="do not record history in the database")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["speed"] < 0:
            raise CommandError(f"--speed must be 0 or more, not {options['speed']}")
        try:
            events = read_recording(options["recording"])
            first = next(events, None)
        except RecordingError as error:
            raise CommandError(str(error)) from None
        if first is None:
            raise CommandError(f"{options['recording']}: the recording is empty")
        recorder = None if options["no_history"] else history_recorder()
        try:
            count = asyncio.run(self._replay(itertools.chain([first], events), options["speed"], recorder))
        except RecordingError as error:
            raise CommandError(str(error)) from None
        finally:
            if recorder is not None:
                recorder.stop()
        self.stdout.write(f"replayed {count} events from {options['recording']}")

    async def _replay(self, events: Any, speed: float, recorder: Any) -> int:
        watchers: dict[str, Watcher] = {}
        bus = live_bus()
        count = 0
        # One pipeline per cluster in the recording; events stay in recorded order.
        for cluster, group in itertools.groupby(events, key=lambda e: e.cluster):
            watcher = watchers.get(cluster)
            if watcher is None:
                watcher = watchers[cluster] = Watcher(
                    cluster,
                    bus=bus,
                    lease=MemoryLease(),
                    recorder=recorder,
                    settings=pipeline_settings(min_publish_interval=0.0),
                )
            count += await watcher.replay(group, speed=speed)
        return count

