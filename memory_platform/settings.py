"""Settings for Memory Platform, read from the environment.

Every knob a deployment turns is an environment variable (see the README's configuration table).
With no DATABASE_URL the platform runs on an embedded PostgreSQL + pgvector kept in DATA_DIR.
"""

from __future__ import annotations

import secrets
import warnings
from datetime import timedelta
from pathlib import Path

from memory_platform.embedded_db import EmbeddedServer
from memory_platform.env import database_from_url, env_bool, env_choice, env_float, env_int, env_list, env_str

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
]

MIDDLEWARE = [
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

REDIS_URL = env_str("REDIS_URL")

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
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["stderr"], "level": env_str("LOG_LEVEL", "INFO")},
    # The MCP SDK logs two INFO lines per request ("Processing request", "session manager started"):
    # noise at any load, and CPU under it. Its warnings and errors still show.
    "loggers": {"mcp": {"level": env_str("MCP_LOG_LEVEL", "WARNING")}},
}

# Memory platform
MEMORY_BATCH_MAX_ENTRIES = env_int("MEMORY_BATCH_MAX_ENTRIES", 500)
API_TOKEN_LAST_USED_RESOLUTION_SECONDS = 60

# Embeddings. "local" runs all-MiniLM-L6-v2 offline on onnxruntime; "openai" calls any
# OpenAI-compatible /v1/embeddings endpoint (OpenAI, Ollama, vLLM, TEI).
EMBEDDING_PROVIDER = env_str("EMBEDDING_PROVIDER", "local")
EMBEDDING_BASE_URL = env_str("EMBEDDING_BASE_URL")
EMBEDDING_MODEL = env_str("EMBEDDING_MODEL")
EMBEDDING_API_KEY = env_str("EMBEDDING_API_KEY")
# The vector column holds 384 dimensions; an HTTP model must produce (or be asked for) that size.
EMBEDDING_DIMENSIONS = 384
EMBEDDING_TIMEOUT = float(env_int("EMBEDDING_TIMEOUT", 30))
# After a failed call to an HTTP embedding endpoint, calls fail at once for this long (writes go to
# pending, search to keywords), then one call probes it (memories/embeddings/http.py).
EMBEDDING_RETRY_SECONDS = float(env_int("EMBEDDING_RETRY_SECONDS", 30))
# How long a write, and a search, wait for an HTTP endpoint's vector before going on without it (the
# memory stored pending and embedded in the background; the search answered from keywords, saying so).
# EMBEDDING_TIMEOUT still bounds the call itself, which background work waits out.
EMBEDDING_WRITE_WAIT_SECONDS = env_int("EMBEDDING_WRITE_WAIT_MS", 500) / 1000
EMBEDDING_QUERY_WAIT_SECONDS = env_int("EMBEDDING_QUERY_WAIT_MS", 1000) / 1000
EMBEDDING_THREADS = env_int("EMBEDDING_THREADS", 0)
# The local model computes in int8 (memories/embeddings/local.py): 2.6 times less CPU per text, for
# vectors within a cosine of 0.985 of the float model's. false: compute in float.
EMBEDDING_INT8 = env_bool("EMBEDDING_INT8", True)
# Vectors of this many recent search queries are kept per process (1.5 KB each): agents repeat
# questions (a recall at every session start, the same lookups across runs), and embedding one costs
# ~6 ms of CPU, a fifth of a search's. 0 turns it off. Keyed by the provider, so a new model misses.
EMBEDDING_QUERY_CACHE_SIZE = env_int("EMBEDDING_QUERY_CACHE_SIZE", 4096)

