"""KubeApi's lists: a list's pages share one kept-alive connection, which is closed soon after the list
ends (the watch that follows has a connection of its own). The server is a real local socket that counts
its connections."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson

from dashboard.kube.connection import KubeApi, Timeouts


class Configuration:
    """What KubeApi reads of a configuration: plain HTTP, no credentials."""

    def __init__(self, host: str) -> None:
        self.host = host

    async def auth_settings(self) -> dict[str, Any]:
        return {}


class PagingServer:
    """Answers every request on a connection (HTTP/1.1 keep-alive) with the next of ``pages``."""

    def __init__(self, pages: list[dict[str, Any]]) -> None:
        self.pages = pages
        self.connections = 0
        self.answered = 0

    async def answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while await reader.readuntil(b"\r\n\r\n"):
                body = orjson.dumps(self.pages[self.answered % len(self.pages)])
                self.answered += 1
                head = f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n\r\n"
                writer.write(head.encode() + body)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()


async def test_a_lists_pages_share_a_connection_closed_soon_after_the_list() -> None:
    first = {"items": [{"a": 1}], "metadata": {"continue": "next", "resourceVersion": "1"}}
    last = {"items": [{"a": 2}], "metadata": {"resourceVersion": "1"}}
    server = PagingServer([first, last])
    listening = await asyncio.start_server(server.answer, "127.0.0.1", 0)
    port = listening.sockets[0].getsockname()[1]
    api = KubeApi(Configuration(f"http://127.0.0.1:{port}"), keepalive=0.1)
    try:
        for _ in range(2):  # two whole lists, a while apart
            assert (await api.get("/api/v1/pods", {"limit": "1"}, Timeouts(5, 5)))["items"] == [{"a": 1}]
            assert (await api.get("/api/v1/pods", {"continue": "next"}, Timeouts(5, 5)))["items"] == [
                {"a": 2}
            ]
            await asyncio.sleep(0.3)  # more than twice the keep-alive
    finally:
        await api.close()
        listening.close()
    assert server.answered == 4
    assert server.connections == 2  # one per list: its second page reused it, then it was closed
