"""Structured logs: one JSON object per line, with the request id, and never a secret.

- ``JsonFormatter`` writes ``{"time", "level", "logger", "message", "request_id", …extra, "exc"}``.
- ``RedactFilter`` (installed on the handler, so it sees every record of every logger) rewrites the
  message, its arguments and the traceback text: bearer tokens and ``Authorization`` values, passwords
  in URLs, ``token=``/``secret=``/``password=``-style pairs, Slack webhook paths, JWTs and PEM keys become
  ``***``. Redaction works on the text, not on call sites, so a secret logged by a library is caught too.
- ``request_id`` lives in a context variable set by ``RequestIdMiddleware``; it follows the request
  through sync and async code (contextvars are copied into ``sync_to_async`` threads).

``logging_config(level, fmt)`` builds the ``LOGGING`` dict for settings (``LOG_FORMAT``: ``json`` or
``plain``); uvicorn's and Celery's loggers are routed through the same handler.

Non-goals: no log shipping (stdout is collected by the platform), no sampling.
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
from datetime import UTC, datetime
from typing import Any

request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="")

MASK = "***"
# Each pattern keeps its first group (the label) and masks what follows it.
_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.S), MASK),
    (re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{6,}"), rf"\1 {MASK}"),
    (re.compile(r"(?i)(authorization['\"]?\s*[:=]\s*['\"]?)[^'\",}\s]+(?:\s+[^'\",}\s]+)?"), rf"\1{MASK}"),
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^/\s:@]*:)[^@\s/]+@"), rf"\1{MASK}@"),
    (re.compile(r"(?i)(hooks\.slack\.com/(?:services|workflows|triggers)/)[^\s'\"]+"), rf"\1{MASK}"),
    (re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*"), MASK),
    (
        re.compile(
            r"(?i)([\"']?\b[a-z_-]*(?:token|secret|password|passwd|api[_-]?key|client[_-]?secret|signature)"
            r"[\"']?\s*[:=]\s*[\"']?)[^\"'\s,&;}]+"
        ),
        rf"\1{MASK}",
    ),
)


def redact(text: str) -> str:
    """``text`` with every secret-looking part replaced by ``***``."""
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


class RedactFilter(logging.Filter):
    """Rewrites a record so neither its message nor its traceback can carry a secret."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a bad format string must not lose the record
            message = f"{record.msg!r} {record.args!r}"
        record.msg, record.args = redact(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
            record.exc_info = None  # the redacted text is what gets written
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


class RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if not getattr(record, "request_id", None):
            record.request_id = request_id.get()
        return True


# Attributes every LogRecord has; anything else was passed with ``extra=`` and is written as a field.
_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_") and key not in entry:
                entry[key] = value if isinstance(value, str | int | float | bool | type(None)) else str(value)
        if not entry.get("request_id"):
            entry.pop("request_id", None)
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            entry["exc"] = record.exc_text
        return json.dumps(entry, ensure_ascii=False, default=str)


class PlainFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        rid = getattr(record, "request_id", "")
        return f"{text} [request {rid}]" if rid else text


def logging_config(level: str, fmt: str) -> dict[str, Any]:
    """The ``LOGGING`` setting: one stdout handler, redacting, with request ids, JSON or plain."""
    formatter = "json" if fmt == "json" else "plain"
    routed = {"handlers": ["console"], "level": level, "propagate": False}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {
            "redact": {"()": "dashboard.observability.logs.RedactFilter"},
            "request_id": {"()": "dashboard.observability.logs.RequestIdFilter"},
        },
        "formatters": {
            "json": {"()": "dashboard.observability.logs.JsonFormatter"},
            "plain": {"()": "dashboard.observability.logs.PlainFormatter"},
        },
        "handlers": {
            "console": {
                "class": "logging.StreamHandler",
                "formatter": formatter,
                "filters": ["request_id", "redact"],
            }
        },
        "root": {"handlers": ["console"], "level": level},
        # uvicorn and Celery install their own handlers; send theirs through ours (one format, redacted).
        "loggers": {name: dict(routed) for name in ("uvicorn", "uvicorn.error", "uvicorn.access", "celery")},
    }
