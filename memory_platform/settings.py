"""Settings for Memory Platform, read from the environment.

Every knob a deployment turns is an environment variable (see the README's configuration table).
With no DATABASE_URL the platform runs on an embedded PostgreSQL + pgvector kept in DATA_DIR.
"""

from __future__ import annotations

import secrets
import warnings
from datetime import timedelta
from pathlib import Path

from memory_platform import logs
from memory_platform.embedded_db import EmbeddedServer
from memory_platform.env import database_from_url, env_bool, env_choice, env_int, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(env_str("MEMORY_PLATFORM_DATA_DIR", str(BASE_DIR / "var"))).resolve()


def _secret_key() -> str:
    configured = env_str("SECRET_KEY")
    if configured:
        return configured
    # Without a configured key, keep a generated one in the data dir so sessions survive restarts.
    key_file = DATA_DIR / "secret_key"
    if key_file.exists():
        return key_file.read_text().strip()
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(50)
    key_file.write_text(key)
    key_file.chmod(0o600)
    return key


SECRET_KEY = _secret_key()
DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

# Behind a TLS-terminating proxy (production): trust its X-Forwarded-Proto, mark cookies secure,
# send HSTS and redirect plain HTTP. Off by default, so `make run` on http://127.0.0.1 works.
HTTPS = env_bool("HTTPS", False)
# OAuth clients may register http redirect URIs on loopback hosts only (RFC 8252; enforced in
# identity/validators.py), which django-oauth-toolkit's check cannot tell from any http.
SILENCED_SYSTEM_CHECKS = ["oauth2_provider.W008"]
if HTTPS:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SECURE_REDIRECT_EXEMPT = [r"^healthz$"]  # load balancers probe over plain HTTP
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31_536_000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
    if not SECURE_HSTS_PRELOAD:
        # Preloading commits the domain and its subdomains to HTTPS in browsers for good: the
        # owner of the domain opts in (SECURE_HSTS_PRELOAD=1); not doing so is not a warning.
        SILENCED_SYSTEM_CHECKS.append("security.W021")
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# Every page's Content-Security-Policy (django-csp): scripts and styles from this server only (no
# inline script anywhere, the API docs included), no frames, forms posting back here.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        # The admin and Swagger UI set style attributes.
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "frame-ancestors": ["'none'"],
        "form-action": ["'self'"],
    }
}

INSTALLED_APPS = [
    # Django's admin on the curators' site (curation/site.py).
    "curation.admin_config.CuratorAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "django.contrib.humanize",
    "axes",
    "csp",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "memory_platform",
    "organizations",
    "memories",
    "knowledge",
    "instructions",
    "lifecycle",
    "code_index",
    "curation",
    "mcp_api",
    "rest_api",
    "oauth2_provider",
    "mozilla_django_oidc",
    "identity",
    "transfer",
]