# Search. How hybrid search ranks (the calibrated model, or a legacy fusion), the weights of meaning
# and words, how many candidates each retriever contributes, and below how many rows a scope is
# scanned exactly instead of via HNSW.
SEARCH_FUSION = env_str("SEARCH_FUSION", "model")
SEARCH_VECTOR_WEIGHT = env_float("SEARCH_VECTOR_WEIGHT", 1.0)
SEARCH_KEYWORD_WEIGHT = env_float("SEARCH_KEYWORD_WEIGHT", 1.5)
# 50 (at least 5 x the page): LoCoMo R@10 0.758 and MRR 0.557, against 0.756 and 0.557 with 100, for
# a search that costs 11% less CPU (the ranking model scores the best 30 of them either way).
SEARCH_CANDIDATES = env_int("SEARCH_CANDIDATES", 50)
# An exact scan reads every vector of the scope (~3.4 us a row): at 6.5k rows 22 ms against 5-9 ms
# through HNSW, whose top 10 then held 99.7% of the exact top 10 (and 97% of the top 100). Around
# 2k rows both cost the same, and below that the exact answer is free.
SEARCH_EXACT_SCAN_LIMIT = env_int("SEARCH_EXACT_SCAN_LIMIT", 2000)
SEARCH_HNSW_EF_SEARCH = env_int("SEARCH_HNSW_EF_SEARCH", 100)
# Keyword search (and its word counts) in an organization of up to this many memories reads its rows
# and matches them one by one instead of through the GIN index, which holds every organization's.
SEARCH_KEYWORD_SCAN_LIMIT = env_int("SEARCH_KEYWORD_SCAN_LIMIT", 2000)
# How many of hybrid search's best first-pass candidates the ranking model scores (whatever the page
# size); the rest follow only with min_score 0, unscored.
SEARCH_RERANK_POOL = env_int("SEARCH_RERANK_POOL", 30)
# The default floor of a search with a query, and of recall's "relevant" layer: results whose
# calibrated score (the estimated probability that they are relevant) is lower are left out.
# Chosen on LoCoMo by bench/locomo.py (see the README): the floor rejects most questions asked of
# another conversation while costing own-conversation R@10 under one point.
# Curated before unreviewed among comparable answers: what a verified, an active and a draft memory's
# relevance is multiplied by (a locked one's by 1); bench/review_prior.py chose them.
SEARCH_REVIEW_PRIOR_VERIFIED = env_float("SEARCH_REVIEW_PRIOR_VERIFIED", 0.95)
SEARCH_REVIEW_PRIOR_ACTIVE = env_float("SEARCH_REVIEW_PRIOR_ACTIVE", 0.85)
SEARCH_REVIEW_PRIOR_DRAFT = env_float("SEARCH_REVIEW_PRIOR_DRAFT", 0.7)
SEARCH_MIN_SCORE = env_float("SEARCH_MIN_SCORE", 0.01)
RECALL_MIN_SCORE = env_float("RECALL_MIN_SCORE", 0.01)

# Celery: Redis in production; with no REDIS_URL a broker kept in files (CELERY_BROKER_DIR, by default
# DATA_DIR/broker), so a local worker and beat run with nothing else installed.
CELERY_BROKER_DIR = Path(env_str("CELERY_BROKER_DIR", str(DATA_DIR / "broker"))).resolve()
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {}
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
        "schedule": float(env_int("CODE_INDEX_WATCH_INTERVAL_SECONDS", 60)),
        "options": {"expires": 60.0},
    },
}

# Consolidation (memories/similarity.py says what each threshold means; bench/consolidation.py measured them).
CONSOLIDATION_RELATED = env_float("CONSOLIDATION_RELATED", 0.85)
CONSOLIDATION_NEAR_DUPLICATE = env_float("CONSOLIDATION_NEAR_DUPLICATE", 0.95)
CONSOLIDATION_CONTRADICTION = env_float("CONSOLIDATION_CONTRADICTION", 0.94)
# One statement with a number or a negation changed is a contradiction from this similarity on, when
# at least CONSOLIDATION_CONFLICT_FRAME of their words line up (bench/contradictions.py measured both).
CONSOLIDATION_CONFLICT = env_float("CONSOLIDATION_CONFLICT", 0.70)
CONSOLIDATION_CONFLICT_FRAME = env_float("CONSOLIDATION_CONFLICT_FRAME", 0.70)
# What the worker merges without a curator: "exact" duplicates only, "near" ones too, or "off".
CONSOLIDATION_AUTO_MERGE = env_choice("CONSOLIDATION_AUTO_MERGE", "exact", ("exact", "near", "off"))
# At most this share of an organization's memories changes automatically in one run; the rest are proposals.
CONSOLIDATION_AUTO_MERGE_SHARE = env_float("CONSOLIDATION_AUTO_MERGE_SHARE", 0.02)
CONSOLIDATION_TIME_BUDGET = env_float("CONSOLIDATION_TIME_BUDGET_SECONDS", 600.0)
CONSOLIDATION_NEIGHBOURS = env_int("CONSOLIDATION_NEIGHBOURS", 10)
# Decay (lifecycle/decay.py): freshness halves every DECAY_HALF_LIFE_DAYS idle (longer for memories read often);
# unreviewed memories below DECAY_STALE_FRESHNESS and unread for DECAY_STALE_DAYS become stale proposals.
DECAY_HALF_LIFE_DAYS = env_int("DECAY_HALF_LIFE_DAYS", 30)
DECAY_STALE_FRESHNESS = env_float("DECAY_STALE_FRESHNESS", 0.1)
DECAY_STALE_DAYS = env_int("DECAY_STALE_DAYS", 90)
DECAY_STALE_PER_RUN = env_int("DECAY_STALE_PER_RUN", 200)

