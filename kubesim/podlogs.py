"""The ``pods/log`` subresource: deterministic container logs for kubesim's pods, as a kubelet serves them.

``GET /api/v1/namespaces/{ns}/pods/{name}/log`` with the query parameters of ``PodLogOptions``:
``container``, ``follow``, ``sinceSeconds`` / ``sinceTime``, ``tailLines``, ``timestamps``, ``limitBytes``
and ``previous``. Errors are the API server's and the kubelet's (pkg/registry/core/pod/rest/log.go,
``LogLocation`` in pkg/registry/core/pod/strategy.go, the kubelet's ``validateContainerLogStatus``):

- 404 ``pods "x" not found``;
- 400 ``a container name must be specified for pod x, choose one of: [a b]`` (plus ``or one of the init
  containers: [...]``) when the pod has several containers and none is named; 400 ``container c is not
  valid for pod x`` for an unknown one; 400 ``container "c" in pod "x" is waiting to start: REASON`` before
  it runs; 400 ``previous terminated container "c" in pod "x" not found`` for ``previous`` (no restarts here);
- 422 ``PodLogOptions "x" is invalid`` for a negative ``tailLines``, a ``sinceSeconds`` below 1, both
  ``sinceSeconds`` and ``sinceTime``, a ``limitBytes`` below 1; 400 for a value that is not a number.

A container writes one line every ``LINE_SECONDS`` (wall time) from its ``startedAt``; each line is a
pure function of (pod, container, line number, the error rate of its pod), so a log read twice is the same
log. A scenario sets the error rate of its rollouts' canary pods (``Store.log_error_rates``, by namespace
and rollout; a canary pod is one of a revision after the first): the failing scenarios' canaries log
errors at the rate their analysis measures. ``follow`` streams new lines as they are due and ends when the pod
goes away.

Non-goals: log rotation, ``insecureSkipTLSVerifyBackend``, real container output.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from kubesim.store import BadRequest, Invalid, NotFound, Obj

LINE_SECONDS = 1.0  # of wall time, like every timestamp kubesim writes (kubesim.clock)
REVISION_ANNOTATION = "rollout.argoproj.io/revision"
_PATHS = ("/api/checkout", "/api/cart", "/api/items", "/healthz", "/api/orders", "/api/search")
_ERRORS = (
    "upstream connect error or disconnect/reset before headers",
    "database query timed out after 2000ms",
    "panic recovered: nil map assignment in handler",
    "dial tcp 10.96.0.12:5432: connect: connection refused",
)


@dataclass(frozen=True)
class LogOptions:
    container: str | None = None
    follow: bool = False
    since_seconds: int | None = None
    since_time: datetime | None = None
    tail_lines: int | None = None
    timestamps: bool = False
    limit_bytes: int | None = None
    previous: bool = False


def parse_options(name: str, query: Mapping[str, str]) -> LogOptions:
    """``PodLogOptions`` from the query string: 400 for a value that does not convert, 422 when invalid."""
    since_time = None
    if query.get("sinceTime"):
        since_time = _parse_time(query["sinceTime"])
    options = LogOptions(
        container=query.get("container") or None,
        follow=_bool("follow", query.get("follow")),
        since_seconds=_int("sinceSeconds", query.get("sinceSeconds")),
        since_time=since_time,
        tail_lines=_int("tailLines", query.get("tailLines")),
        timestamps=_bool("timestamps", query.get("timestamps")),
        limit_bytes=_int("limitBytes", query.get("limitBytes")),
        previous=_bool("previous", query.get("previous")),
    )
    problems = []
    if options.since_seconds is not None and options.since_time is not None:
        problems.append("at most one of `sinceTime` or `sinceSeconds` may be specified")
    if options.since_seconds is not None and options.since_seconds < 1:
        problems.append(f"sinceSeconds: Invalid value: {options.since_seconds}: must be greater than 0")
    if options.tail_lines is not None and options.tail_lines < 0:
        problems.append(f"tailLines: Invalid value: {options.tail_lines}: must be greater than or equal to 0")
    if options.limit_bytes is not None and options.limit_bytes < 1:
        problems.append(f"limitBytes: Invalid value: {options.limit_bytes}: must be greater than 0")
    if problems:
        listed = problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]"
        raise Invalid(f'PodLogOptions "{name}" is invalid: {listed}')
    return options


def choose_container(pod: Obj, wanted: str | None) -> str:
    """The container to read, by the API server's rule: the only one, else the one named."""
    name = str(pod["metadata"]["name"])
    spec = pod.get("spec") or {}
    containers = [str(c.get("name")) for c in spec.get("containers") or []]
    init = [str(c.get("name")) for c in spec.get("initContainers") or []]
    if not wanted:
        if len(containers) == 1:
            return containers[0]
        if not containers:
            raise BadRequest(f"a container name must be specified for pod {name}")
        message = (
            f"a container name must be specified for pod {name}, choose one of: [{' '.join(containers)}]"
        )
        if init:
            message += f" or one of the init containers: [{' '.join(init)}]"
        raise BadRequest(message)
    if wanted not in containers and wanted not in init:
        raise BadRequest(f"container {wanted} is not valid for pod {name}")
    return wanted


