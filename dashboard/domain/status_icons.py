"""The status glyphs ``kubectl argo rollouts`` prints, one function per kind of object.

Non-goals: colours (the CLI's ``--no-color`` output is the reference).
"""

from __future__ import annotations

WAITING = "◷"
PROGRESSING = "◌"
WARNING = "⚠"
UNKNOWN = "?"
OK = "✔"
BAD = "✖"
PAUSED = "॥"
NEUTRAL = "•"

_ROLLOUT = {
    "Progressing": PROGRESSING,
    "Error": WARNING,
    "InvalidSpec": WARNING,
    "Paused": PAUSED,
    "Healthy": OK,
    "Degraded": BAD,
    "Unknown": UNKNOWN,
    "ScaledDown": NEUTRAL,
}
_REPLICA_SET = {"Progressing": PROGRESSING, "Healthy": OK, "ReplicaFailure": BAD, "ScaledDown": NEUTRAL}
_ANALYSIS = {
    "Successful": OK,
    "Inconclusive": UNKNOWN,
    "Failed": BAD,
    "Error": WARNING,
    "Running": PROGRESSING,
    "Pending": WAITING,
}
_POD = {
    "Pending": PROGRESSING,
    "Terminating": PROGRESSING,
    "ContainerCreating": PROGRESSING,
    "Running": OK,
    "Completed": OK,
    "Failed": BAD,
    "InvalidImageName": BAD,
    "CrashLoopBackOff": BAD,
    "ImagePullBackOff": WARNING,
    "RegistryUnavailable": WARNING,
    "Unknown": UNKNOWN,
}


def rollout_icon(status: str) -> str:
    return _ROLLOUT.get(status, " ")


def replica_set_icon(status: str) -> str:
    return _REPLICA_SET.get(status, " ")


def analysis_icon(phase: str) -> str:
    """For AnalysisRuns, Experiments and analysis Jobs (all use AnalysisPhase)."""
    return _ANALYSIS.get(phase, " ")


def pod_icon(status: str) -> str:
    if status.startswith("Init:"):
        return PROGRESSING
    if status.startswith(("Signal:", "ExitCode:")):
        return BAD
    if status.endswith("Error") or status.startswith("Err"):
        return WARNING
    return _POD.get(status, " ")
