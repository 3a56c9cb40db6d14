"""An organization exported and imported over REST, by its admins (transfer/)."""

from __future__ import annotations

import io
import tempfile

from django.http import FileResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from rest_api import serializers as s
from rest_api.views.base import ApiView
from transfer.export import export_for
from transfer.importer import ImportProblem, import_for

JSON_LINES = "application/x-ndjson"
# An export is written to memory up to this size, then to a temporary file, before it is sent: no
# database snapshot stays open while a slow client reads.
SPOOL_BYTES = 8_000_000


class ExportView(ApiView):
    @extend_schema(
        tags=["organization"],
        operation_id="organization_export",
        summary="Export the organization (admins)",
        description=(
            "Every row of the organization's own, as JSON Lines: a manifest, the people its rows name, memories "
            "with every version, links, entities, triples, proposals, repositories, code-index settings and audit "
            "events, then an end record with the counts. `manage.py import_organization` or `POST /import/` "
            "reads it."
        ),
        parameters=[s.ExportQuerySerializer],
        responses={
            (200, JSON_LINES): OpenApiResponse(OpenApiTypes.STR, description="The export, one JSON object a line.")
        },
    )
    def get(self, request: Request) -> FileResponse:
        query = self.query(s.ExportQuerySerializer)
        spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)  # noqa: SIM115 - the response closes it
        text = io.TextIOWrapper(spool, encoding="utf-8", newline="\n")
        export_for(self.principal, text, embeddings=query["embeddings"])
        text.flush()
        text.detach()
        spool.seek(0)
        name = f"{self.principal.organization.slug}.jsonl"
        return FileResponse(spool, content_type=JSON_LINES, as_attachment=True, filename=name)


class ImportView(ApiView):
    @extend_schema(
        tags=["organization"],
        operation_id="organization_import",
        summary="Import an export into the organization (admins)",
        description=(
            "The body is an export (JSON Lines, as `GET /export/` gives), checked whole before anything is written: "
            "a file cut short, altered or malformed is refused (400) with the line and what is wrong, and changes "
            "nothing. An import cut off (the server stopped) goes on from where it stopped when the same body is "
            "sent again; while one runs, another into the organization is refused (409). "
            "Every row gets a new id unless `keep_ids` is set; memories without vectors are embedded afterwards."
        ),
        parameters=[s.ImportQuerySerializer],
        request={JSON_LINES: OpenApiTypes.STR},
        responses={200: s.ImportResultSerializer},
    )
    def post(self, request: Request) -> Response:
        query = self.query(s.ImportQuerySerializer)
        try:
            result = import_for(self.principal, io.BytesIO(request._request.body), keep_ids=query["keep_ids"])
        except ImportProblem as problem:
            raise serializers.ValidationError({"body": [f"{problem}; nothing was imported"]}) from None
        body = {
            "organization": result.organization.slug,
            "counts": result.counts,
            "pending_embeddings": result.pending_embeddings,
            "run": str(result.run.pk),
            "resumed_from": result.resumed_from,
        }
        return Response(body)
