"""Code indexing and code search on the source of a real package, through the production pipeline.

In a scratch database, one organization:

1. **Full index**: the package's Python files (docstrings removed, see 3) are copied to a temporary
   directory and indexed into a repository the way a worker does (code_index.pipeline.run_index,
   the real embedding model): files/s, chunks/s, embeddings/s.
2. **One-file re-index**: a function is appended to one file of median size and the directory is
   indexed again: wall time, files scanned per second, chunks rewritten and embeddings computed
   (only the new function's; its file's other chunks reuse their vectors).
3. **Retrieval quality**: every function or method with a docstring of at least --min-words words
   gives a query, its docstring's first paragraph; every docstring is removed from the indexed copy
   (its lines blanked, so line numbers stay), so a query can only find its function by what the code
   says. A query hits when a result of the function's file covers its ``def`` line (at the default floor,
   CODE_SEARCH_MIN_SCORE; bench/code_search_fit.py fits the ranking and measures R@1 and the floor). MRR@10 and R@10
   for hybrid search, BM25 alone (keyword) and the embedding alone (vector).
4. **Latency at --chunks**: while the organization holds fewer chunks, more installed packages are
   indexed into more repositories (--fill); then ANALYZE, and p50/p95 of hybrid (and vector and
   keyword) searches for the quality queries over the whole organization and within one repository,
   end to end (the query embedded each time; the quality runs embed each query once).

--js DIR also indexes a JavaScript directory (say /usr/lib/node_modules/npm/lib, npm's own
source) and reports its indexing throughput.

    python bench/code_search.py --package django --queries 300 --chunks 50000 \\
        --json bench/results/$(date +%F)/code_search.json
    python bench/code_search.py --package django.db --chunks 0            # a quick look at one subpackage
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import inspect
import random
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import CpuMeter, backend_pid, print_table, scratch_database, summary_ms, write_json

MODES = ("hybrid", "keyword", "vector")
TOP_K = 10
FILL_PACKAGES = (
    "rest_framework", "celery", "kombu", "pydantic", "hypothesis", "mypy", "numpy", "schemathesis", "mcp",
    "psycopg", "httpx", "starlette", "jsonschema", "redis", "drf_spectacular", "uvicorn", "anyio",
)  # fmt: skip


@dataclass(frozen=True)
class Query:
    text: str
    path: str  # relative to the package root
    line: int  # the def line
    name: str


def package_dir(name: str) -> Path:
    module = sys.modules.get(name)
    if module is not None and getattr(module, "__spec__", None) is None and getattr(module, "__path__", None):
        # Imported already by a library that replaced the module object (Celery does so for kombu):
        # find_spec refuses such a module, but its path is known.
        return Path(next(iter(module.__path__)))
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"no installed package {name!r} (a package, not a module)")
    return Path(next(iter(spec.submodule_search_locations)))


def _docstring_node(node: ast.AST) -> ast.Expr | None:
    body = getattr(node, "body", None)
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        return first
    return None


def strip_docstrings(source: str) -> tuple[str, list[tuple[str, int, str]]]:
    """The source with every docstring's lines blanked (``pass`` where it was the whole body), and
    the (name, def line, docstring) of every function and method that had one."""
    tree = ast.parse(source)
    lines = source.split("\n")
    documented = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        doc = _docstring_node(node)
        if doc is None or doc.end_lineno is None or doc.lineno == getattr(node, "lineno", 0):
            continue  # none, or on the def line itself (blanking it would drop the def)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            documented.append((node.name, node.lineno, inspect.cleandoc(str(doc.value.value))))  # type: ignore[attr-defined]
        indent = lines[doc.lineno - 1][: doc.col_offset]
        only = len(getattr(node, "body", [])) == 1
        for row in range(doc.lineno - 1, doc.end_lineno):
            lines[row] = ""
        if only and not isinstance(node, ast.Module):
            lines[doc.lineno - 1] = indent + "pass"
    return "\n".join(lines), documented


def query_text(docstring: str, min_words: int) -> str | None:
    paragraph = " ".join(docstring.split("\n\n", 1)[0].split())
    if len(paragraph.split()) < min_words or paragraph.startswith((":", ">>>", "..")):
        return None
    return paragraph[:400]


def prepare(source_root: Path, target: Path, max_files: int, min_words: int) -> tuple[list[Query], int]:
    """Copy the package's Python files without docstrings; the queries their docstrings give."""
    queries: list[Query] = []
    files = sorted(p for p in source_root.rglob("*.py") if "__pycache__" not in p.parts)
    if max_files:
        files = files[:max_files]
    for file in files:
        relative = file.relative_to(source_root).as_posix()
        text = file.read_text(encoding="utf-8", errors="replace")
        try:
            stripped, documented = strip_docstrings(text)
        except SyntaxError:
            stripped, documented = text, []
        destination = target / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_text(stripped, encoding="utf-8")
        for name, line, docstring in documented:
            query = query_text(docstring, min_words)
            if query:
                queries.append(Query(query, relative, line, name))
    # A docstring shared by several functions cannot say which one it means.
    counts: dict[str, int] = {}
    for query in queries:
        counts[query.text] = counts.get(query.text, 0) + 1
    return [q for q in queries if counts[q.text] == 1], len(files)


