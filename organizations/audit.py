"""Writing audit events: called by services, inside their transaction."""

from __future__ import annotations

from typing import Any

from organizations.models import AuditEvent
from organizations.principal import Principal
from screening import redact_secrets


def audit_event(
    *,
    principal: Principal,
    action: str,
    target_type: str,
    target_id: object,
    reason: str = "",
    data: dict[str, Any] | None = None,
) -> AuditEvent:
    """An unsaved event, for services that write many at once with ``bulk_create``. A credential
    someone typed into a reason is never kept: it is redacted."""
    return AuditEvent(
        organization=principal.organization,
        action=action,
        target_type=target_type,
        target_id=str(target_id),
        actor=principal.label,
        user=principal.user,
        token=principal.token,
        reason=redact_secrets(reason) if reason else "",
        data=data or {},
    )


def audit_record(
    *,
    principal: Principal,
    action: str,
    target_type: str,
    target_id: object,
    reason: str = "",
    data: dict[str, Any] | None = None,
) -> AuditEvent:
    event = audit_event(
        principal=principal, action=action, target_type=target_type, target_id=target_id, reason=reason, data=data
    )
    event.save()
    return event
