"""Code index tools: code-index, code-search, code-index-status, code-projects, code-delete.

Seed 004's index_project, search_code, get_index_status, list_projects and delete_project, tied to
the organization's repositories.
"""

from __future__ import annotations

from typing import Annotated, Any

from django.conf import settings
from pydantic import Field

from code_index import selectors, services
from code_index.chunking import ChunkType
from code_index.languages import LANGUAGES
from code_index.public import (
    deleted_values,
    hit_values,
    manifest_values,
    started_values,
    status_values,
    upload_values,
)
from code_index.search import MAX_LIMIT, CodeSearchParams, code_search
from mcp_api.arguments import enum_arg
from mcp_api.server import ToolOutput, tool
from memories.search import SearchMode
from memory_platform.exceptions import ValidationError
from organizations.principal import Principal

Repository = Annotated[str, Field(description="The repository's slug (see platform-status for yours).")]


@tool(
    "code-index",
    title="Index a repository's code",
    description=(
        "Index code into a repository of your organization, in the background; only files that changed since the "
        "last run are re-read and re-embedded. Two ways: `path`, a directory on the server (only under the "
        "directories the server's operator allows; `watch` re-scans it for changes), or a sync of your own "
        "files in two steps: first `manifest` ({path: sha256 of the file's bytes} for every file), answered "
        "with the paths the server needs; then `files` ([{path, content}] in batches within `batch_limits`) "
        "until none remain. Files the manifest leaves out are removed from the index. Follow a run with "
        "code-index-status."
    ),
)
def code_index(
    principal: Principal,
    *,
    repository: Repository,
    path: Annotated[str | None, Field(description="Absolute path of a directory on the server.")] = None,
    watch: Annotated[bool, Field(description="With path: re-scan the directory for changes.")] = False,
    manifest: Annotated[
        dict[str, str] | None,
        Field(description="Step 1 of a sync: every file to index, path (relative) → sha256 hex of its bytes."),
    ] = None,
    files: Annotated[
        list[dict[str, Any]] | None,
        Field(
            description='Step 2 of a sync: [{"path": ..., "content": the file\'s text}] of files the answer asked for.',
            json_schema_extra={
                "items": {
                    "type": "object",
                    "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                    "required": ["path", "content"],
                }
            },
        ),
    ] = None,
    done: Annotated[
        bool, Field(description="With files: send no more; files not sent are left out of the index.")
    ] = False,
) -> dict[str, Any]:
    given = [name for name, value in (("path", path), ("manifest", manifest), ("files", files)) if value is not None]
    if len(given) > 1 or (not given and not done):
        raise ValidationError(
            "pass one of `path` (a directory on the server), `manifest` (step 1 of a sync of your files) or "
            f"`files` (step 2), not {' and '.join(given) or 'none'}"
        )
    if watch and path is None:
        raise ValidationError("`watch` goes with `path`: only a directory on the server can be watched")
    if path is not None:
        run = services.code_index_path(principal=principal, repository=repository, path=path, watch=watch)
        return started_values(run)
    if manifest is not None:
        return manifest_values(
            services.code_index_manifest(principal=principal, repository=repository, manifest=manifest)
        )
    return upload_values(services.code_index_upload(principal=principal, repository=repository, files=files, done=done))


@tool(
    "code-search",
    title="Search code",
    description=(
        "Find code in your organization's indexed repositories by meaning and by name together (hybrid search: "
        "'where is the retry policy implemented', 'parseConfig'). Returns a JSON array of chunks, best first: "
        "{file_path, start_line, end_line, language, chunk_type, name, score, content, repository, container, "
        "truncated}; `score` is the estimated probability (0 to 1) that the chunk is what you are looking for, as "
        "in memory-search. Chunks scoring below `min_score` (by default a low floor) are left out: an empty array "
        'means nothing matches, and when some scored below the floor a further content block holds {"below_floor": '
        '{"count": ..., "best_score": ...}, "hint": ...}: retry with min_score 0 to see those weak matches. Filter '
        "by repository, language, path glob and chunk type."
    ),
    read_only=True,
)
def code_search_tool(
    principal: Principal,
    *,
    query: Annotated[str, Field(description="What the code does, or names in it.")],
    repository: Annotated[str | None, Field(description="Only this repository (slug).")] = None,
    language: Annotated[str | None, enum_arg(LANGUAGES, "Only this language.")] = None,
    path: Annotated[
        str | None, Field(description="Only paths matching this glob: *.py, src/**/*.ts, docs/ (a directory).")
    ] = None,
    chunk_type: Annotated[str | None, enum_arg(list(ChunkType.values), "Only this kind of chunk.")] = None,
    limit: Annotated[
        int | None,
        Field(
            description=f"How many results (default 10, at most {MAX_LIMIT}).",
            json_schema_extra={"minimum": 1, "maximum": MAX_LIMIT},
        ),
    ] = None,
    mode: Annotated[str, enum_arg([m.value for m in SearchMode], "hybrid (default), vector or keyword.")] = "hybrid",
    min_score: Annotated[
        float | None,
        Field(
            description=(
                "Leave out chunks whose score is below this (0 to 1). Default: the platform's floor "
                f"({settings.CODE_SEARCH_MIN_SCORE:g}), which leaves out what does not match; 0 returns every "
                "candidate."
            ),
            json_schema_extra={"minimum": 0, "maximum": 1},
        ),
    ] = None,
) -> ToolOutput:
    params = CodeSearchParams.build(
        query=query, repository=repository, language=language, path=path, chunk_type=chunk_type, limit=limit,
        mode=mode, min_score=min_score,
    )  # fmt: skip
    result = code_search(principal, params)
    blocks: list[Any] = [[hit_values(hit) for hit in result.hits]]
    if result.degraded:
        blocks.append({"warning": result.degraded})
    if result.below_floor is not None:
        below = result.below_floor
        chunks = "chunk" if below.count == 1 else "chunks"
        blocks.append(
            {
                "below_floor": {"count": below.count, "best_score": below.best_score},
                "hint": (
                    f"No chunk reached the score floor (min_score), but {below.count} {chunks} scored below it (best "
                    f"score {below.best_score:g}): weak matches. To see them, search again with min_score: 0, or "
                    "ask with other words."
                ),
            }
        )
    if not result.hits and not selectors.organization_has_code(principal):
        blocks.append({"hint": "no repository of your organization has a code index yet: index one with code-index"})
    return ToolOutput(blocks=blocks)


@tool(
    "code-index-status",
    title="Code index status",
    description=(
        "The state of a repository's code index: status (indexing, completed or failed), phase, total_files, "
        "indexed_files (progress of a run under way), total_chunks, started_at, completed_at, the error of a "
        "failed run, what the last run added, changed and removed, and files a sync still waits for."
    ),
    read_only=True,
)
def code_index_status(principal: Principal, *, repository: Repository) -> dict[str, Any]:
    return status_values(selectors.code_index_status(principal, repository))


@tool(
    "code-projects",
    title="Indexed repositories",
    description="Every repository of your organization that has a code index, with its status (as code-index-status).",
    read_only=True,
)
def code_projects(principal: Principal) -> list[dict[str, Any]]:
    return [status_values(status) for status in selectors.code_index_list(principal)]


@tool(
    "code-delete",
    title="Delete a code index",
    description=(
        "Remove a repository's code index: its files, chunks and runs. The repository and its memories stay. "
        "Needs the agent role."
    ),
    destructive=True,
)
def code_delete(principal: Principal, *, repository: Repository) -> dict[str, Any]:
    return deleted_values(services.code_index_delete(principal=principal, repository=repository))
