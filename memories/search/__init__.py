"""Hybrid search: the one retrieval pipeline every interface uses.

1. Scope: only memories the principal may see, narrowed by the caller's filters (pipeline).
2. Candidates from two retrievers over that scope: vector (cosine distance on the HNSW index,
   small scopes scanned exactly) and keyword (full text scored with BM25).
3. Ranking: a first pass (fusion of their scaled scores) picks a pool; the ranking model scores it
   from absolute features, with the query's traits and the memories' session context (questions,
   features, model, ranking); optional boosts by importance and recency.
4. Floor and page: results scoring below min_score are left out (an empty first page says how many
   were, and the best of their scores); keyset order with an opaque cursor carrying the first
   pass's score scales (cursors).
5. Hydrate: the page's memories, loaded in one query.
With no query, the memory list's page in importance-then-recency order.

Modules: params (SearchParams, SearchPage, BelowFloor, Features), cursors, caches (process-wide
state, one reset()), vector, keyword, questions, features, model, fusion, ranking, pipeline
(memory_search).
Import from here; the modules are the layout.
"""

from memories.search.caches import memories_changed, scope_sizes, search_caches, term_statistics
from memories.search.params import (
    MAX_QUERY_CHARS,
    MAX_RESULTS,
    BelowFloor,
    Fusion,
    SearchHit,
    SearchMode,
    SearchPage,
    SearchParams,
)
from memories.search.pipeline import memory_search
from memory_platform.exceptions import SearchUnavailable

__all__ = [
    "MAX_QUERY_CHARS",
    "MAX_RESULTS",
    "BelowFloor",
    "Fusion",
    "SearchHit",
    "SearchMode",
    "SearchPage",
    "SearchParams",
    "SearchUnavailable",
    "memories_changed",
    "memory_search",
    "scope_sizes",
    "search_caches",
    "term_statistics",
]
