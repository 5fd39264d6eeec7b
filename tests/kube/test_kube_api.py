"""KubeApi's lists: a list's pages share one kept-alive connection of their own, which is closed as the
list ends, whether it ended well or not (the watch that follows has a connection of its own). The server is
a real local socket that counts its connections, and those closed."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest

from dashboard.kube.connection import ApiError, KubeApi, Timeouts


class Configuration:
    """What KubeApi reads of a configuration: plain HTTP, no credentials."""

    def __init__(self, host: str) -> None:
        self.host = host

    async def auth_settings(self) -> dict[str, Any]:
        return {}


class PagingServer:
    """Answers each request on a connection (HTTP/1.1 keep-alive) with the next of ``pages`` (None: a 500)."""

    def __init__(self, pages: list[dict[str, Any] | None]) -> None:
        self.pages = pages
        self.connections = 0
        self.closed = 0
        self.answered = 0

    async def answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while await reader.readuntil(b"\r\n\r\n"):
                page = self.pages[self.answered % len(self.pages)]
                self.answered += 1
                body = orjson.dumps(page if page is not None else {"message": "broken"})
                status = "200 OK" if page is not None else "500 Internal Server Error"
                writer.write(f"HTTP/1.1 {status}\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            self.closed += 1
            writer.close()

    async def until_closed(self, count: int) -> None:
        """Until ``count`` connections were closed by the client (at most a second: closing is at once)."""
        for _ in range(100):
            if self.closed >= count:
                return
            await asyncio.sleep(0.01)
        raise AssertionError(f"{self.closed} of {count} connections closed")


FIRST = {"items": [{"a": 1}], "metadata": {"continue": "next", "resourceVersion": "1"}}
LAST = {"items": [{"a": 2}], "metadata": {"resourceVersion": "1"}}


async def test_a_lists_pages_share_a_connection_that_is_closed_as_the_list_ends() -> None:
    server = PagingServer([FIRST, LAST])
    listening = await asyncio.start_server(server.answer, "127.0.0.1", 0)
    api = KubeApi(Configuration(f"http://127.0.0.1:{listening.sockets[0].getsockname()[1]}"))
    try:
        for lists in (1, 2):
            async with api.list_connection() as get_page:
                assert (await get_page("/api/v1/pods", {"limit": "1"}, Timeouts(5, 5)))["items"] == [{"a": 1}]
                assert (await get_page("/api/v1/pods", {"continue": "next"}, Timeouts(5, 5)))["items"] == [
                    {"a": 2}
                ]
            await server.until_closed(lists)
    finally:
        listening.close()
    assert server.answered == 4
    assert server.connections == 2  # one per list: its second page reused it


async def test_a_list_that_fails_closes_its_connection_too() -> None:
    server = PagingServer([FIRST, None])
    listening = await asyncio.start_server(server.answer, "127.0.0.1", 0)
    api = KubeApi(Configuration(f"http://127.0.0.1:{listening.sockets[0].getsockname()[1]}"))
    try:
        with pytest.raises(ApiError) as failed:
            async with api.list_connection() as get_page:
                await get_page("/api/v1/pods", {"limit": "1"}, Timeouts(5, 5))
                await get_page("/api/v1/pods", {"continue": "next"}, Timeouts(5, 5))
        await server.until_closed(1)
    finally:
        listening.close()
    assert failed.value.status == 500
    assert server.connections == 1