# Code indexing (code_index/). Directories agents may have indexed with code-index's `path`,
# comma-separated; `acme=/srv/acme` is for that organization only. Empty: path indexing is off and
# agents send their files (manifest sync) instead. The host's operator (manage.py code_index) may
# index any directory.
CODE_INDEX_ROOTS = env_list("CODE_INDEX_ROOTS", [])
# Left out of every index, in .gitignore syntax, besides each repository's own .gitignore files:
# version control, dependencies, virtual environments, caches, build output, lock files, secrets.
CODE_INDEX_IGNORE = env_list(
    "CODE_INDEX_IGNORE",
    [
        ".git/", ".hg/", ".svn/", "node_modules/", "bower_components/", "vendor/", "venv/", ".venv/",
        "__pycache__/", ".mypy_cache/", ".pytest_cache/", ".ruff_cache/", ".tox/", ".nox/", ".cache/",
        "*.egg-info/", "dist/", "build/", "target/", ".next/", ".nuxt/", ".gradle/", ".terraform/",
        "coverage/", "htmlcov/", ".idea/", "*.min.js", "*.min.css", "*.map", "package-lock.json",
        "yarn.lock", "pnpm-lock.yaml", "poetry.lock", "uv.lock", "Cargo.lock", "composer.lock", "Gemfile.lock",
        ".env", ".env.*", "*.pem", "*.key", "*.p12", "*.pfx", "id_rsa*", "id_ed25519*",
    ],
)  # fmt: skip
CODE_INDEX_MAX_FILE_BYTES = env_int("CODE_INDEX_MAX_FILE_BYTES", 500_000)  # larger files are skipped
CODE_INDEX_MAX_FILES = env_int("CODE_INDEX_MAX_FILES", 50_000)  # files one index may hold
# One `files` call of a manifest sync: at most this many files and bytes of content (with JSON's
# escaping, a full batch stays under MCP_MAX_BODY_BYTES).
CODE_INDEX_UPLOAD_MAX_FILES = env_int("CODE_INDEX_UPLOAD_MAX_FILES", 200)
CODE_INDEX_UPLOAD_MAX_BYTES = env_int("CODE_INDEX_UPLOAD_MAX_BYTES", 600_000)
CODE_INDEX_WATCH_INTERVAL_SECONDS = env_int("CODE_INDEX_WATCH_INTERVAL_SECONDS", 60)
# A run that waited this long for the agent's files, or for a worker, is closed as failed.
CODE_INDEX_STALE_SECONDS = env_int("CODE_INDEX_STALE_SECONDS", 3600)
# Hybrid code search's weights (bench/code_search.py: on django.db's docstring queries keyword 1.0
# beat the memories' 1.5, MRR@10 0.454 against 0.431).
CODE_SEARCH_VECTOR_WEIGHT = env_float("CODE_SEARCH_VECTOR_WEIGHT", 1.0)
CODE_SEARCH_KEYWORD_WEIGHT = env_float("CODE_SEARCH_KEYWORD_WEIGHT", 1.0)
CODE_SEARCH_CONTENT_MAX_CHARS = env_int("CODE_SEARCH_CONTENT_MAX_CHARS", 1500)  # of each result's content

