"""Reading one watch stream: each event handed to a callback as its line arrives.

A watcher receives hundreds of events a second, each usually its own TLS record and HTTP chunk. Read
through aiohttp's response stream, every event also woke the watching task (a future, a task step, the
async generator resumed): about 35 µs of the ~90 µs an event cost to receive, measured against the
benchmark's floor server (docs/benchmarks.md, "Sixteenth session"). Here the connection's own protocol
decodes the response with httptools (llhttp, the parser uvicorn uses), splits the lines and hands each
event to the caller from the transport's callback; the task awaits once, for the end of the stream.

``open_watch`` is the whole client: one connection per watch (a watch holds its connection for its life),
HTTP/1.1, the request's headers as given. A status of 400 or more raises ``ApiError`` with the server's
message; a stream silent for longer than ``silence`` seconds raises ``TimeoutError``; a line that is not
a JSON object raises ``ValueError``; whatever the callback raises ends the stream and is raised. A body
without a length or chunks ends with its connection, as HTTP/1.0 bodies do; any other lost connection is
a ``ConnectionResetError``.

Non-goals: proxies, HTTP/2, compressed bodies, keeping connections alive (aiohttp's session did none of
these for the watches either); lists stay with aiohttp (``KubeApi.list_connection``).
"""

from __future__ import annotations

import asyncio
import json
import ssl
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlencode, urlsplit

import httptools
import orjson

MAX_LINE_BYTES = 64 * 2**20  # one event's line; Kubernetes keeps objects under 1.5 MB by default
MAX_ERROR_BYTES = 2**20  # the body of an error status kept for its message


