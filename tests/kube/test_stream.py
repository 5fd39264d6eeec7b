"""A watch stream read by callback: events in order however the bytes are cut, the server's errors, a
silence, a callback that fails, a connection lost, TLS. The server is a real local socket that sends
exactly the bytes each test gives it."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import orjson
import pytest

from dashboard.kube.connection import ApiError, KubeApi, Timeouts
from dashboard.kube.stream import open_watch, watch_url
from dashboard.kube.watch import is_tls_failure
from kubesim.kubeconfig import self_signed_certificate, write_kubeconfig

OK_HEADER = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
END = b"0\r\n\r\n"


def chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


def event(name: str, version: str = "1") -> bytes:
    meta = {"name": name, "resourceVersion": version}
    return orjson.dumps({"type": "MODIFIED", "object": {"metadata": meta}})


class Server:
    """Answers each connection with ``pieces`` (bytes written one by one, a float is a pause), keeping
    the request it was sent."""

    def __init__(self, pieces: Sequence[bytes | float], *, close: bool = True) -> None:
        self.pieces, self.close = pieces, close
        self.requests: list[bytes] = []

    async def answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.requests.append(await reader.readuntil(b"\r\n\r\n"))
        for piece in self.pieces:
            if isinstance(piece, float):
                await asyncio.sleep(piece)
            else:
                writer.write(piece)
                await writer.drain()
        if self.close:
            writer.close()
        else:
            await asyncio.sleep(3600)


@asynccontextmanager
async def serving(server: Server, tls: ssl.SSLContext | None = None) -> AsyncIterator[str]:
    listening = await asyncio.start_server(server.answer, "127.0.0.1", 0, ssl=tls)
    port = listening.sockets[0].getsockname()[1]
    try:
        yield f"{'https' if tls else 'http'}://127.0.0.1:{port}"
    finally:
        listening.close()


async def received(url: str, **options: Any) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    options = {"ssl_context": None, "connect_timeout": 5.0, "silence": 5.0, **options}
    await open_watch(url + "/watch?watch=true", {"Accept": "application/json"}, events.append, **options)
    return events


def names(events: list[dict[str, Any]]) -> list[str]:
    return [e["object"]["metadata"]["name"] for e in events]


async def test_events_arrive_in_order_however_the_stream_cuts_them() -> None:
    a, b, c, d = event("a"), event("b"), event("c"), event("d")
    pieces: list[bytes | float] = [
        OK_HEADER,
        chunk(a + b"\n"),  # one event, one chunk: what an API server sends
        chunk(b[:10]),  # an event cut across chunks …
        0.01,
        chunk(b[10:] + b"\n\n" + c + b"\n"),  # … and two lines in one chunk, a blank one between
        chunk(d),  # the last event without its newline
        END,
    ]
    async with serving(Server(pieces)) as url:
        assert names(await received(url)) == ["a", "b", "c", "d"]


async def test_the_request_names_the_path_the_query_and_the_headers() -> None:
    server = Server([OK_HEADER, END])
    async with serving(server) as url:
        target = watch_url(url + "/k8s/clusters/c-1/", "/api/v1/pods", {"labelSelector": "a=b"})
        await open_watch(
            target, {"Authorization": "Bearer t"}, print, ssl_context=None, connect_timeout=5, silence=5
        )
    request = server.requests[0].decode()
    assert request.startswith("GET /k8s/clusters/c-1/api/v1/pods?labelSelector=a%3Db&watch=true HTTP/1.1\r\n")
    assert "\r\nAuthorization: Bearer t\r\n" in request
    assert f"\r\nHost: {url.removeprefix('http://')}\r\n" in request


async def test_an_error_status_raises_the_servers_message() -> None:
    status = orjson.dumps(
        {"kind": "Status", "reason": "Forbidden", "message": "pods is forbidden", "code": 403}
    )
    pieces: list[bytes | float] = [
        b"HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
        % len(status),
        status,
    ]
    async with serving(Server(pieces, close=False)) as url:
        with pytest.raises(ApiError) as raised:
            await received(url)
    assert raised.value.status == 403
    assert raised.value.reason == "Forbidden: pods is forbidden"


async def test_a_line_that_is_not_an_object_ends_the_stream_after_the_events_before_it() -> None:
    events: list[dict[str, Any]] = []
    pieces: list[bytes | float] = [
        OK_HEADER,
        chunk(event("a") + b"\n"),
        chunk(b"[1, 2]\n"),
        chunk(event("b")),
    ]
    async with serving(Server(pieces, close=False)) as url:
        with pytest.raises(ValueError, match="not an object"):
            await open_watch(url + "/w", {}, events.append, ssl_context=None, connect_timeout=5, silence=5)
    assert names(events) == ["a"]


async def test_a_silent_stream_raises_a_timeout() -> None:
    async with serving(Server([OK_HEADER, chunk(event("a") + b"\n")], close=False)) as url:
        with pytest.raises(TimeoutError, match="silent"):
            await received(url, silence=0.2)


async def test_what_the_callback_raises_ends_the_stream_and_is_raised() -> None:
    seen: list[str] = []

    def refuse_b(found: dict[str, Any]) -> None:
        seen.append(found["object"]["metadata"]["name"])
        if seen[-1] == "b":
            raise LookupError("b is not wanted")

    lines = event("a") + b"\n" + event("b") + b"\n" + event("c") + b"\n"
    async with serving(Server([OK_HEADER, chunk(lines)], close=False)) as url:
        with pytest.raises(LookupError, match="b is not wanted"):
            await open_watch(url + "/w", {}, refuse_b, ssl_context=None, connect_timeout=5, silence=5)
    assert seen == ["a", "b"]  # nothing after the failure


async def test_a_connection_lost_before_the_end_is_an_error_not_an_end() -> None:
    async with serving(Server([OK_HEADER, chunk(event("a") + b"\n")])) as url:
        with pytest.raises(ConnectionResetError, match="before ending it"):
            await received(url)


async def test_a_body_without_length_or_chunks_ends_with_the_connection_as_a_normal_end() -> None:
    plain = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n"
    async with serving(Server([plain, event("a") + b"\n" + event("b")])) as url:
        assert names(await received(url)) == ["a", "b"]


async def test_a_response_that_is_not_http_is_a_clear_error() -> None:
    async with serving(Server([b"SSH-2.0-OpenSSH\r\n\r\n"], close=False)) as url:
        with pytest.raises(ValueError, match="could not be read as HTTP"):
            await received(url)


async def test_a_header_with_a_line_break_is_refused_before_connecting() -> None:
    with pytest.raises(ValueError, match=r"'Authorization'.*line break"):
        await open_watch(
            "http://127.0.0.1:1/w",
            {"Authorization": "Bearer a\r\nX: y"},
            print,
            ssl_context=None,
            connect_timeout=1,
            silence=1,
        )


async def test_a_server_that_never_answers_the_handshake_is_a_connection_error() -> None:
    async with serving(Server([], close=False)) as url:  # plain TCP: a TLS client waits for its hello
        context = ssl.create_default_context()
        with pytest.raises(ConnectionError, match=r"no connection to 127\.0\.0\.1"):
            await received(url.replace("http:", "https:"), ssl_context=context, connect_timeout=0.3)


async def test_kube_api_streams_over_tls_with_the_kubeconfigs_ca_and_token(tmp_path: Path) -> None:
    cert, key = self_signed_certificate()
    (tmp_path / "tls.crt").write_bytes(cert)
    (tmp_path / "tls.key").write_bytes(key)
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(tmp_path / "tls.crt", tmp_path / "tls.key")
    server = Server([OK_HEADER, chunk(event("a") + b"\n"), END])
    events: list[dict[str, Any]] = []
    async with serving(server, tls) as url:
        write_kubeconfig(tmp_path / "kubeconfig", url, "s3cret", ca_pem=cert)
        api = await KubeApi.connect(str(tmp_path / "kubeconfig"))
        await api.stream("/api/v1/pods", {"allowWatchBookmarks": "true"}, Timeouts(5, 5), events.append)
    assert names(events) == ["a"]
    assert b"\r\nauthorization: bearer s3cret\r\n" in server.requests[0].lower()


async def test_a_certificate_from_another_ca_is_a_tls_failure(tmp_path: Path) -> None:
    cert, key = self_signed_certificate()
    other_ca, _ = self_signed_certificate()
    (tmp_path / "tls.crt").write_bytes(cert)
    (tmp_path / "tls.key").write_bytes(key)
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(tmp_path / "tls.crt", tmp_path / "tls.key")
    async with serving(Server([OK_HEADER, END]), tls) as url:
        write_kubeconfig(tmp_path / "kubeconfig", url, "t", ca_pem=other_ca)
        api = await KubeApi.connect(str(tmp_path / "kubeconfig"))
        with pytest.raises(ssl.SSLError) as raised:
            await api.stream("/api/v1/pods", {}, Timeouts(5, 5), print)
    assert is_tls_failure(raised.value)


async def test_a_cancellation_that_arrives_as_the_connection_is_made_stops_the_watch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Python 3.11's ``asyncio.wait_for`` returns the result of an awaitable that finished in the same loop
    step as the cancellation, and the cancellation is lost: a watcher told to stop watched on."""
    loop = asyncio.get_running_loop()
    connect = loop.create_connection
    watching: list[asyncio.Task[Any]] = []

    async def connected_as_the_watch_is_cancelled(*args: Any, **kwargs: Any) -> Any:
        made = await connect(*args, **kwargs)
        watching[0].cancel()
        return made

    monkeypatch.setattr(loop, "create_connection", connected_as_the_watch_is_cancelled)
    async with serving(Server([OK_HEADER, chunk(event("a") + b"\n")], close=False)) as url:
        watching.append(asyncio.create_task(received(url)))
        done, _ = await asyncio.wait(watching, timeout=2)
        watching[0].cancel()  # (a watch that went on is stopped before its server)
    assert done and watching[0].cancelled()