MIDDLEWARE = [
    # First: every line a request logs carries its id, and every answer (even a refusal) says it.
    "memory_platform.logs.RequestIdMiddleware",
    "memory_platform.metrics.RequestMetricsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "memory_platform.middleware.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    # Last: it answers a locked-out login (see LOGIN_FAILURE_LIMIT).
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "memory_platform.urls"
ASGI_APPLICATION = "memory_platform.asgi.application"
WSGI_APPLICATION = "memory_platform.wsgi.application"

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

DATABASE_URL = env_str("DATABASE_URL")
EMBEDDED_DATABASE = not DATABASE_URL
if DATABASE_URL:
    DATABASES = {"default": database_from_url(DATABASE_URL)}
else:
    DATABASES = {"default": EmbeddedServer(DATA_DIR).django_settings()}
# Connections come from a pool (psycopg_pool): a web process's threads share a few connections,
# checked before use, and a thread that goes idle holds none (under ASGI, where every request ran in
# a thread of its own, per-thread connections meant a new PostgreSQL backend per request).
DATABASE_POOL_MAX = env_int("DATABASE_POOL_MAX", 10)  # 0 turns the pool off (one connection per thread)
# Threads per process that read beside a request, each on a connection of its own taken from the
# pool (memory_platform.db.beside): a hybrid search's vector retriever runs beside its keyword
# retriever (at 136,533 memories, in process, its median 27.9 -> 19.5 ms with the same results for
# 200 questions of 200; see docs/explanation/performance.md). 0: one after the other, on the
# request's connection. The pool should hold WEB_THREADS + this many connections, and more.
DATABASE_READERS_BESIDE = env_int("DATABASE_READERS_BESIDE", 2)
# How long a request waits for a database connection before it answers 503 (database down,
# restarting, or every pooled connection busy): short, so clients learn at once and retry.
DATABASE_CONNECT_TIMEOUT = env_int("DATABASE_CONNECT_TIMEOUT", 3)
DATABASES["default"].setdefault("OPTIONS", {}).setdefault("connect_timeout", DATABASE_CONNECT_TIMEOUT)
# A pooled connection idle this long is checked (a round trip) before a request borrows it; one
# given back more recently is not (memory_platform.db.base.check_unless_just_used). 0: always.
DATABASE_POOL_CHECK_AFTER_MS = env_int("DATABASE_POOL_CHECK_AFTER_MS", 500)
# Connections keep state of their own: the few statements every request or search runs are prepared
# once per connection (memory_platform.db.prepared), and each connection has the search's HNSW
# settings for its session (memory_platform.db.base). Off behind a pooler in transaction mode, such
# as PgBouncer's, where the next statement may reach a server connection that has neither.
DATABASE_PREPARED_STATEMENTS = env_bool("DATABASE_PREPARED_STATEMENTS", True)
if DATABASE_POOL_MAX > 0:
    DATABASES["default"]["OPTIONS"]["pool"] = {
        "min_size": 1,
        "max_size": DATABASE_POOL_MAX,
        "timeout": DATABASE_CONNECT_TIMEOUT,
    }
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    # The pool checks a connection before handing it out when health checks are on (unless it was
    # given back within DATABASE_POOL_CHECK_AFTER_MS).
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
else:
    DATABASES["default"]["CONN_MAX_AGE"] = env_int("DATABASE_CONN_MAX_AGE", 60)
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
# Lets concurrent test runs against one server use separate test databases.
DATABASES["default"]["TEST"] = {"NAME": env_str("TEST_DATABASE_NAME") or None}
# A streaming replica the searches read from when it has what they need (memory_platform.db.replicas);
# connected as the primary is (pool, timeouts), and in tests the primary's own test database.
DATABASE_REPLICA_URL = env_str("DATABASE_REPLICA_URL")
if DATABASE_REPLICA_URL:
    DATABASES["replica"] = database_from_url(DATABASE_REPLICA_URL)
    DATABASES["replica"]["OPTIONS"] = {**DATABASES["default"]["OPTIONS"], **DATABASES["replica"]["OPTIONS"]}
    for _name in ("CONN_MAX_AGE", "CONN_HEALTH_CHECKS"):
        DATABASES["replica"][_name] = DATABASES["default"][_name]
    DATABASES["replica"]["TEST"] = {"MIRROR": "default"}
DATABASE_ROUTERS = ["memory_platform.db.replicas.ReadRouter"]
REPLICA_MAX_LAG_SECONDS = env_int("REPLICA_MAX_LAG_SECONDS", 30)
REPLICA_RETRY_SECONDS = env_int("REPLICA_RETRY_SECONDS", 30)
# How long a write's WAL position is kept for the searches of its organization: past it, a replica
# that is not REPLICA_MAX_LAG_SECONDS behind has replayed it anyway.
REPLICA_WRITTEN_SECONDS = max(60, 10 * REPLICA_MAX_LAG_SECONDS)

REDIS_URL = env_str("REDIS_URL")

# Prometheus metrics at /metrics (memory_platform/metrics.py), for scrapers bearing this token; unset,
# /metrics does not exist (404).
METRICS_TOKEN = env_str("METRICS_TOKEN", "")

# The rate-limit counters (memory_platform.throttling) live in Redis when there is one (any number
# of machines, atomic INCR), else in PostgreSQL (one upsert a request). Nothing else is cached.
if REDIS_URL:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

AUTH_USER_MODEL = "organizations.User"
# Logins (the admin's and the browsable API's) go through django-axes first: after
# LOGIN_FAILURE_LIMIT wrong passwords for one username from one address, that pair is refused
# (HTTP 429) for LOGIN_LOCKOUT_MINUTES, the right password included; a success resets the count.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("LOGIN_LOCKOUT_MINUTES", 15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_VERBOSE = False
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# WhiteNoise hands Django a synchronous file iterator; under ASGI Django buffers it and warns on
# every static file. Admin CSS is small, so the buffering is harmless and the warning is noise.
warnings.filterwarnings("ignore", message="StreamingHttpResponse must consume synchronous iterators")

STATIC_URL = "static/"
STATIC_ROOT = DATA_DIR / "static"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "memory_platform.staticfiles.ChangedFilesCompressedStorage"},
}