def started_at(pod: Obj, container: str, options: LogOptions) -> datetime:
    """When the container started; 400 as the kubelet answers while it waits (or for ``previous``)."""
    name = pod["metadata"]["name"]
    if options.previous:
        raise BadRequest(f'previous terminated container "{container}" in pod "{name}" not found')
    status = pod.get("status") or {}
    statuses = [*(status.get("initContainerStatuses") or []), *(status.get("containerStatuses") or [])]
    found = next((s for s in statuses if s.get("name") == container), None)
    state = (found or {}).get("state") or {}
    running = state.get("running") or state.get("terminated")
    when = _time((running or {}).get("startedAt")) if running else None
    if when is None:
        reason = (state.get("waiting") or {}).get("reason") or "ContainerCreating"
        if reason in ("ImagePullBackOff", "ErrImagePull"):
            reason = "trying and failing to pull image"
        raise BadRequest(f'container "{container}" in pod "{name}" is waiting to start: {reason}')
    return when


def error_rate(store: Any, pod: Obj) -> float:
    """The pod's error rate: its rollout's canary rate for a revision after the first, else none."""
    meta = pod["metadata"]
    namespace = str(meta.get("namespace") or "")
    owner = next((r for r in meta.get("ownerReferences") or [] if r.get("kind") == "ReplicaSet"), None)
    if owner is None:
        return 0.0
    rs = store.try_get("apps/replicasets", namespace, owner.get("name"))
    if rs is None:
        return 0.0
    rs_meta = rs["metadata"]
    rollout = next(
        (r.get("name") for r in rs_meta.get("ownerReferences") or [] if r.get("kind") == "Rollout"), ""
    )
    revision = str((rs_meta.get("annotations") or {}).get(REVISION_ANNOTATION) or "1")
    if revision == "1":
        return 0.0
    rates: Mapping[tuple[str, str], float] = getattr(store, "log_error_rates", {})
    return float(rates.get((namespace, str(rollout)), 0.0))


def line(pod: str, container: str, image: str, index: int, rate: float) -> str:
    """Line ``index`` of a container's log (without a timestamp): start-up lines, then requests."""
    if index == 0:
        return f'level=info msg="starting {container}" image={image} pod={pod}'
    if index == 1:
        return 'level=info msg="listening on :8080"'
    digest = hashlib.sha256(f"{pod}/{container}/{index}".encode()).digest()
    roll = int.from_bytes(digest[:4], "big") / 2**32
    path = _PATHS[digest[4] % len(_PATHS)]
    millis = 3 + digest[5] % 60
    request = digest[6:10].hex()
    if roll < rate:
        cause = _ERRORS[digest[10] % len(_ERRORS)]
        return f'level=error msg="GET {path} 500: {cause}" duration_ms={millis * 20} request_id={request}'
    return f'level=info msg="GET {path} 200" duration_ms={millis} request_id={request}'


def lines_between(
    pod: Obj, container: str, start: datetime, begin: datetime, end: datetime, rate: float
) -> Iterator[tuple[datetime, str]]:
    """The lines written in ``[begin, end)`` by a container started at ``start``, oldest first."""
    name = str(pod["metadata"]["name"])
    image = next(
        (
            str(c.get("image", ""))
            for c in (pod.get("spec") or {}).get("containers") or []
            if c.get("name") == container
        ),
        "",
    )
    first = max(0, _ceil((begin - start).total_seconds() / LINE_SECONDS))
    index = first
    while True:
        at = start + timedelta(seconds=index * LINE_SECONDS)
        if at >= end:
            return
        yield at, line(name, container, image, index, rate)
        index += 1


def render(at: datetime, text: str, timestamps: bool) -> str:
    """One line as the kubelet sends it (``timestamps``: RFC 3339 with nanoseconds, then a space)."""
    if not timestamps:
        return text + "\n"
    return at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond:06d}000Z {text}\n"


def first_read(
    pod: Obj, container: str, start: datetime, now: datetime, rate: float, options: LogOptions
) -> list[tuple[datetime, str]]:
    """What a request returns at once: since/tail applied (``follow`` then continues from ``now``)."""
    begin = start
    if options.since_seconds is not None:
        begin = max(begin, now - timedelta(seconds=options.since_seconds))
    elif options.since_time is not None:
        begin = max(begin, options.since_time)
    if options.tail_lines is not None:
        # Only the last N are wanted: start no earlier than N lines before now.
        begin = max(begin, now - timedelta(seconds=(options.tail_lines + 1) * LINE_SECONDS))
    found = list(lines_between(pod, container, start, begin, now, rate))
    if options.tail_lines is not None:
        found = found[-options.tail_lines :] if options.tail_lines else []
    return found


def not_found(name: str) -> NotFound:
    return NotFound(f'pods "{name}" not found')


def _ceil(value: float) -> int:
    whole = int(value)
    return whole + 1 if value > whole else whole


def _int(field: str, value: str | None) -> int | None:
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError:
        raise BadRequest(
            f'{field}: Invalid value: "{value}": strconv.ParseInt: parsing "{value}": invalid syntax'
        ) from None


def _bool(field: str, value: str | None) -> bool:
    if value is None or value == "":
        return False
    if value.lower() in ("true", "1", "t"):
        return True
    if value.lower() in ("false", "0", "f"):
        return False
    raise BadRequest(
        f'{field}: Invalid value: "{value}": strconv.ParseBool: parsing "{value}": invalid syntax'
    )


def _parse_time(value: str) -> datetime:
    found = _time(value)
    if found is None:
        raise BadRequest(f'sinceTime: Invalid value: "{value}": not an RFC 3339 time')
    return found


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