class ApiError(Exception):
    """The API answered with an error status (or an ``ERROR`` watch event)."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(f"{status} {reason}")
        self.status = status
        self.reason = reason


def loads(data: bytes) -> Any:
    """orjson (decoding is most of the watcher's work at scale), else the standard library, which also
    reads what orjson refuses (NaN, lone surrogates) so that odd objects behave as they always did."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(data)


def reason_of(body: bytes, fallback: str | None) -> str:
    """The message of a Kubernetes ``Status`` body, else the HTTP reason phrase or the body's start."""
    try:
        status = json.loads(body)
        if isinstance(status, dict) and status.get("message"):
            return str(status.get("reason") or "") + ": " + str(status["message"])
    except ValueError:
        pass
    return fallback or body[:200].decode(errors="replace")


async def open_watch(
    url: str,
    headers: Mapping[str, str],
    on_event: Callable[[dict[str, Any]], None],
    *,
    ssl_context: ssl.SSLContext | None,
    connect_timeout: float,
    silence: float,
) -> None:
    """GET ``url`` (the watch's, query included) and hand each event to ``on_event`` until the server
    ends the stream; see the module's docstring for what raises."""
    split = urlsplit(url)
    if split.scheme not in ("http", "https") or not split.hostname:
        raise ValueError(f"not an http(s) URL of an API server: {url!r}")
    authority = split.netloc.rpartition("@")[2]
    request = _request(split.path or "/", split.query, {"Host": authority, **headers})
    loop = asyncio.get_running_loop()
    ended: asyncio.Future[None] = loop.create_future()
    try:
        async with asyncio.timeout(connect_timeout):  # (not wait_for: see pyproject's banned-api)
            _, protocol = await loop.create_connection(
                lambda: _WatchProtocol(request, on_event, ended, silence),
                split.hostname,
                split.port or (443 if split.scheme == "https" else 80),
                ssl=ssl_context if split.scheme == "https" else None,
                server_hostname=split.hostname if split.scheme == "https" else None,
            )
    except TimeoutError:  # not a silent stream: no connection at all
        raise ConnectionError(f"no connection to {authority} within {connect_timeout:.0f}s") from None
    try:
        await ended
    finally:
        protocol.stop()  # its timer and the connection (cancelled, or ended by the server)


def watch_url(base: str, path: str, params: Mapping[str, str]) -> str:
    """The URL of a watch of ``path`` on the API server at ``base`` (which may carry a path prefix)."""
    return f"{base.rstrip('/')}{path}?{urlencode({**params, 'watch': 'true'})}"


def _request(path: str, query: str, headers: Mapping[str, str]) -> bytes:
    target = f"{path}?{query}" if query else path
    lines = [f"GET {target} HTTP/1.1"]
    for name, value in headers.items():
        if any(c in f"{name}{value}" for c in "\r\n\0"):
            raise ValueError(f"the header {name!r} for the API server holds a line break")
        lines.append(f"{name}: {value}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


class _WatchProtocol(asyncio.Protocol):
    """One watch's connection: the response parsed as it comes, its lines handed on as events."""

    def __init__(
        self,
        request: bytes,
        on_event: Callable[[dict[str, Any]], None],
        ended: asyncio.Future[None],
        silence: float,
    ) -> None:
        self._request = request
        self._on_event = on_event
        self._ended = ended
        self._silence = silence
        self._parser = httptools.HttpResponseParser(self)
        self._loop = asyncio.get_running_loop()
        self._transport: asyncio.BaseTransport | None = None
        self._status = 0
        self._reason = b""
        self._partial = b""  # the start of a line whose end has not arrived
        self._lines: list[bytes] = []  # complete lines of the data being handled
        self._error_body = bytearray()
        self._complete = False  # the server ended the response
        self._delimited = False  # its body has a length or chunks (else it ends with the connection)
        self._last_data = self._loop.time()
        self._silence_timer: asyncio.TimerHandle | None = None

    # --- the transport's callbacks ---

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport
        transport.write(self._request)  # type: ignore[attr-defined]
        self._silence_timer = self._loop.call_later(self._silence, self._check_silence)

    def data_received(self, data: bytes) -> None:
        if self._ended.done() or self._complete:
            return
        self._last_data = self._loop.time()
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError as error:
            self._end(ValueError(f"the API server's response could not be read as HTTP: {error}"))
            return
        if len(self._partial) > MAX_LINE_BYTES:
            self._end(ValueError(f"a watch event longer than {MAX_LINE_BYTES} bytes"))
            return
        self._hand_on()
        if self._complete:
            self._end(None)

    def connection_lost(self, error: Exception | None) -> None:
        if error is None and 200 <= self._status < 300 and not self._delimited:
            # A body without a length or chunks (HTTP/1.0 style, through some proxies) ends with the
            # connection: that is the end of the watch, not a failure.
            self._last_line()
            self._hand_on()
            self._end(None)
            return
        self._end(error or ConnectionResetError("the API server closed the watch before ending it"))

    def _hand_on(self) -> None:
        """Decode the complete lines received and hand each event on, until one fails (which ends the
        stream with its error) or the callback stops the stream."""
        lines, self._lines = self._lines, []
        for line in lines:
            try:
                event = loads(line)
                if not isinstance(event, dict):
                    raise ValueError(f"watch event is not an object: {line[:200]!r}")
                self._on_event(event)
            except BaseException as error:  # the callback's too: it ends the stream and is raised
                self._end(error)
                return
            if self._ended.done():  # the callback stopped the stream
                return

    # --- the parser's callbacks ---

    def on_status(self, status: bytes) -> None:
        self._reason += status

    def on_header(self, name: bytes, value: bytes) -> None:
        if name.lower() in (b"content-length", b"transfer-encoding"):
            self._delimited = True  # the parser knows where the body ends

    def on_headers_complete(self) -> None:
        self._status = self._parser.get_status_code()

    def on_body(self, body: bytes) -> None:
        if self._status >= 400:
            self._error_body += body[: MAX_ERROR_BYTES - len(self._error_body)]
            return
        if self._partial:
            body = self._partial + body
        *complete, self._partial = body.split(b"\n")
        self._lines += [line for line in complete if line.strip()]

    def on_message_complete(self) -> None:
        self._complete = True  # the stream ends once the lines of this data are handed on
        if self._status >= 400:
            reason = reason_of(bytes(self._error_body), self._reason.decode("latin-1") or None)
            self._end(ApiError(self._status, reason))
        else:
            self._last_line()

    def _last_line(self) -> None:
        """The body ended: what follows its last newline is the last event (sent without its newline)."""
        if self._partial.strip():
            self._lines.append(self._partial)
        self._partial = b""

    # --- ending ---

    def _check_silence(self) -> None:
        idle = self._loop.time() - self._last_data
        if idle >= self._silence:
            self._end(TimeoutError(f"the watch was silent for {idle:.0f}s"))
        elif not self._ended.done():
            self._silence_timer = self._loop.call_later(self._silence - idle, self._check_silence)

    def _end(self, error: BaseException | None) -> None:
        if not self._ended.done():
            if error is None:
                self._ended.set_result(None)
            else:
                self._ended.set_exception(error)
        self.stop()

    def stop(self) -> None:
        if self._silence_timer is not None:
            self._silence_timer.cancel()
            self._silence_timer = None
        if self._transport is not None and not self._transport.is_closing():
            self._transport.close()
