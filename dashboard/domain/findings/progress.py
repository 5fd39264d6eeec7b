"""``progress-deadline-exceeded`` (critical): the update made no progress for progressDeadlineSeconds.

Argo Rollouts records it as a ``Progressing`` condition with reason ``ProgressDeadlineExceeded`` and the
message ``ReplicaSet "<rs>" has timed out progressing.``; the rollout is then Degraded. Non-goals: predicting
the deadline before it passes (``stuck-at-step-zero`` covers the early symptom).
"""

from __future__ import annotations

import re

from ..objects import as_str, dig, opt_int, parse_time
from .base import CRITICAL, Context, Finding, condition
from .releases import _pod_problems

CODE = "progress-deadline-exceeded"
_RS_NAME = re.compile(r'ReplicaSet "([^"]+)"')
DEFAULT_PROGRESS_DEADLINE = 600


def detect(ctx: Context) -> list[Finding]:
    found = condition(ctx.rollout, "ProgressDeadlineExceeded")
    if found is None or ctx.fully_promoted:
        return []
    message = as_str(found.get("message"))
    match = _RS_NAME.search(message)
    rs_name = match.group(1) if match else (ctx.current_rs.name if ctx.current_rs else None)
    rs = next((r for r in ctx.replica_sets if r.name == rs_name), ctx.current_rs)
    deadline = opt_int(dig(ctx.rollout, "spec", "progressDeadlineSeconds")) or DEFAULT_PROGRESS_DEADLINE
    problems = _pod_problems(ctx, rs.hash) if rs else []
    since = parse_time(found.get("lastTransitionTime")) or parse_time(found.get("lastUpdateTime")) or ctx.now
    runbook = [ctx.runbook.get_rollout()]
    if rs is not None:
        runbook += [ctx.runbook.pods_of(rs.hash), ctx.runbook.describe_rs(rs.name)]
    runbook.append(ctx.runbook.argo("abort"))
    pods = f" Its pods report: {'; '.join(problems[:3])}." if problems else ""
    return [
        ctx.finding(
            CODE,
            CRITICAL,
            "Progress deadline exceeded",
            f"{rs_name or 'The new ReplicaSet'} made no progress for {deadline} s, so the rollout is "
            f"Degraded.{pods} "
            "Fix what keeps the new pods from becoming available, then retry, or abort to stay on stable.",
            {
                "message": message,
                "replicaSet": rs_name,
                "progressDeadlineSeconds": deadline,
                "replicas": rs.replicas if rs else None,
                "available": rs.available if rs else None,
                "podProblems": problems,
                "progressDeadlineAbort": bool(dig(ctx.rollout, "spec", "progressDeadlineAbort")),
            },
            runbook,
            since,
            # The runbook's remedy, runnable from the page (nothing to abort once the controller did).
            action=None if ctx.aborted else "abort",
            action_params=None if ctx.aborted else {},
        )
    ]