# --- indexing ----------------------------------------------------------------------------------------------


def index(principal: Any, slug: str, root: Path, label: str) -> dict[str, Any]:
    """Index ``root`` into repository ``slug`` (created if needed) as a worker would; timings."""
    from code_index import pipeline, services
    from organizations.services import repository_get_or_create

    repository_get_or_create(principal=principal, slug=slug)
    run = services.code_index_command(principal=principal, repository=slug, path=root)
    last = [0.0]

    def progress(current: Any) -> None:
        if time.monotonic() - last[0] > 10:
            last[0] = time.monotonic()
            print(
                f"  [{label}] {current.indexed_files}/{current.total_files} files, {current.chunks_written} chunks",
                file=sys.stderr,
            )

    with CpuMeter(backend_pid()) as cpu:
        started = time.perf_counter()
        finished = pipeline.run_index(run.pk, progress=progress)
        seconds = time.perf_counter() - started
    if finished is None or finished.status != "completed":
        raise SystemExit(f"indexing {root} failed: {finished.error if finished else 'not run'}")
    return {
        "files": finished.total_files,
        "files_read": finished.added + finished.modified,
        "chunks_written": finished.chunks_written,
        "embeddings_computed": finished.embeddings_computed,
        "embeddings_reused": finished.embeddings_reused,
        "seconds": round(seconds, 2),
        "files_per_s": round(finished.total_files / seconds, 1),
        "chunks_per_s": round(finished.chunks_written / seconds, 1) if finished.chunks_written else 0.0,
        "cpu": cpu.result,
    }


