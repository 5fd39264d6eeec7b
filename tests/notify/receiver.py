"""A local HTTP receiver (127.0.0.1) that records what it is sent and answers from a script of statuses."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Receiver:
    def __init__(self, statuses: list[int]) -> None:
        self.statuses = list(statuses)  # answered in order; the last one repeats
        self.received: list[tuple[dict[str, str], Any]] = []
        self.url = ""


@contextmanager
def running_receiver(statuses: list[int] | None = None) -> Iterator[Receiver]:
    receiver = Receiver(statuses or [200])

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            receiver.received.append(({k.lower(): v for k, v in self.headers.items()}, json.loads(body)))
            status = receiver.statuses.pop(0) if len(receiver.statuses) > 1 else receiver.statuses[0]
            self.send_response(status)
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    receiver.url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
