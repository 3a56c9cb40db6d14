"""A memory's history in the admin: every version whole, a word diff between any two, and revert.

Revert never rewrites history: it writes a new version that reads like the chosen one
(memories.decisions.memory_revert), after a page showing what will change and asking why.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse

from memories import decisions, validation
from memories.diff import COMPARED_FIELDS, as_text, snapshot_changes
from memories.models import Memory, MemoryVersion
from memories.public import memory_values
from memory_platform import reasons
from memory_platform.exceptions import DomainError
from organizations.selectors import principal_for_user


def _context(request: HttpRequest, memory: Memory, title: str, **extra: Any) -> dict[str, Any]:
    return {
        **admin.site.each_context(request),
        "opts": Memory._meta,
        "original": memory,
        "memory": memory,
        "title": title,
        **extra,
    }


def _version(memory: Memory, number: object) -> MemoryVersion:
    try:
        parsed = validation.version_number(number)
    except DomainError as error:
        raise Http404(error.message) from None
    version = MemoryVersion.objects.filter(memory=memory, version=parsed).select_related("token", "user").first()
    if version is None:
        raise Http404(f"memory {memory.pk} has no version {parsed}")
    return version


def history(request: HttpRequest, memory: Memory, *, can_revert: bool) -> TemplateResponse:
    """Every version, newest first, with two radio columns to pick the versions to compare."""
    versions = list(memory.versions.order_by("-version").select_related("token", "user"))
    return TemplateResponse(
        request,
        "admin/memories/memory/versions.html",
        _context(
            request, memory, f"History of “{memory.title}”", versions=versions,
            compare_from=versions[1].version if len(versions) > 1 else 1, compare_to=memory.version,
            has_change=can_revert,
        ),
    )  # fmt: skip


def version_detail(request: HttpRequest, memory: Memory, number: str) -> TemplateResponse:
    version = _version(memory, number)
    fields = [(name, as_text(version.snapshot.get(name))) for name in COMPARED_FIELDS if name in version.snapshot]
    return TemplateResponse(
        request,
        "admin/memories/memory/version.html",
        _context(request, memory, f"Version {version.version} of “{memory.title}”", version=version, fields=fields),
    )


def compare(request: HttpRequest, memory: Memory) -> TemplateResponse:
    """Field by field, word by word, from one version to another (by default: the last change)."""
    newer = _version(memory, request.GET.get("to") or memory.version)
    older = _version(memory, request.GET.get("from") or max(newer.version - 1, 1))
    return TemplateResponse(
        request,
        "admin/memories/memory/compare.html",
        _context(
            request, memory, f"“{memory.title}”: version {older.version} → {newer.version}",
            older=older, newer=newer, changes=snapshot_changes(older.snapshot, newer.snapshot),
            versions=list(memory.versions.order_by("-version").values_list("version", flat=True)),
        ),
    )  # fmt: skip


def revert(request: HttpRequest, memory: Memory, number: str) -> HttpResponse:
    """What going back to a version changes (from now to that version), a reason, then a new version."""
    version = _version(memory, number)
    error = ""
    if request.method == "POST":
        try:
            principal = principal_for_user(user=request.user, organization=memory.organization)  # type: ignore[arg-type]
            reason = reasons.reason(request.POST.get("reason", ""))
            if not reason:
                raise DomainError("Say why: the reason is kept in the new version and the audit log.")
            saved = decisions.memory_revert(
                principal=principal, memory_id=memory.pk, version=version.version, reason=reason
            )
        except DomainError as refused:
            error = refused.message
        else:
            if saved.version == memory.version:
                said = f"“{saved.title}” already reads as version {version.version}: nothing changed."
            else:
                said = f"“{saved.title}” reads as version {version.version} again (new version {saved.version})."
            messages.success(request, said)
            return HttpResponseRedirect(reverse("admin:memories_memory_change", args=[memory.pk]))
    current = {**memory_values(memory), "owner": memory.owner.get_username() if memory.owner else None}
    return TemplateResponse(
        request,
        "admin/memories/memory/revert.html",
        _context(
            request, memory, f"Revert “{memory.title}” to version {version.version}?", version=version,
            changes=snapshot_changes(current, version.snapshot), error=error,
            reason=request.POST.get("reason", ""), reason_max=reasons.REASON_MAX_CHARS,
        ),
    )  # fmt: skip
