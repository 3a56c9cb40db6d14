"""Settings of code_index: Code indexing and code search.

Imported by memory_platform/settings.py, so each is a Django setting (read as
``django.conf.settings.NAME``, overridden in tests with the ``settings`` fixture); what each
environment variable means is in memory_platform/configuration.py and the configuration reference.
Nothing here may import a model or anything that needs the apps loaded.
"""

from __future__ import annotations

from memory_platform.env import env_float, env_int, env_list

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
# A run whose worker died is handed to a worker again by beat's sweep this many times, then closed.
CODE_INDEX_RESUME_ATTEMPTS = env_int("CODE_INDEX_RESUME_ATTEMPTS", 3)
# Hybrid code search re-weighs its model's meaning (similarity) and words (BM25, name, container and
# path coverage) by these; 1: as bench/code_search_fit.py fitted them (code_index/model.py).
CODE_SEARCH_VECTOR_WEIGHT = env_float("CODE_SEARCH_VECTOR_WEIGHT", 1.0)
CODE_SEARCH_KEYWORD_WEIGHT = env_float("CODE_SEARCH_KEYWORD_WEIGHT", 1.0)
# Code search leaves out results whose score (the estimated probability that the chunk is relevant)
# is below this, unless a search sets its own `min_score`; as low as memory search's SEARCH_MIN_SCORE.
CODE_SEARCH_MIN_SCORE = env_float("CODE_SEARCH_MIN_SCORE", 0.01)
CODE_SEARCH_CONTENT_MAX_CHARS = env_int("CODE_SEARCH_CONTENT_MAX_CHARS", 1500)  # of each result's content