# Log lines carry the request's id, organization and principal (memory_platform/logs.py): JSON by
# default on a PostgreSQL server of the platform's own (deployments), text on the embedded database.
LOG_FORMAT = env_choice("LOG_FORMAT", "text" if EMBEDDED_DATABASE else "json", logs.FORMATS)
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"context": {"()": "memory_platform.logs.ContextFilter"}},
    "formatters": {"line": {"()": "memory_platform.logs.formatter", "kind": LOG_FORMAT}},
    "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "line", "filters": ["context"]}},
    "root": {"handlers": ["stderr"], "level": env_str("LOG_LEVEL", "INFO")},
    # The MCP SDK logs two INFO lines per request ("Processing request", "session manager started"):
    # noise at any load, and CPU under it. Its warnings and errors still show.
    "loggers": {"mcp": {"level": env_str("MCP_LOG_LEVEL", "WARNING")}},
}

# Each app's own settings (its conf module); what the project composes from them follows (the names
# it reads imported by name too).
from code_index.conf import *  # noqa: E402, F403
from code_index.conf import CODE_INDEX_WATCH_INTERVAL_SECONDS  # noqa: E402
from identity.conf import *  # noqa: E402, F403
from identity.conf import PASSWORD_LOGIN, SSO_OIDC_ISSUER  # noqa: E402
from lifecycle.conf import *  # noqa: E402, F403
from mcp_api.conf import *  # noqa: E402, F403
from memories.conf import *  # noqa: E402, F403
from rest_api.conf import *  # noqa: E402, F403

# API tokens record their last use to this resolution (one write a minute at most per token).
API_TOKEN_LAST_USED_RESOLUTION_SECONDS = 60

