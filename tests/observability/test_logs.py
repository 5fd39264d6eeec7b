"""Structured JSON logs carry the request id and never a secret."""

from __future__ import annotations

import io
import json
import logging
from typing import Any

import pytest

from dashboard.observability.logs import JsonFormatter, RedactFilter, RequestIdFilter, redact, request_id

SECRETS = [
    ("Authorization: Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl", "eyJhbGci"),
    ("connecting to postgres://rollouts:hunter2@db:5432/rollouts", "hunter2"),
    ("posting to https://hooks.slack.com/services/T000/B000/XXXXSECRET", "XXXXSECRET"),
    ("config {'client_secret': 'abc123def', 'token': 'sha256~tok'}", "abc123def"),
    ("GET /callback?code=1&access_token=qwerty123 failed", "qwerty123"),
    ("headers={'Authorization': 'Basic dXNlcjpwYXNz'}", "dXNlcjpwYXNz"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIabc\n-----END RSA PRIVATE KEY-----", "MIIabc"),
]


@pytest.mark.parametrize(("text", "secret"), SECRETS)
def test_secrets_are_redacted(text: str, secret: str) -> None:
    assert secret not in redact(text)
    assert "***" in redact(text)


def test_ordinary_text_is_left_alone() -> None:
    text = "prod/shop/checkout promoted to step 3/6 (weight 50) by olivia"
    assert redact(text) == text


def capture(logger_name: str = "test.logs") -> tuple[logging.Logger, io.StringIO]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(RequestIdFilter())
    handler.addFilter(RedactFilter())
    logger = logging.getLogger(logger_name)
    logger.handlers = [handler]
    logger.propagate = False
    logger.setLevel(logging.INFO)
    return logger, stream


def test_a_log_line_is_one_json_object_with_the_request_id() -> None:
    logger, stream = capture()
    token = request_id.set("req-42")
    try:
        logger.info("promoted %s with token=%s", "checkout", "s3cr3t-value", extra={"cluster": "prod"})
    finally:
        request_id.reset(token)
    entry = json.loads(stream.getvalue())
    assert entry["request_id"] == "req-42" and entry["cluster"] == "prod" and entry["level"] == "INFO"
    assert "s3cr3t-value" not in stream.getvalue()


def test_tracebacks_are_redacted_too() -> None:
    logger, stream = capture("test.logs.exc")
    try:
        raise RuntimeError("cannot reach https://user:pa55word@example.com")
    except RuntimeError:
        logger.exception("failed")
    entry = json.loads(stream.getvalue())
    assert "RuntimeError" in entry["exc"] and "pa55word" not in stream.getvalue()


@pytest.mark.django_db
def test_requests_get_an_id_that_is_logged_and_returned(
    client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="rollouts_ui.request"):
        response = client.get("/api/v1/does-not-exist", HTTP_X_REQUEST_ID="abc-123")
    assert response["X-Request-ID"] == "abc-123"
    (record,) = [r for r in caplog.records if r.name == "rollouts_ui.request"]
    assert record.request_id == "abc-123" and record.status == 404  # type: ignore[attr-defined]
    assert (
        client.get("/healthz", HTTP_X_REQUEST_ID="bad id with spaces")["X-Request-ID"] != "bad id with spaces"
    )


def test_settings_use_the_json_handler_with_redaction() -> None:
    from django.conf import settings

    handler = settings.LOGGING["handlers"]["console"]
    assert handler["filters"] == ["request_id", "redact"]
    assert settings.LOGGING["loggers"]["uvicorn.error"]["handlers"] == ["console"]
