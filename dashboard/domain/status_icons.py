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


# --- the page's icons and tones --------------------------------------------------------------------------
# One map for every page: (kind, status word) → (icon name, tone name). The browser maps a tone name to a CSS
# class and an icon name to a glyph, nothing more, so Degraded, a failed Flagger canary and a critical
# finding can never come out in the neutral accent. Tones: healthy, progressing, paused, critical, warning,
# info, unknown.

TONES = ("healthy", "progressing", "paused", "critical", "warning", "info", "unknown")

_PAGE: dict[str, dict[str, tuple[str, str]]] = {
    "rollout": {
        "Healthy": ("healthy", "healthy"),
        "Progressing": ("progressing", "progressing"),
        "Paused": ("paused", "paused"),
        "Degraded": ("degraded", "critical"),
        "Error": ("warning", "warning"),
        "InvalidSpec": ("warning", "warning"),
    },
    # Flagger's own phases, for pages that show the phase beside the status.
    "flagger": {
        "Initializing": ("progressing", "progressing"),
        "Initialized": ("healthy", "healthy"),
        "Waiting": ("paused", "paused"),
        "Progressing": ("progressing", "progressing"),
        "WaitingPromotion": ("paused", "paused"),
        "Promoting": ("progressing", "progressing"),
        "Finalising": ("progressing", "progressing"),
        "Succeeded": ("healthy", "healthy"),
        "Failed": ("degraded", "critical"),
        "Terminating": ("progressing", "progressing"),
        "Terminated": ("unknown", "unknown"),
    },
    "argocd": {
        "Healthy": ("healthy", "healthy"),
        "Progressing": ("progressing", "progressing"),
        "Suspended": ("paused", "paused"),
        "Degraded": ("degraded", "critical"),
        "Missing": ("warning", "warning"),
        "Unknown": ("unknown", "unknown"),
    },
    "replicaset": {
        "Healthy": ("healthy", "healthy"),
        "Progressing": ("progressing", "progressing"),
        "ReplicaFailure": ("degraded", "critical"),
        "ScaledDown": ("unknown", "unknown"),
    },
    "analysis": {
        "Successful": ("healthy", "healthy"),
        "Running": ("progressing", "progressing"),
        "Pending": ("paused", "paused"),
        "Failed": ("degraded", "critical"),
        "Error": ("critical", "critical"),
        "Inconclusive": ("warning", "warning"),
    },
    "severity": {
        "critical": ("critical", "critical"),
        "warning": ("warning", "warning"),
        "info": ("info", "info"),
    },
    # The ReplicaSet roles of ``rs_roles``.
    "role": {
        "stable": ("healthy", "healthy"),
        "active": ("healthy", "healthy"),
        "canary": ("progressing", "progressing"),
        "preview": ("progressing", "progressing"),
        "scaling-down": ("unknown", "unknown"),
        "orphaned": ("warning", "critical"),
        "old": ("unknown", "unknown"),
    },
    # Icon names the presenters already use, read as a status: their tone.
    "icon": {
        "healthy": ("healthy", "healthy"),
        "progressing": ("progressing", "progressing"),
        "paused": ("paused", "paused"),
        "degraded": ("degraded", "critical"),
        "critical": ("critical", "critical"),
        "warning": ("warning", "warning"),
        "info": ("info", "info"),
    },
}


def page_icon(kind: str, status: object) -> str:
    """The icon name of ``status`` (a word of ``kind``'s vocabulary) on the pages; "unknown" if none."""
    return _PAGE.get(kind, {}).get(str(status), ("unknown", "unknown"))[0]


def page_tone(kind: str, status: object) -> str:
    """The tone (colour) name of ``status`` on the pages: one of ``TONES``."""
    return _PAGE.get(kind, {}).get(str(status), ("unknown", "unknown"))[1]


def tone_of_icon(icon: object) -> str:
    return page_tone("icon", icon)


def with_tones(document: object) -> object:
    """``document`` with a ``tone`` beside every ``icon`` that has none (in place; returns it), so every
    presented page carries the colour of each icon from this one map."""
    if isinstance(document, dict):
        if isinstance(document.get("icon"), str) and "tone" not in document:
            document["tone"] = tone_of_icon(document["icon"])
        for value in document.values():
            if isinstance(value, dict | list):
                with_tones(value)
    elif isinstance(document, list):
        for item in document:
            if isinstance(item, dict | list):
                with_tones(item)
    return document
