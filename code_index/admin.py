"""Each repository's code index in the admin: its state, the last run's progress, and every run.

Read-only, and scoped like every organization's object (organizations.admin_scoping): a member
sees the indexes of their own organizations only. Indexing and deleting go through the agents'
tools, the REST API or manage.py code_index.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import Prefetch, QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from code_index.models import CodeIndex, CodeIndexRun, RunStatus
from organizations.admin_scoping import OrganizationScopedAdmin

RUN_FIELDS = (
    "started_at", "trigger", "status", "phase", "requested_by", "total_files", "indexed_files", "added", "modified",
    "removed", "skipped_files", "chunks_written", "embeddings_computed", "embeddings_reused", "resumed", "completed_at",
    "error",
)  # fmt: skip
RUNS_SHOWN = 20


def _state(run: CodeIndexRun | None) -> str:
    if run is None:
        return "-"
    if run.status == RunStatus.INDEXING:
        return f"indexing ({run.get_phase_display().lower()}): {run.indexed_files} of {run.total_files} files"
    return str(run.get_status_display())


@admin.register(CodeIndex)
class CodeIndexAdmin(OrganizationScopedAdmin):
    list_display = (
        "repository", "state", "file_count", "chunk_count", "source", "root_path", "watch", "last_completed_at",
    )  # fmt: skip
    list_filter = ("source", "watch")
    search_fields = ("repository__slug", "root_path")
    ordering = ("repository__slug",)
    readonly_fields = (
        "organization", "repository", "state", "error", "source", "root_path", "watch", "file_count", "chunk_count",
        "languages", "created_at", "last_completed_at", "checked_at", "recent_runs",
    )  # fmt: skip
    fields = readonly_fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[CodeIndex]:
        latest = CodeIndexRun.objects.defer("manifest", "needed").order_by("-started_at", "-id")
        return (
            super()
            .get_queryset(request)
            .select_related("organization", "repository")
            .prefetch_related(Prefetch("runs", queryset=latest))
        )

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @staticmethod
    def _latest(obj: CodeIndex) -> CodeIndexRun | None:
        runs = list(obj.runs.all())
        return runs[0] if runs else None

    @admin.display(description="status")
    def state(self, obj: CodeIndex) -> str:
        return _state(self._latest(obj))

    @admin.display(description="error of the last run")
    def error(self, obj: CodeIndex) -> str:
        run = self._latest(obj)
        return format_html("<pre>{}</pre>", run.error) if run is not None and run.error else "-"

    @admin.display(description=f"the latest {RUNS_SHOWN} runs")
    def recent_runs(self, obj: CodeIndex) -> str:
        runs = list(obj.runs.all()[:RUNS_SHOWN])
        if not runs:
            return "-"
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{} of {}</td><td>{} / {} / {}</td><td>{}</td><td>{}</td></tr>",
            (
                (
                    f"{run.started_at:%Y-%m-%d %H:%M:%S}",
                    run.get_trigger_display(),
                    _state(run),
                    run.indexed_files,
                    run.total_files,
                    run.added,
                    run.modified,
                    run.removed,
                    run.chunks_written,
                    run.error or "",
                )
                for run in runs
            ),
        )
        every = reverse("admin:code_index_codeindexrun_changelist") + f"?index__id__exact={obj.pk}"
        return format_html(
            "<table><thead><tr><th>started</th><th>trigger</th><th>status</th><th>files</th>"
            "<th>added / changed / removed</th><th>chunks written</th><th>error</th></tr></thead>"
            '<tbody>{}</tbody></table><p><a href="{}">Every run of this index</a></p>',
            rows,
            every,
        )


@admin.register(CodeIndexRun)
class CodeIndexRunAdmin(OrganizationScopedAdmin):
    list_display = ("index", "started_at", "trigger", "status", "phase", "indexed_files", "total_files",
                    "added", "modified", "removed", "chunks_written", "completed_at")  # fmt: skip
    list_filter = ("status", "trigger", "index")
    ordering = ("-started_at",)
    readonly_fields = ("organization", "index", *RUN_FIELDS)
    fields = readonly_fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[CodeIndexRun]:
        return super().get_queryset(request).select_related("index__repository").defer("manifest", "needed")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
