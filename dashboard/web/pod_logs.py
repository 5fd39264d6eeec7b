"""Websocket ``/ws/logs/<cluster>/<namespace>/<name>/``: one pod's log, tailed while the page looks.

Protocol (JSON text frames):

- Connect with the session cookie. Anonymous: closed with 4401 (unless read-only anonymous viewing is on);
  a rollout the user may not see: 4403. The Origin is checked before (``dashboard.web.origin``).
- The client's first frame names what to read: ``{"pod": NAME, "container": NAME?, "sinceSeconds": N?,
  "tailLines": N?}``. The pod must be one of the rollout's canary / stable / preview / active pods as the
  domain lists them (``dashboard.domain.pod_logs``); a bad field is answered ``{"type": "error", "field":
  ..., "message": ...}`` and the socket closed with 4422.
- Reading logs needs the ``logs`` permission on the rollout; each session is audited (allowed or refused:
  a refusal is ``{"type": "error", "field": null, "status": 403, ...}`` and close code 4403).
- Then ``{"type": "started", "pod", "container", "role"}``, ``{"type": "lines", "lines": [...], "errors":
  [indexes of the error lines]}`` batches (text: the page puts them in ``textContent``),
  ``{"type": "dropped", "count": N}`` when the page read slower than the pod wrote (the buffer keeps the
  newest ``BUFFER_LINES``), and ``{"type": "end", "message": ...}`` when the API server ends the stream or
  fails (``status`` then says how).

The API server is asked (``dashboard.kube.podlogs``) only between the first frame and the page leaving:
``disconnect`` cancels the reading task, which closes the HTTP stream.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import deque
from typing import Any

from asgiref.sync import sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from dashboard import jsonbody
from dashboard.access.policy import GET, LOGS
from dashboard.access.rbac import aaccess_for
from dashboard.access.visibility import may_read
from dashboard.domain.pod_logs import LogRequest, LogRequestError, is_error_line, log_request
from dashboard.kube.actions import KubeError, impersonation_for
from dashboard.kube.podlogs import pod_log_lines
from dashboard.web import data

log = logging.getLogger(__name__)

BUFFER_LINES = 2000  # lines waiting for the page; beyond that the oldest are dropped (and counted)
BATCH_LINES = 200
FLUSH_SECONDS = 0.1
HELLO_SECONDS = 10.0
FRAME_MAX_BYTES = 4096


class PodLogsConsumer(AsyncWebsocketConsumer):
    reader: asyncio.Task[None] | None = None
    sender: asyncio.Task[None] | None = None

    async def connect(self) -> None:
        self.user = self.scope.get("user")
        if not may_read(self.user):
            await self.close(code=4401)
            return
        kwargs = self.scope["url_route"]["kwargs"]
        self.cluster, self.namespace = kwargs["cluster"], kwargs["namespace"]
        self.key = f"{kwargs['cluster']}/{kwargs['namespace']}/{kwargs['name']}"
        if not (await aaccess_for(self.user)).can(GET, self.key):
            await self.close(code=4403)
            return
        self.started = False
        self.buffer: deque[str] = deque(maxlen=BUFFER_LINES)
        self.dropped = 0
        self.wake = asyncio.Event()
        await self.accept()
        self.hello_timer = asyncio.get_running_loop().call_later(HELLO_SECONDS, self._no_hello)

    def _no_hello(self) -> None:
        if not self.started:
            self.refusal = asyncio.ensure_future(
                self._refuse("pod", 4422, 'no request: send {"pod": NAME} first')
            )

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if self.started:
            return  # one request per socket: the page opens another socket for another pod
        self.started = True
        self.hello_timer.cancel()
        try:
            asked = jsonbody.loads((text_data or "").encode(), max_bytes=FRAME_MAX_BYTES)
        except jsonbody.JsonBodyError as error:
            await self._refuse(None, 4422, f"the request is not JSON: {error}")
            return
        if not isinstance(asked, dict):
            await self._refuse(None, 4422, "the request must be a JSON object")
            return
        params = {k: asked.get(k) for k in ("pod", "container", "sinceSeconds", "tailLines") if k in asked}
        if not (await aaccess_for(self.user)).can(LOGS, self.key):
            await self._audit(False, params, "no 'logs' permission on this rollout")
            await self._refuse(
                None, 4403, "you may not read this rollout's pods' logs (permission: logs)", 403
            )
            return
        _, view = await data.gather_rollout(self.key)
        try:
            if view is None:
                raise LogRequestError("pod", "the rollout is not being watched right now")
            request = log_request(view, asked)
        except LogRequestError as error:
            await self._refuse(error.field, 4422, error.message)
            return
        try:
            impersonate = impersonation_for(
                getattr(self.user, "username", ""), (await aaccess_for(self.user)).groups
            )
        except KubeError as error:
            await self._audit(False, params, error.message)
            await self._refuse(None, 4403, error.message, 403)
            return
        await self._audit(True, params, f"read the logs of pod {request.pod} ({request.role})")
        await self.send_json(
            {"type": "started", "pod": request.pod, "container": request.container, "role": request.role}
        )
        self.sender = asyncio.create_task(self._send_batches())
        self.reader = asyncio.create_task(self._read(request, impersonate))

    async def disconnect(self, code: int) -> None:
        timer = getattr(self, "hello_timer", None)
        if timer is not None:
            timer.cancel()
        tasks = [task for task in (self.reader, self.sender) if task is not None]
        for task in tasks:
            task.cancel()
        # Their ends, whatever they were; unlike suppressing CancelledError around each await, a
        # cancellation of this handler itself still stops it.
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _read(self, request: LogRequest, impersonate: Any) -> None:
        end: dict[str, Any] = {"type": "end", "message": "the log stream ended (the pod is gone or stopped)"}
        try:
            async for line in pod_log_lines(
                self.cluster,
                self.namespace,
                request.pod,
                container=request.container,
                since_seconds=request.since_seconds,
                tail_lines=request.tail_lines,
                impersonate=impersonate,
            ):
                if len(self.buffer) == BUFFER_LINES:
                    self.dropped += 1
                self.buffer.append(line)
                self.wake.set()
        except KubeError as error:
            end = {"type": "end", "status": error.status, "message": error.message}
        except Exception as error:  # the page must hear why its log stopped, whatever happened
            log.exception("reading the logs of %s/%s failed", self.namespace, request.pod)
            end = {"type": "end", "status": 0, "message": f"reading the log failed: {error}"}
        await asyncio.sleep(FLUSH_SECONDS)  # let the last batch go first
        if self.sender is not None:
            self.sender.cancel()
        await self._flush()
        await self.send_json(end)

    async def _send_batches(self) -> None:
        while True:
            await self.wake.wait()
            self.wake.clear()
            await self._flush()
            await asyncio.sleep(FLUSH_SECONDS)  # batch what arrives meanwhile into the next frame

    async def _flush(self) -> None:
        if self.dropped:
            await self.send_json({"type": "dropped", "count": self.dropped})
            self.dropped = 0
        while self.buffer:
            batch = [self.buffer.popleft() for _ in range(min(BATCH_LINES, len(self.buffer)))]
            await self.send_json(
                {
                    "type": "lines",
                    "lines": batch,
                    "errors": [i for i, line in enumerate(batch) if is_error_line(line)],
                }
            )

    async def _refuse(self, field: str | None, code: int, message: str, status: int = 422) -> None:
        await self.send_json({"type": "error", "field": field, "status": status, "message": message})
        await self.close(code=code)

    async def _audit(self, allowed: bool, params: dict[str, Any], detail: str) -> None:
        from dashboard.actions.service import logs_session

        await sync_to_async(logs_session)(self.user, self.key, allowed=allowed, params=params, detail=detail)

    async def send_json(self, message: dict[str, Any]) -> None:
        await self.send(text_data=json.dumps(message))