def reindex_one_file(principal: Any, slug: str, root: Path) -> dict[str, Any]:
    files = sorted(root.rglob("*.py"), key=lambda p: (p.stat().st_size, p.as_posix()))
    target = files[len(files) // 2]
    with target.open("a", encoding="utf-8") as handle:
        handle.write(
            "\n\ndef bench_added_function(values):\n"
            "    total = 0\n    for value in values:\n        total += value * 2\n    return total\n"
        )
    result = index(principal, slug, root, "one-file re-index")
    return {**result, "file": target.relative_to(root).as_posix()}


# --- retrieval -----------------------------------------------------------------------------------------------


def evaluate(principal: Any, slug: str, queries: list[Query], modes: tuple[str, ...]) -> dict[str, Any]:
    from code_index.search import CodeSearchParams, code_search

    results: dict[str, Any] = {}
    for mode in modes:
        reciprocal, found, seconds = [], 0, []
        for query in queries:
            params = CodeSearchParams.build(query=query.text, mode=mode, limit=TOP_K, repository=slug)
            started = time.perf_counter()
            hits = code_search(principal, params).hits
            seconds.append(time.perf_counter() - started)
            rank = next(
                (
                    n
                    for n, hit in enumerate(hits, start=1)
                    if hit.chunk.path == query.path and hit.chunk.start_line <= query.line <= hit.chunk.end_line
                ),
                None,
            )
            reciprocal.append(1 / rank if rank else 0.0)
            found += rank is not None
        results[mode] = {
            "mrr_at_10": round(sum(reciprocal) / len(queries), 4),
            "r_at_10": round(found / len(queries), 4),
            "latency_ms_without_query_embedding": summary_ms(seconds),
            "n": len(queries),
        }
    return results


class CachedQueries:
    """The configured provider, with each query embedded once while ``enabled``: modes and weights
    then compare retrieval alone. The latency run turns it off, so its timings include embedding."""

    def __init__(self, texts: list[str]) -> None:
        from memories.embeddings import get_provider, reset_provider

        provider = get_provider()
        original = provider.embed_one
        self.enabled = True
        cache = dict(zip(texts, provider.embed(texts), strict=True))

        def embed_one(text: str) -> list[float]:
            if not self.enabled:
                return original(text)
            if text not in cache:
                cache[text] = original(text)
            return cache[text]

        provider.embed_one = embed_one  # type: ignore[method-assign]
        reset_provider(provider)


def sweep(principal: Any, slug: str, queries: list[Query]) -> list[dict[str, Any]]:
    from django.conf import settings

    rows = []
    saved = settings.CODE_SEARCH_VECTOR_WEIGHT, settings.CODE_SEARCH_KEYWORD_WEIGHT
    for vector_weight, keyword_weight in ((1.0, 0.5), (1.0, 1.0), (1.0, 1.5), (1.0, 2.0), (1.0, 3.0)):
        settings.CODE_SEARCH_VECTOR_WEIGHT, settings.CODE_SEARCH_KEYWORD_WEIGHT = vector_weight, keyword_weight
        scores = evaluate(principal, slug, queries, ("hybrid",))["hybrid"]
        rows.append({"vector_weight": vector_weight, "keyword_weight": keyword_weight, **scores})
    settings.CODE_SEARCH_VECTOR_WEIGHT, settings.CODE_SEARCH_KEYWORD_WEIGHT = saved
    return rows


# --- scale ---------------------------------------------------------------------------------------------------


def chunk_count() -> int:
    from code_index.models import CodeChunk

    return CodeChunk.objects.count()


def fill(principal: Any, target: int, packages: list[str], workdir: Path, max_files: int) -> list[dict[str, Any]]:
    """Index more packages (docstrings kept) until the organization holds ``target`` chunks."""
    filled = []
    for number, name in enumerate(packages, start=1):
        if chunk_count() >= target:
            break
        try:
            source = package_dir(name)
        except SystemExit as missing:
            print(f"  skipping {name}: {missing}", file=sys.stderr)
            continue
        copy = workdir / f"fill-{name}"
        shutil.copytree(source, copy, ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyc"))
        if max_files:
            for extra in sorted(path for path in copy.rglob("*") if path.is_file())[max_files:]:
                extra.unlink()
        filled.append({"package": name, **index(principal, f"fill-{number}", copy, f"fill {name}")})
    return filled


def latency(principal: Any, slug: str, queries: list[Query]) -> dict[str, Any]:
    from django.db import connection

    from code_index.search import CodeSearchParams, code_search

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE code_index_codechunk")
    scopes = {"organization": None, "repository": slug}
    measured: dict[str, Any] = {}
    for scope, repository in scopes.items():
        for mode in MODES:
            seconds = []
            for query in queries:
                params = CodeSearchParams.build(query=query.text, mode=mode, limit=TOP_K, repository=repository)
                started = time.perf_counter()
                code_search(principal, params)
                seconds.append(time.perf_counter() - started)
            measured[f"{scope}/{mode}"] = summary_ms(seconds)
    return measured


# --- main ----------------------------------------------------------------------------------------------------


def run(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """Every phase; the results so far are written to --json after each, so a failure keeps them."""
    from organizations.models import Organization
    from organizations.principal import Principal

    if args.reuse:
        organization = Organization.objects.get(slug="bench")
    else:
        organization = Organization.objects.create(slug="bench", name="Bench")
    principal = Principal.for_operator(organization, "bench")
    source = package_dir(args.package)
    copy = workdir / args.package
    queries, files = prepare(source, copy, args.max_files, args.min_words)
    sample = random.Random(args.seed).sample(queries, min(args.queries, len(queries)))
    print(f"{args.package}: {files} files, {len(queries)} documented functions, {len(sample)} queries", file=sys.stderr)

    result: dict[str, Any] = {"package": args.package, "queries": len(sample), "documented_functions": len(queries)}
    if args.reuse:  # the kept database as it is: quality in the package's repository, then latency
        cached = CachedQueries([query.text for query in sample])
        result["retrieval"] = evaluate(principal, "code", sample, MODES)
        cached.enabled = False
        result["chunks_total"] = chunk_count()
        result["latency_ms"] = latency(principal, "code", sample[: args.latency_queries])
        return result
    result["full_index"] = index(principal, "code", copy, "full index")
    result["one_file_reindex"] = reindex_one_file(principal, "code", copy)
    write_json(args.json_out, result)
    if args.js:
        shutil.copytree(args.js, workdir / "js")
        result["javascript_index"] = {"path": args.js, **index(principal, "javascript", workdir / "js", "js")}
    cached = CachedQueries([query.text for query in sample])
    result["retrieval"] = evaluate(principal, "code", sample, MODES)
    write_json(args.json_out, result)
    if args.sweep:
        result["weight_sweep"] = sweep(principal, "code", sample)
    if args.chunks:
        fill_packages = [name for name in (args.fill or FILL_PACKAGES) if name != args.package]
        result["fill"] = fill(principal, args.chunks, fill_packages, workdir, args.fill_max_files)
        write_json(args.json_out, result)
        result["chunks_total"] = chunk_count()
        result["chunks_target"] = args.chunks
        if result["chunks_total"] < args.chunks:
            print(
                f"the fill packages ran out at {result['chunks_total']} chunks; name more with --fill", file=sys.stderr
            )
        cached.enabled = False  # end to end: each search embeds its query
        result["latency_ms"] = latency(principal, "code", sample[: args.latency_queries])
    else:
        result["chunks_total"] = chunk_count()
    return result


def report_latency(result: dict[str, Any]) -> None:
    print_table(
        f"Search latency at {result['chunks_total']} chunks (end to end, query embedding included)",
        ["scope/mode", "p50 ms", "p95 ms", "n"],
        [[name, r["p50"], r["p95"], r["n"]] for name, r in result["latency_ms"].items()],
    )


def report_retrieval(result: dict[str, Any]) -> None:
    print_table(
        f"Retrieval, {result['queries']} docstring queries (top {TOP_K}; ms without embedding the query)",
        ["mode", "MRR@10", "R@10", "p50 ms", "p95 ms"],
        [
            [mode, r["mrr_at_10"], r["r_at_10"], *(r["latency_ms_without_query_embedding"][p] for p in ("p50", "p95"))]
            for mode, r in result["retrieval"].items()
        ],
    )


def report(result: dict[str, Any]) -> None:
    if "full_index" not in result:  # --reuse
        report_retrieval(result)
        report_latency(result)
        return
    rows = [
        [name, r["files"], r["files_read"], r["chunks_written"], r["seconds"], r["files_per_s"], r["chunks_per_s"]]
        for name, r in (
            ("full index", result["full_index"]),
            ("one-file re-index", result["one_file_reindex"]),
            *((("javascript", result["javascript_index"]),) if "javascript_index" in result else ()),
            *((f"fill {f['package']}", f) for f in result.get("fill", [])),
        )
    ]
    print_table(f"Indexing {result['package']}", ["run", "files", "read", "chunks", "s", "files/s", "chunks/s"], rows)
    report_retrieval(result)
    retrieval = result["retrieval"]
    if "weight_sweep" in result:
        print_table(
            "Hybrid by weights",
            ["vector", "keyword", "MRR@10", "R@10"],
            [[r["vector_weight"], r["keyword_weight"], r["mrr_at_10"], r["r_at_10"]] for r in result["weight_sweep"]],
        )
    if "latency_ms" in result:
        report_latency(result)
    best = max(retrieval["keyword"]["mrr_at_10"], retrieval["vector"]["mrr_at_10"])
    verdict = "beats" if retrieval["hybrid"]["mrr_at_10"] > best else "does NOT beat"
    print(f"\nhybrid {verdict} BM25 alone and vector alone on MRR@10")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--package", default="django", help="An installed package (or subpackage: django.db).")
    parser.add_argument("--max-files", type=int, default=0, help="Only the first N Python files (sorted by path).")
    parser.add_argument("--queries", type=int, default=300, help="Docstring queries sampled (default 300).")
    parser.add_argument("--min-words", type=int, default=5, help="Shortest docstring paragraph used as a query.")
    parser.add_argument("--chunks", type=int, default=50_000, help="Chunks to reach for the latency run; 0: skip.")
    parser.add_argument("--fill", nargs="*", help="Packages indexed to reach --chunks (default: a fixed list).")
    parser.add_argument("--fill-max-files", type=int, default=0, help="At most N files of each fill package.")
    parser.add_argument("--latency-queries", type=int, default=200, help="Queries timed at scale.")
    parser.add_argument("--js", help="Also index this JavaScript directory (throughput only).")
    parser.add_argument("--sweep", action="store_true", help="Also score hybrid search over a grid of weights.")
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--keep", action="store_true", help="Keep the scratch database (bench_code_search).")
    parser.add_argument(
        "--reuse", action="store_true", help="Only time searches, on the database an earlier --keep run kept."
    )
    parser.add_argument("--json", dest="json_out", default=None, help="Write the results here.")
    args = parser.parse_args()
    args.keep = args.keep or args.reuse

    with (
        tempfile.TemporaryDirectory(prefix="code-search-bench-") as temporary,
        scratch_database("code_search", keep=args.keep),  # --reuse: kept, as found
    ):
        result = run(args, Path(temporary))
    report(result)
    write_json(args.json_out, result)


if __name__ == "__main__":
    main()
