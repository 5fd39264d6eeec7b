"""A small async Prometheus HTTP client whose answers are values, never exceptions.

``query`` / ``query_range`` return ``Outcome``: the parsed answer, or a state (``unreachable`` — the
server did not answer; ``error`` — it answered with an error) and a message fit for the page. A page that
shows charts therefore keeps working when Prometheus is down (the seeds' "outage of the metrics system").

Non-goals: retries (the page polls again), authentication, remote-read.
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass
from typing import Any

import aiohttp

from dashboard.domain.analysis_eval import PrometheusResultError, QueryAnswer, prometheus_result

OK, UNREACHABLE, ERROR = "ok", "unreachable", "error"


@dataclass(frozen=True)
class Outcome:
    state: str
    answer: QueryAnswer | None = None
    message: str = ""
    payload: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return self.state == OK


class PrometheusClient:
    def __init__(self, base_url: str, timeout: float = 5.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout

    async def _post(self, path: str, form: dict[str, str]) -> Outcome:
        url = f"{self.base_url}{path}"
        try:
            async with (
                aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.timeout)) as session,
                session.post(url, data=form) as response,
            ):
                text = await response.text()
        except TimeoutError:
            return Outcome(
                UNREACHABLE, message=f"Prometheus at {self.base_url} did not answer within {self.timeout:g} s"
            )
        except aiohttp.ClientConnectorError as error:
            # asyncio's OSError carries "Connect call failed (addr)" as strerror; the errno says why.
            code = error.os_error.errno if error.os_error else None
            reason = os.strerror(code) if code else str(error)
            return Outcome(
                UNREACHABLE, message=f"Prometheus at {self.base_url} is unreachable: {reason.lower()}"
            )
        except (aiohttp.ClientError, asyncio.CancelledError, OSError) as error:
            if isinstance(error, asyncio.CancelledError):
                raise
            return Outcome(UNREACHABLE, message=f"Prometheus at {self.base_url} is unreachable: {error}")
        try:
            payload = json.loads(text)
        except ValueError:
            return Outcome(
                ERROR, message=f"Prometheus at {self.base_url} answered HTTP {response.status} without JSON"
            )
        try:
            return Outcome(OK, prometheus_result(payload), payload=payload)
        except PrometheusResultError as error:
            return Outcome(ERROR, message=str(error), payload=payload if isinstance(payload, dict) else None)

    async def query(self, promql: str, at: float | None = None) -> Outcome:
        form = {"query": promql}
        if at is not None:
            form["time"] = f"{at:.3f}"
        return await self._post("/api/v1/query", form)

    async def query_range(self, promql: str, start: float, end: float, step: float) -> Outcome:
        form = {
            "query": promql,
            "start": f"{start:.3f}",
            "end": f"{end:.3f}",
            "step": f"{max(step, 0.001):.3f}",
        }
        return await self._post("/api/v1/query_range", form)