# Celery: Redis in production; with no REDIS_URL a broker kept in files (CELERY_BROKER_DIR, by default
# DATA_DIR/broker), so a local worker and beat run with nothing else installed.
CELERY_BROKER_DIR = Path(env_str("CELERY_BROKER_DIR", str(DATA_DIR / "broker"))).resolve()
# A task a worker had taken when it died (tasks are acknowledged when they end) goes back to the queue
# this long after it was taken (Redis; kombu's default is an hour). A task still running then is
# delivered once more: every task is idempotent, and the long ones hold a lock the second waits on.
CELERY_VISIBILITY_TIMEOUT_SECONDS = env_int("CELERY_VISIBILITY_TIMEOUT_SECONDS", 900)
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {"visibility_timeout": CELERY_VISIBILITY_TIMEOUT_SECONDS}
else:
    (CELERY_BROKER_DIR / "processed").mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_URL = "filesystem://localhost//"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(CELERY_BROKER_DIR),
        "data_folder_out": str(CELERY_BROKER_DIR),
        "processed_folder": str(CELERY_BROKER_DIR / "processed"),
        # Exchange tables (worker remote control); kombu's default is a folder in the working directory.
        "control_folder": str(CELERY_BROKER_DIR / "control"),
        "store_processed": False,
    }
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# One queue name per deployment sharing a Redis (or per test run): workers consume only their own.
CELERY_TASK_DEFAULT_QUEUE = env_str("CELERY_QUEUE", "celery")
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# Tasks are idempotent, so a task cut off by a crash runs again rather than being lost; one message
# at a time keeps a long embedding batch from holding others hostage.
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TIMEZONE = TIME_ZONE
CELERY_BEAT_SCHEDULE_FILENAME = str(DATA_DIR / "celerybeat-schedule")
# The worker's sign of life (memory_platform/heartbeat.py): beat sends it, the worker records it.
HEARTBEAT_INTERVAL_SECONDS = env_int("HEARTBEAT_INTERVAL_SECONDS", 30)
HEARTBEAT_STALE_SECONDS = env_int("HEARTBEAT_STALE_SECONDS", 120)
CELERY_BEAT_SCHEDULE: dict[str, object] = {
    "worker-heartbeat": {
        "task": "memory_platform.tasks.worker_heartbeat",
        "schedule": float(HEARTBEAT_INTERVAL_SECONDS),
        "options": {"expires": float(HEARTBEAT_INTERVAL_SECONDS)},
    },
    # Embeds whatever was stored while the provider was down and whose own backfill gave up. A sweep
    # that waited in the queue past the next one is dropped (a stopped worker must not pile them up).
    "memory-embed-pending": {
        "task": "memories.tasks.memory_embed_pending",
        "schedule": 60.0,
        "options": {"expires": 60.0},
    },
    # Organizations that grew past SEARCH_EXACT_SCAN_LIMIT memories get their own search indexes
    # (memories/search/tenant_indexes.py); one sweep at a time, a late one dropped.
    "memory-index-tenants": {
        "task": "memories.tasks.memory_index_tenants",
        "schedule": float(env_int("TENANT_INDEX_INTERVAL_SECONDS", 60)),
        "options": {"expires": 60.0},
    },
    "lifecycle-expire": {
        "task": "lifecycle.tasks.lifecycle_expire_all",
        "schedule": float(env_int("EXPIRY_INTERVAL_SECONDS", 300)),
        "options": {"expires": 300.0},
    },
    "lifecycle-decay": {
        "task": "lifecycle.tasks.lifecycle_decay_all",
        "schedule": float(env_int("DECAY_INTERVAL_SECONDS", 86400)),
        "options": {"expires": 3600.0},
    },
    # Duplicate detection and merges, one task per organization (see lifecycle/consolidation.py).
    "lifecycle-consolidate": {
        "task": "lifecycle.tasks.lifecycle_consolidate_all",
        "schedule": float(env_int("CONSOLIDATION_INTERVAL_SECONDS", 3600)),
        "options": {"expires": 600.0},
    },
    # Watched code indexes are re-scanned, and runs a dead worker left open are closed.
    "code-index-watch": {
        "task": "code_index.tasks.code_index_watch",
        "schedule": float(CODE_INDEX_WATCH_INTERVAL_SECONDS),
        "options": {"expires": 60.0},
    },
}


# Every interface reads JSON through memory_platform/json_input.py: no deeper than this, valid Unicode.
JSON_MAX_DEPTH = env_int("JSON_MAX_DEPTH", 32)

if SSO_OIDC_ISSUER:
    AUTHENTICATION_BACKENDS.insert(1, "identity.sso.SingleSignOnBackend")
    OIDC_RP_CLIENT_ID = env_str("SSO_OIDC_CLIENT_ID", "")
    OIDC_RP_CLIENT_SECRET = env_str("SSO_OIDC_CLIENT_SECRET", "")
    OIDC_RP_SIGN_ALGO = "RS256"
    OIDC_RP_SCOPES = env_str("SSO_OIDC_SCOPES", "openid email profile groups")
    OIDC_AUTHENTICATE_CLASS = "identity.sso.AuthenticationRequestView"
    OIDC_USE_PKCE = True
    LOGIN_REDIRECT_URL = "/admin/"
    LOGIN_REDIRECT_URL_FAILURE = "/admin/login/?sso=failed"
if not PASSWORD_LOGIN:
    AUTHENTICATION_BACKENDS.remove("django.contrib.auth.backends.ModelBackend")

API_THROTTLE_RATE = env_str("API_THROTTLE_RATE", "1200/min")  # per token or person; empty turns it off
