"""Settings for rollouts-ui, all read from the environment (see README "Configuration").

With nothing set, the embedded default works out of the box: SQLite and the in-memory channel layer.
With ``DATABASE_URL`` / ``REDIS_URL`` set, PostgreSQL and Redis are used. Every value is checked here
(``rollouts_ui.settings_check``): a bad one stops any process at start-up with one line naming it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dj_database_url

from dashboard import compiled
from dashboard.observability.logs import logging_config
from rollouts_ui import settings_check
from rollouts_ui.env import (
    collect_problems,
    env_bool,
    env_int,
    env_json,
    env_list,
    env_str,
    env_url,
    problem,
    stop_collecting,
)

_problems = collect_problems()  # bad values are noted, then reported together at the end of this file
BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool("DEBUG", False)
_INSECURE_DEV_KEY = "insecure-embedded-mode-key-change-me"
SECRET_KEY = env_str("SECRET_KEY", _INSECURE_DEV_KEY)
if SECRET_KEY == _INSECURE_DEV_KEY and env_bool("REQUIRE_SECRET_KEY", False):
    problem("SECRET_KEY must be set when REQUIRE_SECRET_KEY is true")
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "dashboard",
    "dashboard.access",
    "dashboard.actions",
    "dashboard.gitops",
    "dashboard.flagger_gates",
    "dashboard.notify",
    "dashboard.guardrails",
]

MIDDLEWARE = [
    "dashboard.observability.middleware.RequestIdMiddleware",  # request ids + access log (first: times all)
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "dashboard.observability.middleware.LiveBusDownMiddleware",  # Redis down: 503 with the outage, not 500
]

ROOT_URLCONF = "rollouts_ui.urls"
ASGI_APPLICATION = "rollouts_ui.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- stores -------------------------------------------------------------------------------------
DATABASE_URL = env_url("DATABASE_URL", schemes=("postgres", "postgresql", "sqlite"))
# No persistent connections: under ASGI every request runs in its own thread, and a connection kept
# per thread made 200 simultaneous page loads open 200 connections (PostgreSQL allows 100).
_database: dict[str, Any] = {"ENGINE": "django.db.backends.sqlite3", "NAME": BASE_DIR / "db.sqlite3"}
if DATABASE_URL:
    try:
        _database = {**dj_database_url.parse(DATABASE_URL, conn_max_age=0, conn_health_checks=True)}
    except ValueError as _error:
        problem(f"DATABASE_URL cannot be read: {_error}")
if _database["ENGINE"] == "django.db.backends.sqlite3":
    # Several threads write at once (requests, the history recorder, Flagger's gate calls): every transaction
    # takes the write lock when it begins and waits for it, instead of a reader failing "database is
    # locked" when it upgrades to a writer; WAL lets pages read while someone writes.
    _database["OPTIONS"] = {
        **_database.get("OPTIONS", {}),
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
        "init_command": "PRAGMA journal_mode=WAL;",
    }
if _database["ENGINE"] == "django.db.backends.postgresql":
    # A database that does not answer is an error after a few seconds, not a hang (start-up, probes).
    _database["OPTIONS"] = {"connect_timeout": settings_check.DATABASE_CONNECT_TIMEOUT}
# PostgreSQL: a bounded pool per process instead (psycopg_pool); a burst of requests queues for it.
DATABASE_POOL_SIZE = env_int("DATABASE_POOL_SIZE", 10, minimum=0, maximum=1000)  # 0: no pool
if _database["ENGINE"] == "django.db.backends.postgresql" and DATABASE_POOL_SIZE:
    _pool = {"min_size": 1, "max_size": DATABASE_POOL_SIZE, "timeout": 20}
    _database["OPTIONS"] = {**_database.get("OPTIONS", {}), "pool": _pool}
DATABASES = {"default": _database}

REDIS_URL = env_url("REDIS_URL", schemes=("redis", "rediss", "unix"))
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            # socket_timeout None: redis-py's default of 5 s makes the layer drop idle websockets.
            "CONFIG": {"hosts": [{"address": REDIS_URL, "socket_timeout": None}], "capacity": 1000},
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# Sessions live in the database only: with a Redis cache in front (cached_db), every request — the login
# page included — failed while Redis was down, and a logout during an outage could leave the session
# alive in the cache afterwards. One indexed query per request is the price.
SESSION_ENGINE = "django.contrib.sessions.backends.db"

# --- Celery (actions); embedded mode runs tasks inline --------------------------------------------
CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_RESULT_BACKEND = None
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL
CELERY_TASK_EAGER_PROPAGATES = True
# One queue per installation sharing a Redis (and per browser test, so no stray worker takes its tasks).
CELERY_TASK_DEFAULT_QUEUE = env_str("CELERY_TASK_DEFAULT_QUEUE", "celery")

# --- product settings ----------------------------------------------------------------------------
ANONYMOUS_READ_ONLY = env_bool("ANONYMOUS_READ_ONLY", False)
HISTORY_RETENTION_DAYS = env_int("HISTORY_RETENTION_DAYS", 90, minimum=1)
# The environments page: what makes rollouts one application (label:<key>, applicationset or name) and the
# promotion order of environments (dashboard.domain.environments).
ENVIRONMENTS_GROUP_BY = env_str("ENVIRONMENTS_GROUP_BY", "label:app.kubernetes.io/name")
if not (ENVIRONMENTS_GROUP_BY in ("applicationset", "name") or ENVIRONMENTS_GROUP_BY.startswith("label:")):
    problem(
        f"ENVIRONMENTS_GROUP_BY: expected label:<key>, applicationset or name, got {ENVIRONMENTS_GROUP_BY!r}"
    )
ENVIRONMENTS_ORDER = env_list("ENVIRONMENTS_ORDER", ["dev", "test", "qa", "staging", "prod"])
LIVE_STREAM_MAXLEN = env_int("LIVE_STREAM_MAXLEN", 10_000, minimum=100)
LIVE_REDIS_PREFIX = env_str("LIVE_REDIS_PREFIX", "rollouts-ui:")
STUCK_AT_STEP_ZERO_SECONDS = env_int("STUCK_AT_STEP_ZERO_SECONDS", 300, minimum=1)
# How long a stopped watcher's handoff (its cache, for the next watcher to resume from) stays in Redis;
# 0 turns it off (dashboard.kube.handoff).
WATCHER_HANDOFF_SECONDS = env_int("WATCHER_HANDOFF_SECONDS", 300, minimum=0, maximum=3600)
# Prometheus per cluster ("prod=http://prometheus.prod:9090,…"); see dashboard/metrics/config.py.
PROMETHEUS_URLS = env_str("PROMETHEUS_URLS", "")
PROMETHEUS_TIMEOUT_SECONDS = env_int("PROMETHEUS_TIMEOUT_SECONDS", 5, minimum=1, maximum=60)
PROMETHEUS_PANEL_QUERIES = env_json("PROMETHEUS_PANEL_QUERIES", {})

# --- access control and actions (dashboard.access, dashboard.actions) ------------------------------
RBAC_POLICY_FILE = env_str("RBAC_POLICY_FILE", "")
RBAC_DEFAULT_ROLE = env_str("RBAC_DEFAULT_ROLE", "")
ACCESS_CACHE_SECONDS = env_int("ACCESS_CACHE_SECONDS", 5, minimum=0)
CLUSTERS = env_str("CLUSTERS", "")
KUBE_IMPERSONATE = env_bool("KUBE_IMPERSONATE", False)
ACTIONS_RATE_LIMIT = env_int("ACTIONS_RATE_LIMIT", 20, minimum=1)
ACTIONS_RATE_WINDOW_SECONDS = env_int("ACTIONS_RATE_WINDOW_SECONDS", 60, minimum=1)
ACTIONS_MAX_RETRIES = env_int("ACTIONS_MAX_RETRIES", 3, minimum=0, maximum=10)
ACTIONS_WAIT_SECONDS = env_int("ACTIONS_WAIT_SECONDS", 10, minimum=0)
OIDC_ISSUER = env_str("OIDC_ISSUER", "")
OIDC_CLIENT_ID = env_str("OIDC_CLIENT_ID", "")
OIDC_CLIENT_SECRET = env_str("OIDC_CLIENT_SECRET", "")
OIDC_GROUPS_CLAIM = env_str("OIDC_GROUPS_CLAIM", "groups")
OIDC_USERNAME_CLAIM = env_str("OIDC_USERNAME_CLAIM", "preferred_username")
OIDC_SCOPES = env_str("OIDC_SCOPES", "openid profile email groups")

# --- GitOps chain (dashboard.gitops): webhook receivers for merges and pipelines ------------------------
# Repository URL → {"provider": "github"|"gitlab"|"gitea", "secret": "...", "ci_token": "..."}; JSON inline or
# the path of a JSON file. Validated when the app loads (dashboard.gitops.config).
GITOPS_REPOSITORIES = env_json("GITOPS_REPOSITORIES", {})
GITOPS_WEBHOOK_MAX_BYTES = env_int("GITOPS_WEBHOOK_MAX_BYTES", 2 * 1024 * 1024, minimum=1024)
GITOPS_WEBHOOK_RATE_PER_MINUTE = env_int("GITOPS_WEBHOOK_RATE_PER_MINUTE", 120, minimum=1)

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_SAMESITE = "Lax"
SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True

LOG_LEVEL = env_str("LOG_LEVEL", "INFO").upper()
if LOG_LEVEL not in {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}:
    problem(f"LOG_LEVEL={LOG_LEVEL!r} is not a logging level (DEBUG, INFO, WARNING, ERROR)")
    LOG_LEVEL = "INFO"
# Structured logs (dashboard.observability.logs): JSON lines with request ids; secrets redacted.
LOG_FORMAT = env_str("LOG_FORMAT", "json").lower()
if LOG_FORMAT not in {"json", "plain"}:
    problem(f"LOG_FORMAT={LOG_FORMAT!r} is not json or plain")
    LOG_FORMAT = "json"
LOGGING = logging_config(LOG_LEVEL, LOG_FORMAT)
# Acted on when the `dashboard` package is imported, before these settings (dashboard/compiled.py): a bad
# value, or under "require" a missing or stale build, has stopped the process there already.
DOMAIN_COMPILED = compiled.mode({"DOMAIN_COMPILED": env_str("DOMAIN_COMPILED", "auto")})
METRICS_TOKEN = env_str("METRICS_TOKEN", "")  # when set, /metrics wants "Authorization: Bearer <token>"

# --- notifications (dashboard.notify) ----------------------------------------------------------------
DASHBOARD_URL = env_str("DASHBOARD_URL", "")  # e.g. https://rollouts.example.com, for links in messages
NOTIFY_RATE_PER_MINUTE = env_int("NOTIFY_RATE_PER_MINUTE", 20, minimum=1)
NOTIFY_MAX_ATTEMPTS = env_int("NOTIFY_MAX_ATTEMPTS", 8, minimum=1, maximum=30)
NOTIFY_TIMEOUT_SECONDS = env_int("NOTIFY_TIMEOUT_SECONDS", 5, minimum=1, maximum=60)
NOTIFY_MAX_AGE_MINUTES = env_int("NOTIFY_MAX_AGE_MINUTES", 60, minimum=1)

# --- freshness of the live data (dashboard.live.freshness) ----------------------------------------------
# A cluster whose watches saw nothing for this long is shown "stale since …" and named by /readyz.
LIVE_STALE_AFTER_SECONDS = env_int("LIVE_STALE_AFTER_SECONDS", 120, minimum=10, maximum=3600)
# /readyz names what is down to anonymous callers only when this is true (else: status only).
READYZ_DETAILS_PUBLIC = env_bool("READYZ_DETAILS_PUBLIC", False)

settings_check.finish(globals(), stop_collecting())
