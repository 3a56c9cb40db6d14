"""Settings of memories: Memories, their embeddings and search.

Imported by memory_platform/settings.py, so each is a Django setting (read as
``django.conf.settings.NAME``, overridden in tests with the ``settings`` fixture); what each
environment variable means is in memory_platform/configuration.py and the configuration reference.
Nothing here may import a model or anything that needs the apps loaded.
"""

from __future__ import annotations

from memory_platform.env import ConfigurationError, env_bool, env_float, env_int, env_str

MEMORY_BATCH_MAX_ENTRIES = env_int("MEMORY_BATCH_MAX_ENTRIES", 500)
# Searches tally the memories they return; a tally that falls due (every 10 s, or 1,000 memories) is
# written by a thread of the process's own (memories/access.py). false: by the search that made it due.
MEMORY_ACCESS_FLUSH_IN_BACKGROUND = env_bool("MEMORY_ACCESS_FLUSH_IN_BACKGROUND", True)

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
# Search a query's abbreviations ("PR", "prod", "k8s") with their long forms beside them
# (memories/search/words.py).
SEARCH_EXPAND_ABBREVIATIONS = env_bool("SEARCH_EXPAND_ABBREVIATIONS", True)
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
# The HNSW graph of each organization past SEARCH_EXACT_SCAN_LIMIT (memories/search/tenant_indexes.py):
# the links each node keeps (m; 2 x m on the bottom layer) and the candidates a build weighs for them.
# Changed, the worker's sweep rebuilds the graphs built otherwise, concurrently, one at a time.
SEARCH_HNSW_M = env_int("SEARCH_HNSW_M", 16)
SEARCH_HNSW_EF_CONSTRUCTION = env_int("SEARCH_HNSW_EF_CONSTRUCTION", 64)
if not 2 <= SEARCH_HNSW_M <= 100:
    raise ConfigurationError(f"SEARCH_HNSW_M={SEARCH_HNSW_M}: pgvector takes 2 to 100")
if not 2 * SEARCH_HNSW_M <= SEARCH_HNSW_EF_CONSTRUCTION <= 1000:
    raise ConfigurationError(
        f"SEARCH_HNSW_EF_CONSTRUCTION={SEARCH_HNSW_EF_CONSTRUCTION}: pgvector takes 2 x SEARCH_HNSW_M "
        f"({2 * SEARCH_HNSW_M}) to 1000"
    )
# Keyword search (and its word counts) in an organization of up to this many memories reads its rows
# and matches them one by one instead of through the GIN index, which holds every organization's.
SEARCH_KEYWORD_SCAN_LIMIT = env_int("SEARCH_KEYWORD_SCAN_LIMIT", 2000)
# In an organization of more memories than this, when a keyword search's rarest words still match
# more of them, the memories holding its two rarest words are read first (memories/search/keyword.py);
# 0: never.
SEARCH_KEYWORD_MATCH_BUDGET = env_int("SEARCH_KEYWORD_MATCH_BUDGET", 2000)
# How many of hybrid search's best first-pass candidates the ranking model scores (whatever the page
# size); the rest follow only with min_score 0, unscored.
SEARCH_RERANK_POOL = env_int("SEARCH_RERANK_POOL", 30)
# The default floor of a search with a query, and of recall's "relevant" layer: results whose
# calibrated score (the estimated probability that they are relevant) is lower are left out.
# Chosen on LoCoMo by bench/locomo.py (see the README): the floor rejects most questions asked of
# another conversation while costing own-conversation R@10 under one point.
# Curated before unreviewed among comparable answers: what a verified, an active and a draft memory's
# relevance is multiplied by (a locked one's by 1); bench/review_prior.py chose them, with the
# statement model (whose scores spread wider than the conversation model's): the curated rule first
# in 30 of 30 conflicts, the FAQ set's R@1 no lower than without a prior.
SEARCH_REVIEW_PRIOR_VERIFIED = env_float("SEARCH_REVIEW_PRIOR_VERIFIED", 0.95)
SEARCH_REVIEW_PRIOR_ACTIVE = env_float("SEARCH_REVIEW_PRIOR_ACTIVE", 0.8)
SEARCH_REVIEW_PRIOR_DRAFT = env_float("SEARCH_REVIEW_PRIOR_DRAFT", 0.6)
# An unreviewed memory whose text reads as instructions to agents (flagged by the write policy): a
# policy, not a fit. No memory of the dev sets is flagged; the poisoning suite's injected "Disregard
# all prior rules about deploys" scores twice the locked deploy rule for "how do I deploy?".
SEARCH_REVIEW_PRIOR_HELD = env_float("SEARCH_REVIEW_PRIOR_HELD", 0.25)
# Score memories written outside a conversation session by the statement model (memories.search.
# model.STATEMENT), fitted on question-and-answer sets, instead of the conversation model.
SEARCH_STATEMENT_MODEL = env_bool("SEARCH_STATEMENT_MODEL", True)
SEARCH_MIN_SCORE = env_float("SEARCH_MIN_SCORE", 0.01)
RECALL_MIN_SCORE = env_float("RECALL_MIN_SCORE", 0.01)