# MCP (Streamable HTTP at /mcp, stdio via `manage.py mcp_stdio`).
# Browsers may call /mcp only from these origins (besides the server's own host): a defence
# against DNS rebinding. Agents that are not browsers send no Origin and are unaffected.
MCP_ALLOWED_ORIGINS = env_list("MCP_ALLOWED_ORIGINS", [])
MCP_MAX_BODY_BYTES = env_int("MCP_MAX_BODY_BYTES", 1_000_000)
# Every interface reads JSON through memory_platform/json_input.py: no deeper than this, valid Unicode.
JSON_MAX_DEPTH = env_int("JSON_MAX_DEPTH", 32)
MCP_SEARCH_DEFAULT_LIMIT = env_int("MCP_SEARCH_DEFAULT_LIMIT", 50)

# OAuth 2.1 for agents (MCP hosts): this platform is the authorization server (django-oauth-toolkit:
# authorization code with PKCE, refresh, revocation, RFC 8414 and RFC 9728 metadata, dynamic client
# registration) and /mcp the protected resource. An access token maps to the Principal its grant
# names (organizations/oauth.py); people approve clients on /oauth/authorize/ after signing in.
LOGIN_URL = "/accounts/login/"
OAUTH_ACCESS_TOKEN_SECONDS = env_int("OAUTH_ACCESS_TOKEN_SECONDS", 3600)
# Client registrations (/oauth/register/, open to any host) per address; empty turns the limit off.
OAUTH_REGISTRATION_RATE = env_str("OAUTH_REGISTRATION_RATE", "30/hour")
OAUTH_REFRESH_TOKEN_SECONDS = env_int("OAUTH_REFRESH_TOKEN_SECONDS", 2_592_000)  # 30 days
OAUTH2_PROVIDER = {
    "PKCE_REQUIRED": True,
    "ALLOWED_REDIRECT_URI_SCHEMES": env_list("OAUTH_REDIRECT_URI_SCHEMES", ["http", "https"]),
    "ALLOW_LOCALHOST_LOOPBACK": True,  # RFC 8252: native clients listen on any loopback port
    "ACCESS_TOKEN_EXPIRE_SECONDS": OAUTH_ACCESS_TOKEN_SECONDS,
    "REFRESH_TOKEN_EXPIRE_SECONDS": OAUTH_REFRESH_TOKEN_SECONDS,
    "ROTATE_REFRESH_TOKEN": True,
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    "SCOPES": {"mcp": "Use an organization's shared memory over MCP"},
    "DEFAULT_SCOPES": ["mcp"],
    "OAUTH2_VALIDATOR_CLASS": "identity.validators.Validator",
    "REQUEST_APPROVAL_PROMPT": "force",
    "DCR_ENABLED": True,
    "DCR_REGISTRATION_PERMISSION_CLASSES": ("oauth2_provider.dcr.AllowAllDCRPermission",),
    # Client ID Metadata Documents: a host's client_id is an https URL of its metadata, fetched by an
    # SSRF-hardened fetcher (public addresses only, bounded size and time; replaceable, e.g. to go
    # through an egress proxy).
    "CIMD_ENABLED": True,
    "CIMD_METADATA_FETCHER": env_str("OAUTH_CIMD_FETCHER", "oauth2_provider.cimd.SafeMetadataFetcher"),
    "OAUTH2_RESPONSE_TYPES_SUPPORTED": ["code"],
    "OAUTH2_GRANT_TYPES_SUPPORTED": ["authorization_code", "refresh_token"],
    "OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED": ["none", "client_secret_post", "client_secret_basic"],
    "OAUTH2_PROTECTED_RESOURCE_NAME": "Memory Platform (MCP)",
    # Every behaviour of the OAuth 2.0 Security BCP (RFC 9700) the toolkit can switch on: no implicit
    # or password grant, S256 PKCE only and required, tokens in headers only, `iss` in authorization
    # responses, exact redirect URIs, sender-bound refresh rotation, hashed token storage. Plain
    # http redirect URIs stay allowed for loopback hosts only (see SILENCED_SYSTEM_CHECKS above).
    **{
        f"COMPLIANT_BCP_RFC9700_{rule}": True
        for rule in (
            "ACCESS_TOKEN_TRANSPORT",
            "AUTHZ_RESPONSE_ISS",
            "IMPLICIT_GRANT",
            "PASSWORD_GRANT",
            "PKCE_METHOD",
            "PKCE_REQUIRED",
            "REDIRECT_URI_MATCHING",
            "REFRESH_TOKEN",
            "TOKEN_STORAGE",
        )
    },
}

