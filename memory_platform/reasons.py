"""Why a change was made: the reason every decision keeps in its version and audit event, and the
page that asks for it in the admin."""

from __future__ import annotations

from dataclasses import dataclass

from django.http import HttpRequest

from memory_platform.exceptions import DomainError, ValidationError

REASON_MAX_CHARS = 2000


def reason(value: object) -> str:
    """A reason as kept: text, trimmed, at most 2,000 characters."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValidationError("reason must be text", details={"field": "reason"})
    text = value.strip()
    if len(text) > REASON_MAX_CHARS:
        raise ValidationError(
            f"reason is {len(text)} characters; keep it to {REASON_MAX_CHARS}", details={"field": "reason"}
        )
    if "\x00" in text:
        raise ValidationError("reason cannot contain NUL characters", details={"field": "reason"})
    return text


@dataclass(frozen=True)
class Confirmation:
    """What a reason page received: the reason once confirmed with a good one, else what to fix."""

    reason: str = ""
    error: str = ""


def confirmation(request: HttpRequest, kept_in: str) -> Confirmation:
    """Read a reason page's post (``post=yes`` and ``reason``); ``kept_in`` says where the reason goes."""
    if request.POST.get("post") != "yes":
        return Confirmation()
    try:
        given = reason(request.POST.get("reason", ""))
    except DomainError as refused:
        return Confirmation(error=refused.message)
    return Confirmation(reason=given, error="" if given else f"Say why: the reason is kept in {kept_in}.")
