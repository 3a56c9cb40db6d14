"""What every environment variable the platform reads means: the source of the configuration
reference (docs/reference/configuration.md, written by ``manage.py docs_reference``).

The names and defaults come from the code itself (memory_platform.reference finds every
``env_*("NAME", default)`` and ``os.environ`` read); this module says what each one is for, in a
sentence. A variable read without an entry here, or an entry no code reads, fails the tests.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Variable:
    group: str
    meaning: str
    # How the default reads, where the code's default is not a literal (a path, a computed value).
    default: str | None = None


SERVER = "Server"
DATABASE = "Database"
SECURITY = "Security and limits"
EMBEDDINGS = "Embeddings"
SEARCH = "Search"
WORKERS = "Workers and lifecycle"
CODE = "Code index"
DEVELOPMENT = "Development"

GROUPS = (SERVER, DATABASE, SECURITY, EMBEDDINGS, SEARCH, WORKERS, CODE, DEVELOPMENT)

VARIABLES: dict[str, Variable] = {
    # --- server
    "MEMORY_PLATFORM_DATA_DIR": Variable(
        SERVER, "Where the embedded database, the generated secret key, the file broker and the models live.", "./var"
    ),
    "HOST": Variable(SERVER, "Address `manage.py serve` (`make run`) listens on."),
    "PORT": Variable(SERVER, "Port `manage.py serve` listens on."),
    "WEB_CONCURRENCY": Variable(
        SERVER, "Web processes `serve` runs (one thread of Python at a time each).", "one per core"
    ),
    "WEB_THREADS": Variable(SERVER, "Requests each web process answers at once.", "2"),
    "WEB_REBALANCE": Variable(SERVER, "Web processes even out their keep-alive connections (Linux); `0` turns it off."),
    "RUN_WORKER": Variable(SERVER, "`0`: `serve` starts no Celery worker and beat (as `--no-worker`)."),
    "LOG_LEVEL": Variable(SERVER, "Log level; logs go to stderr."),
    "MCP_LOG_LEVEL": Variable(SERVER, "Log level of the MCP library's own loggers."),
    "LOG_FORMAT": Variable(
        SERVER,
        "`json` (one object a line: time, level, logger, message, request_id, organization, principal) or `text`.",
        "json with `DATABASE_URL`, text on the embedded database",
    ),
    "METRICS_TOKEN": Variable(
        SERVER, "Bearer token a Prometheus scraper sends to `/metrics`; unset, `/metrics` answers 404."
    ),
    "PROMETHEUS_MULTIPROC_DIR": Variable(
        SERVER,
        "Where every web process and worker writes its metrics for `/metrics` to add up; `serve` sets it "
        "(and empties it) when unset.",
        "var/run/metrics under serve",
    ),
    "DEBUG": Variable(SERVER, "Django's debug pages; never in production."),
    # --- database
    "DATABASE_URL": Variable(
        DATABASE,
        "`postgresql://user:password@host:5432/name` (PostgreSQL 15 or later with pgvector 0.8 or later).",
        "unset: the embedded PostgreSQL",
    ),
    "DATABASE_REPLICA_URL": Variable(
        DATABASE,
        "A streaming replica of the database, as `DATABASE_URL`: searches read it when it has replayed their "
        "organization's last write and lags no more than `REPLICA_MAX_LAG_SECONDS`, else the primary.",
    ),
    "REPLICA_MAX_LAG_SECONDS": Variable(DATABASE, "Searches read the primary while the replica is further behind."),
    "REPLICA_RETRY_SECONDS": Variable(DATABASE, "After the replica failed, searches read the primary this long."),
    "DATABASE_POOL_MAX": Variable(DATABASE, "Most pooled connections per process; `0` turns the pool off."),
    "DATABASE_READERS_BESIDE": Variable(
        DATABASE,
        "Threads per process reading beside a request on connections of their own (a hybrid search's vector"
        " retriever beside its keyword one); `0`: one after the other.",
    ),
    "DATABASE_CONN_MAX_AGE": Variable(DATABASE, "With the pool off: seconds a connection is reused."),
    "DATABASE_CONNECT_TIMEOUT": Variable(
        DATABASE, "Seconds a request waits for a connection before REST and `/mcp` answer 503 with `Retry-After`."
    ),
    "DATABASE_POOL_CHECK_AFTER_MS": Variable(
        DATABASE, "A pooled connection idle this long is checked before it is lent; `0` checks every time."
    ),
    "DATABASE_PREPARED_STATEMENTS": Variable(
        DATABASE, "Prepare the hot statements once per connection; `0` behind a transaction-mode pooler (PgBouncer)."
    ),
    "REDIS_URL": Variable(
        DATABASE, "Celery broker and rate-limit counters, e.g. `redis://localhost:6379/0`.", "unset: file broker"
    ),
    "CELERY_BROKER_DIR": Variable(DATABASE, "Folder of the file broker used without `REDIS_URL`.", "var/broker"),
    "CELERY_QUEUE": Variable(DATABASE, "Queue this deployment's workers consume (when several share one Redis)."),
    # --- security and limits
    "SECRET_KEY": Variable(SECURITY, "Django's signing key; set it in production.", "generated into var/secret_key"),
    "ALLOWED_HOSTS": Variable(SECURITY, "Host names the server answers to, comma-separated."),
    "CSRF_TRUSTED_ORIGINS": Variable(
        SECURITY, "Origins allowed to post admin forms, e.g. `https://memory.example.com`."
    ),
    "HTTPS": Variable(
        SECURITY, "`1` behind a TLS proxy: trust `X-Forwarded-Proto`, secure cookies, HSTS, redirect to HTTPS."
    ),
    "SECURE_SSL_REDIRECT": Variable(SECURITY, "With `HTTPS=1`: redirect plain HTTP (`/healthz` excepted)."),
    "SECURE_HSTS_SECONDS": Variable(SECURITY, "With `HTTPS=1`: HSTS lifetime."),
    "SECURE_HSTS_INCLUDE_SUBDOMAINS": Variable(SECURITY, "With `HTTPS=1`: HSTS covers subdomains."),
    "SECURE_HSTS_PRELOAD": Variable(SECURITY, "With `HTTPS=1`: ask for HSTS preloading (the domain owner's choice)."),
    "LOGIN_FAILURE_LIMIT": Variable(SECURITY, "Wrong passwords for one username from one address before a lockout."),
    "LOGIN_LOCKOUT_MINUTES": Variable(SECURITY, "How long that lockout lasts."),
    "API_THROTTLE_RATE": Variable(
        SECURITY, "Requests per token or person in any sliding minute, REST and MCP together; empty: no limit."
    ),
    "API_MAX_BODY_BYTES": Variable(SECURITY, "Largest REST request body (413 above)."),
    "MCP_MAX_BODY_BYTES": Variable(SECURITY, "Largest MCP request body."),
    "MCP_ALLOWED_ORIGINS": Variable(
        SECURITY, "Browser origins allowed to call `/mcp`, besides the server's own.", "empty"
    ),
    "JSON_MAX_DEPTH": Variable(SECURITY, "Deepest nesting of arrays and objects any interface reads."),
    "MEMORY_BATCH_MAX_ENTRIES": Variable(SECURITY, "Most memories one batch write may hold."),
    "MCP_SEARCH_DEFAULT_LIMIT": Variable(SECURITY, "Results of an MCP search without `limit`."),
    "MEMORY_PLATFORM_TOKEN": Variable(SECURITY, "The token `manage.py mcp_stdio` acts with.", "unset"),
    "OAUTH_ACCESS_TOKEN_SECONDS": Variable(SECURITY, "Lifetime of an OAuth access token an MCP host gets."),
    "OAUTH_REGISTRATION_RATE": Variable(
        SECURITY, "OAuth client registrations per address (anyone may register); empty: no limit."
    ),
    "OAUTH_CIMD_FETCHER": Variable(
        SECURITY, "Class fetching hosts' client-id metadata documents (e.g. one going through an egress proxy)."
    ),
    "OAUTH_TRUSTED_ISSUER": Variable(
        SECURITY,
        "An organization's authorization server whose JWT access tokens open `/mcp`, instead of this platform's.",
        "unset: this platform's own",
    ),
    "OAUTH_TRUSTED_JWKS_URL": Variable(SECURITY, "Where that issuer's signing keys are.", "its metadata's `jwks_uri`"),
    "OAUTH_TRUSTED_USERNAME_CLAIM": Variable(SECURITY, "The token claim that is the person's username here."),
    "OAUTH_TRUSTED_ORGANIZATION_CLAIM": Variable(
        SECURITY, "The token claim naming the organization (else the person's only one)."
    ),
    "SSO_OIDC_ISSUER": Variable(
        SECURITY, "Your OpenID Connect provider's issuer URL: people sign in to the admin with it.", "unset: off"
    ),
    "SSO_OIDC_CLIENT_ID": Variable(SECURITY, "This platform's client id at the provider.", "empty"),
    "SSO_OIDC_CLIENT_SECRET": Variable(SECURITY, "This platform's client secret at the provider.", "empty"),
    "SSO_OIDC_SCOPES": Variable(SECURITY, "Scopes asked of the provider (they must bring the groups claim)."),
    "SSO_GROUPS_CLAIM": Variable(SECURITY, "The claim listing a person's groups."),
    "SSO_USERNAME_CLAIM": Variable(SECURITY, "The claim that is a person's username here (else `sub`)."),
    "SSO_GROUP_ROLES": Variable(
        SECURITY,
        "Memberships the provider's groups give, at every sign-in: `group=organization-slug:role,...`.",
        "empty",
    ),
    "PASSWORD_LOGIN": Variable(SECURITY, "Password sign-in beside single sign-on; `false` leaves single sign-on only."),
    "OAUTH_REFRESH_TOKEN_SECONDS": Variable(
        SECURITY, "Lifetime of an OAuth refresh token (each use replaces it with a new one)."
    ),
    "OAUTH_REDIRECT_URI_SCHEMES": Variable(
        SECURITY, "Schemes a registered OAuth client's redirect URIs may use (add a desktop host's own scheme)."
    ),
    # --- embeddings
    "EMBEDDING_PROVIDER": Variable(
        EMBEDDINGS, "`local` (offline all-MiniLM-L6-v2) or `openai` (any compatible endpoint)."
    ),
    "EMBEDDING_BASE_URL": Variable(EMBEDDINGS, "The `openai` provider's endpoint."),
    "EMBEDDING_MODEL": Variable(EMBEDDINGS, "The `openai` provider's model (384 dimensions)."),
    "EMBEDDING_API_KEY": Variable(EMBEDDINGS, "The `openai` provider's key."),
    "EMBEDDING_TIMEOUT": Variable(
        EMBEDDINGS, "Seconds before an embedding request is given up (the write still succeeds)."
    ),
    "EMBEDDING_WRITE_WAIT_MS": Variable(
        EMBEDDINGS, "How long a write waits for an endpoint's vector before storing the memory pending."
    ),
    "EMBEDDING_QUERY_WAIT_MS": Variable(
        EMBEDDINGS, "How long a search waits for an endpoint's query vector before answering from keywords."
    ),
    "EMBEDDING_RETRY_SECONDS": Variable(EMBEDDINGS, "After an endpoint failed, how long calls skip it before probing."),
    "EMBEDDING_INT8": Variable(EMBEDDINGS, "The local model computes in int8 (2-3 times less CPU per text)."),
    "EMBEDDING_THREADS": Variable(
        EMBEDDINGS, "Cores the local model may use; `0`: all (in each web process of `serve`, its share).", "0"
    ),
    "EMBEDDING_QUERY_CACHE_SIZE": Variable(EMBEDDINGS, "Query vectors each process remembers; `0` turns it off."),
    # --- search
    "MEMORY_ACCESS_FLUSH_IN_BACKGROUND": Variable(
        SEARCH, "A thread of each process writes the access counts searches tally; `false`: the search that fills it."
    ),
    "SEARCH_FUSION": Variable(SEARCH, "How hybrid search ranks: `model` (the calibrated score), `score` or `rrf`."),
    "SEARCH_MIN_SCORE": Variable(SEARCH, "Default floor of a search with a query (`min_score` overrides it)."),
    "SEARCH_EXPAND_ABBREVIATIONS": Variable(
        SEARCH,
        "Search a query's common abbreviations (PR, prod, k8s) and the organization's entity aliases with"
        " their other names beside them.",
    ),
    "SEARCH_STATEMENT_MODEL": Variable(
        SEARCH,
        "Score memories written outside a conversation session by the statement model (fitted on"
        " question-and-answer sets) instead of the conversation model.",
    ),
    "RECALL_MIN_SCORE": Variable(SEARCH, "Default floor of `memory-recall`'s relevant layer."),
    "SEARCH_REVIEW_PRIOR_VERIFIED": Variable(SEARCH, "What a verified memory's relevance is multiplied by."),
    "SEARCH_REVIEW_PRIOR_ACTIVE": Variable(SEARCH, "What an active (unreviewed) memory's relevance is multiplied by."),
    "SEARCH_REVIEW_PRIOR_DRAFT": Variable(SEARCH, "What a draft's relevance is multiplied by."),
    "SEARCH_REVIEW_PRIOR_HELD": Variable(
        SEARCH, "What an unreviewed memory flagged as instructions to agents has its relevance multiplied by."
    ),
    "SEARCH_RERANK_POOL": Variable(SEARCH, "First-pass candidates of hybrid search the ranking model scores."),
    "SEARCH_VECTOR_WEIGHT": Variable(SEARCH, "Weight of meaning in hybrid ranking."),
    "SEARCH_KEYWORD_WEIGHT": Variable(SEARCH, "Weight of words in hybrid ranking."),
    "SEARCH_CANDIDATES": Variable(SEARCH, "Candidates each retriever contributes (at least 5 times the page size)."),
    "SEARCH_EXACT_SCAN_LIMIT": Variable(
        SEARCH,
        "Scopes up to this many memories are searched exactly; an organization with more gets its own HNSW and"
        " full-text indexes.",
    ),
    "SEARCH_KEYWORD_SCAN_LIMIT": Variable(
        SEARCH, "Organizations up to this many memories are matched row by row and counted at every search."
    ),
    "SEARCH_KEYWORD_MATCH_BUDGET": Variable(
        SEARCH,
        "In an organization of more memories than this, when a question's rarest words match more of them,"
        " keyword search reads those holding its two rarest words first (0: never).",
    ),
    "SEARCH_HNSW_EF_SEARCH": Variable(SEARCH, "HNSW search breadth (recall against speed)."),
    "SEARCH_HNSW_M": Variable(
        SEARCH, "Links each node of an organization's HNSW graph keeps (recall against write and build cost)."
    ),
    "SEARCH_HNSW_EF_CONSTRUCTION": Variable(
        SEARCH, "Candidates an HNSW build weighs for each node's links (at least 2 x `SEARCH_HNSW_M`)."
    ),
    # --- workers and lifecycle
    "HEARTBEAT_INTERVAL_SECONDS": Variable(WORKERS, "How often beat and the worker report they are alive."),
    "HEARTBEAT_STALE_SECONDS": Variable(WORKERS, "After this long without a heartbeat, health says `degraded`."),
    "CELERY_TASK_ALWAYS_EAGER": Variable(WORKERS, "Run tasks in the calling process (tests and debugging only)."),
    "CELERY_VISIBILITY_TIMEOUT_SECONDS": Variable(
        WORKERS, "With Redis: a task a dead worker had taken is delivered again after this long."
    ),
    "TENANT_INDEX_INTERVAL_SECONDS": Variable(
        WORKERS, "How often organizations that grew past `SEARCH_EXACT_SCAN_LIMIT` get their own search indexes."
    ),
    "EXPIRY_INTERVAL_SECONDS": Variable(WORKERS, "How often memories past `valid_until` are recorded as expired."),
    "DECAY_INTERVAL_SECONDS": Variable(WORKERS, "How often freshness decays."),
    "CONSOLIDATION_INTERVAL_SECONDS": Variable(WORKERS, "How often consolidation runs."),
    "CONSOLIDATION_TIME_BUDGET_SECONDS": Variable(
        WORKERS, "How long one consolidation run may take (the next resumes)."
    ),
    "CONSOLIDATION_RELATED": Variable(WORKERS, "Similarity from which two memories are possible duplicates."),
    "CONSOLIDATION_NEAR_DUPLICATE": Variable(WORKERS, "Similarity from which same-type memories are near duplicates."),
    "CONSOLIDATION_CONTRADICTION": Variable(
        WORKERS, "Similarity from which memories that differ in a value are contradiction proposals."
    ),
    "CONSOLIDATION_CONFLICT": Variable(
        WORKERS, "Similarity from which one statement with a value changed is a write's `conflicts`."
    ),
    "CONSOLIDATION_CONFLICT_FRAME": Variable(WORKERS, "Share of words that must line up for such a conflict."),
    "CONSOLIDATION_AUTO_MERGE": Variable(
        WORKERS, "What the worker merges without a curator: `exact`, `near` or `off`."
    ),
    "CONSOLIDATION_AUTO_MERGE_SHARE": Variable(
        WORKERS, "Most of an organization's memories one run may change itself."
    ),
    "CONSOLIDATION_NEIGHBOURS": Variable(WORKERS, "Nearest neighbours each memory is compared with."),
    "DECAY_HALF_LIFE_DAYS": Variable(WORKERS, "Days without use in which freshness halves."),
    "DECAY_STALE_FRESHNESS": Variable(
        WORKERS, "Below this freshness an unreviewed, unread memory may be proposed stale."
    ),
    "DECAY_STALE_DAYS": Variable(WORKERS, "Days unread before such a memory is proposed stale."),
    "DECAY_STALE_PER_RUN": Variable(WORKERS, "Most stale proposals one decay run makes."),
    # --- code index
    "CODE_INDEX_ROOTS": Variable(
        CODE,
        "Server directories agents may have indexed, comma-separated; `acme=/srv/acme` for one organization.",
        "empty: path indexing off",
    ),
    "CODE_INDEX_IGNORE": Variable(
        CODE,
        "Left out of every index (.gitignore syntax, comma-separated), besides each .gitignore.",
        "VCS folders, dependencies, caches, build output, lock and key files",
    ),
    "CODE_INDEX_MAX_FILE_BYTES": Variable(CODE, "Larger files are skipped."),
    "CODE_INDEX_MAX_FILES": Variable(CODE, "A directory or manifest with more files is refused."),
    "CODE_INDEX_UPLOAD_MAX_FILES": Variable(CODE, "Most files in one `files` call of a sync."),
    "CODE_INDEX_UPLOAD_MAX_BYTES": Variable(CODE, "Most bytes of content in one `files` call of a sync."),
    "CODE_INDEX_WATCH_INTERVAL_SECONDS": Variable(CODE, "How often beat re-scans watched directories."),
    "CODE_INDEX_STALE_SECONDS": Variable(CODE, "A run waiting this long for files or a worker is closed as failed."),
    "CODE_INDEX_RESUME_ATTEMPTS": Variable(
        CODE, "Times beat hands a run whose worker died to a worker again before closing it as interrupted."
    ),
    "CODE_SEARCH_VECTOR_WEIGHT": Variable(
        CODE, "Multiplies the ranking model's weight of meaning (similarity) in hybrid code search; 1: as fitted."
    ),
    "CODE_SEARCH_KEYWORD_WEIGHT": Variable(
        CODE, "Multiplies the ranking model's weights of words (BM25, name, path) in hybrid code search; 1: as fitted."
    ),
    "CODE_SEARCH_MIN_SCORE": Variable(
        CODE, "Default floor of code search: results scoring below it are left out (`min_score` overrides it)."
    ),
    "CODE_SEARCH_CONTENT_MAX_CHARS": Variable(CODE, "Each code search result's content is trimmed to this."),
    # --- development
    "TEST_DATABASE_NAME": Variable(DEVELOPMENT, "Test database name, for parallel test runs on one server.", "unset"),
}
