"""Writing audit events: called by services, inside their transaction."""

from __future__ import annotations

from typing import Any

from organizations.models import AuditEvent
from organizations.principal import Principal
from screening import redact_secrets


def audit_values(
    *,
    principal: Principal,
    action: str,
    target_type: str,
    target_id: object,
    reason: str = "",
    data: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """An event's values by attribute name, for services that write many at once (copied as rows:
    memory_platform.bulk.copy_values). A credential someone typed into a reason is never kept: it is
    redacted."""
    return {
        "organization_id": principal.organization.pk,
        "action": action,
        "target_type": target_type,
        "target_id": str(target_id),
        "actor": principal.label,
        "user_id": principal.user.pk if principal.user is not None else None,
        "token_id": principal.token.pk if principal.token is not None else None,
        "reason": redact_secrets(reason) if reason else "",
        "data": data or {},
    }


def audit_record(
    *,
    principal: Principal,
    action: str,
    target_type: str,
    target_id: object,
    reason: str = "",
    data: dict[str, Any] | None = None,
) -> AuditEvent:
    event = AuditEvent(
        **audit_values(
            principal=principal, action=action, target_type=target_type, target_id=target_id, reason=reason, data=data
        )
    )
    event.save()
    return event