# Instead of the platform's own authorization server, an organization's may issue the access tokens
# MCP hosts present (JWTs, checked against its keys, issuer and this server's resource URI); the
# protected-resource metadata then names it.
OAUTH_TRUSTED_ISSUER = env_str("OAUTH_TRUSTED_ISSUER", "")
OAUTH_TRUSTED_JWKS_URL = env_str("OAUTH_TRUSTED_JWKS_URL", "")
OAUTH_TRUSTED_USERNAME_CLAIM = env_str("OAUTH_TRUSTED_USERNAME_CLAIM", "preferred_username")
OAUTH_TRUSTED_ORGANIZATION_CLAIM = env_str("OAUTH_TRUSTED_ORGANIZATION_CLAIM", "organization")
if OAUTH_TRUSTED_ISSUER:
    OAUTH2_PROVIDER["OAUTH2_PROTECTED_RESOURCE_AUTHORIZATION_SERVERS"] = [OAUTH_TRUSTED_ISSUER]

# Single sign-on for people (the admin) through the organization's OpenID Connect provider
# (identity/sso.py, mozilla-django-oidc); off while SSO_OIDC_ISSUER is unset. SSO_GROUP_ROLES maps the
# provider's groups to memberships: "group=organization-slug:role,...".
SSO_OIDC_ISSUER = env_str("SSO_OIDC_ISSUER", "")
SSO_GROUPS_CLAIM = env_str("SSO_GROUPS_CLAIM", "groups")
SSO_USERNAME_CLAIM = env_str("SSO_USERNAME_CLAIM", "preferred_username")
SSO_GROUP_ROLES = dict(item.partition("=")[::2] for item in env_list("SSO_GROUP_ROLES", []))
# Password sign-in (the admin's login form, /accounts/login/); off leaves single sign-on only.
PASSWORD_LOGIN = env_bool("PASSWORD_LOGIN", True)
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

# REST API (/api/v1/, schema at /api/schema/, interactive docs at /api/docs/).
API_THROTTLE_RATE = env_str("API_THROTTLE_RATE", "1200/min")  # per token or person; empty turns it off
API_MAX_BODY_BYTES = env_int("API_MAX_BODY_BYTES", 10_000_000)
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_api.auth.BearerTokenAuthentication",
        "rest_api.auth.SessionPrincipalAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_api.auth.HasPrincipal"],
    "DEFAULT_THROTTLE_CLASSES": ["memory_platform.throttling.PrincipalRateThrottle"],
    "DEFAULT_PARSER_CLASSES": ["rest_api.parsers.CheckedJSONParser"],
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
    "EXCEPTION_HANDLER": "rest_api.errors.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Memory Platform API",
    "DESCRIPTION": (
        "The REST interface of Memory Platform: the shared, governed memory of an organization's AI agents. "
        "Authenticate with `Authorization: Bearer <token>` (the same tokens as MCP). Errors always have the "
        'shape `{"error": {"code", "message", "details"}}`.'
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SERVE_AUTHENTICATION": [],
    "SCHEMA_PATH_PREFIX": "/api/v1",
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "MemoryStatusEnum": "memories.models.Status.choices",
        "MemoryTypeEnum": "memories.models.MemoryType.choices",
        "HealthEnum": [("ok", "ok"), ("degraded", "degraded")],
        "CodeRunStatusEnum": "code_index.models.RunStatus.choices",
        "CodeRunPhaseEnum": "code_index.models.RunPhase.choices",
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "rest_api.schema.add_error_responses",
    ],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}
