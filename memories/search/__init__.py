"""Hybrid search: the one retrieval pipeline every interface uses.

1. Scope: only memories the principal may see, narrowed by the caller's filters (pipeline).
2. Candidates from two retrievers over that scope: vector (cosine distance on the HNSW index,
   small scopes scanned exactly) and keyword (full text scored with BM25).
3. Fusion of their scores, and optional boosts by importance and recency (fusion).
4. Page: keyset order with an opaque cursor carrying the first page's score scales (cursors).
5. Hydrate: the page's memories, loaded in one query.
With no query, the memory list's page in importance-then-recency order.

Modules: params (SearchParams, SearchPage), cursors, caches (process-wide state, one reset()),
vector, keyword, fusion, pipeline (memory_search). Import from here; the modules are the layout.
"""

from memories.search.caches import memories_changed, scope_sizes, search_caches, term_statistics
from memories.search.params import (
    MAX_QUERY_CHARS,
    MAX_RESULTS,
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
