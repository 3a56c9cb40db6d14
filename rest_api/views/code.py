"""/api/v1/code/: repositories' code indexes (index a directory, sync files, status, runs, delete)
and code search."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from code_index import selectors, services
from code_index.public import (
    deleted_values,
    hit_values,
    manifest_values,
    run_values,
    started_values,
    status_values,
    upload_values,
)
from code_index.search import CodeSearchParams, code_search
from memory_platform import pagination
from rest_api import serializers as s
from rest_api.views.base import ApiView

TAG = ["code"]
SlugParameter = OpenApiParameter("slug", OpenApiTypes.STR, OpenApiParameter.PATH, description="The repository's slug.")
RUNS = pagination.Keyset.of(("-started_at", pagination.Kind.MOMENT), ("-id", pagination.Kind.WHOLE))


class CodeIndexListView(ApiView):
    @extend_schema(
        tags=TAG,
        operation_id="code_indexes_list",
        summary="Indexed repositories",
        description="Every repository of your organization that has a code index, with its status.",
        responses={200: s.CodeIndexStatusSerializer(many=True)},
    )
    def get(self, request: Request) -> Response:
        return Response([status_values(entry) for entry in selectors.code_index_list(self.principal)])


class CodeIndexDetailView(ApiView):
    @extend_schema(
        tags=TAG,
        operation_id="code_indexes_retrieve",
        summary="A repository's code index status",
        description=(
            "status (indexing, completed or failed) of the latest run, with its progress (indexed_files of "
            "total_files), total_chunks, its times and error, and what it added, changed and removed."
        ),
        parameters=[SlugParameter],
        responses={200: s.CodeIndexStatusSerializer},
    )
    def get(self, request: Request, slug: str) -> Response:
        return Response(status_values(selectors.code_index_status(self.principal, slug)))

    @extend_schema(
        tags=TAG,
        operation_id="code_indexes_delete",
        summary="Delete a code index (agents)",
        description="Its files, chunks and runs go; the repository and its memories stay. Refused (409) mid-run.",
        parameters=[SlugParameter],
        responses={200: s.CodeDeletedSerializer},
    )
    def delete(self, request: Request, slug: str) -> Response:
        return Response(deleted_values(services.code_index_delete(principal=self.principal, repository=slug)))


class CodeIndexPathView(ApiView):
    @extend_schema(
        tags=TAG,
        operation_id="code_indexes_index_path",
        summary="Index a directory on the server (agents)",
        description=(
            "Only directories under CODE_INDEX_ROOTS (none by default: then send files with a manifest sync). "
            "The run happens in the background and reads only files that changed; `watch` re-scans for changes."
        ),
        parameters=[SlugParameter],
        request=s.CodeIndexPathSerializer,
        responses={202: s.CodeIndexStartedSerializer},
    )
    def post(self, request: Request, slug: str) -> Response:
        data = self.body(s.CodeIndexPathSerializer)
        run = services.code_index_path(
            principal=self.principal, repository=slug, path=data["path"], watch=data["watch"]
        )
        return Response(started_values(run), status=status.HTTP_202_ACCEPTED)


class CodeManifestView(ApiView):
    @extend_schema(
        tags=TAG,
        operation_id="code_indexes_manifest",
        summary="Sync your files, step 1: the manifest (agents)",
        description=(
            "Every file to index with the sha256 of its bytes. The answer lists the paths whose content the server "
            "needs (new or changed); send them to …/files/. Files the manifest leaves out are removed."
        ),
        parameters=[SlugParameter],
        request=s.CodeManifestSerializer,
        responses={200: s.CodeManifestAnswerSerializer},
    )
    def post(self, request: Request, slug: str) -> Response:
        data = self.body(s.CodeManifestSerializer)
        answer = services.code_index_manifest(principal=self.principal, repository=slug, manifest=data["manifest"])
        return Response(manifest_values(answer))


class CodeFilesView(ApiView):
    @extend_schema(
        tags=TAG,
        operation_id="code_indexes_files",
        summary="Sync your files, step 2: their contents (agents)",
        description=(
            "The files the manifest's answer asked for, in batches within its batch_limits. Each answer lists what "
            "is still needed; once nothing is (or with done: true) the index is updated in the background."
        ),
        parameters=[SlugParameter],
        request=s.CodeFilesSerializer,
        responses={200: s.CodeUploadAnswerSerializer},
    )
    def post(self, request: Request, slug: str) -> Response:
        data = self.body(s.CodeFilesSerializer)
        files = [dict(entry) for entry in data["files"]] if data.get("files") else None
        answer = services.code_index_upload(principal=self.principal, repository=slug, files=files, done=data["done"])
        return Response(upload_values(answer))


class CodeRunListView(ApiView):
    @extend_schema(
        tags=TAG,
        operation_id="code_indexes_runs",
        summary="A code index's runs",
        description="Path runs, manifest syncs and watch re-scans that found changes, newest first.",
        parameters=[SlugParameter, s.CodeRunQuerySerializer],
        responses={200: s.CodeRunPageSerializer},
    )
    def get(self, request: Request, slug: str) -> Response:
        query = self.query(s.CodeRunQuerySerializer)
        page = pagination.cursor_page(
            selectors.code_index_runs(self.principal, slug),
            RUNS,
            limit=query["limit"],
            cursor=query.get("cursor"),
            fingerprint=pagination.fingerprint({"code-runs": slug, "limit": query["limit"]}),
        )
        return Response({"results": [run_values(run) for run in page.items], "next_cursor": page.next_cursor})


class CodeSearchView(ApiView):
    @extend_schema(
        tags=TAG,
        operation_id="code_search",
        summary="Search code",
        description=(
            "Hybrid search (meaning and words: content, identifiers split on camelCase and snake_case, paths) over "
            "your organization's code indexes, with filters. Results best first, each with `score`, the estimated "
            "probability that it is relevant; those below `min_score` (by default a low floor) are left out, and "
            "when that leaves none, `below_floor` says how many scored below it."
        ),
        request=s.CodeSearchSerializer,
        responses={200: s.CodeSearchResultSerializer},
    )
    def post(self, request: Request) -> Response:
        result = code_search(self.principal, CodeSearchParams.build(**self.body(s.CodeSearchSerializer)))
        body: dict[str, Any] = {"results": [hit_values(hit) for hit in result.hits], "warning": result.degraded}
        if result.below_floor is not None:
            body["below_floor"] = {"count": result.below_floor.count, "best_score": result.below_floor.best_score}
        return Response(body)
