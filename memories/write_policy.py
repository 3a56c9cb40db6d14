"""An organization's write policy: read by anyone of it, changed by its admins (memories.trust applies it).

Changing it is audited with the values before and after, so it can always be set back.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import transaction
from django.utils import timezone

from memories import validation
from memories.models import IMPORTANCE_MAX, IMPORTANCE_MIN, CredentialHandling, WritePolicy
from memories.trust import author_of, write_policy_for
from memory_platform import reasons
from memory_platform.exceptions import ValidationError
from memory_platform.timefmt import iso
from organizations.audit import audit_record
from organizations.models import Role
from organizations.principal import Principal

POLICY_FIELDS = ("agent_active_types", "agent_max_importance", "pin_requires_curator", "credentials")


def write_policy_get(principal: Principal) -> WritePolicy:
    """The principal's organization's policy (its defaults when it never set one)."""
    return write_policy_for(principal.organization)


def write_policy_values(policy: WritePolicy) -> dict[str, Any]:
    return {
        "agent_active_types": sorted(policy.agent_active_types),
        "agent_max_importance": policy.agent_max_importance,
        "pin_requires_curator": policy.pin_requires_curator,
        "credentials": policy.credentials,
        "updated_at": iso(policy.updated_at) if policy.pk else None,
        "updated_by": policy.updated_by or None,
    }


def _parsed(data: Mapping[str, Any]) -> dict[str, Any]:
    unknown = set(data) - set(POLICY_FIELDS)
    if unknown:
        raise ValidationError(
            f"unknown field(s): {', '.join(sorted(unknown))}; the policy's fields are: {', '.join(POLICY_FIELDS)}"
        )
    parsed: dict[str, Any] = {}
    if "agent_active_types" in data:
        types = data["agent_active_types"]
        if not isinstance(types, list):
            raise ValidationError(
                "agent_active_types must be a list of memory types", details={"field": "agent_active_types"}
            )
        parsed["agent_active_types"] = sorted({validation.memory_type(kind) for kind in types})
    if "agent_max_importance" in data:
        number = data["agent_max_importance"]
        if isinstance(number, bool) or not isinstance(number, int) or not IMPORTANCE_MIN <= number <= IMPORTANCE_MAX:
            raise ValidationError(
                f"agent_max_importance must be a whole number from {IMPORTANCE_MIN} to {IMPORTANCE_MAX}",
                details={"field": "agent_max_importance"},
            )
        parsed["agent_max_importance"] = number
    if "pin_requires_curator" in data:
        if not isinstance(data["pin_requires_curator"], bool):
            raise ValidationError(
                "pin_requires_curator must be true or false", details={"field": "pin_requires_curator"}
            )
        parsed["pin_requires_curator"] = data["pin_requires_curator"]
    if "credentials" in data:
        if data["credentials"] not in CredentialHandling.values:
            raise ValidationError(
                f"credentials must be one of: {', '.join(CredentialHandling.values)}", details={"field": "credentials"}
            )
        parsed["credentials"] = data["credentials"]
    return parsed


@transaction.atomic
def write_policy_update(*, principal: Principal, data: Mapping[str, Any], reason: str = "") -> WritePolicy:
    """Change the organization's write policy (admins). Only the fields given change."""
    principal.require(Role.ADMIN, "changing the organization's write policy")
    why = reasons.reason(reason)
    changes = _parsed(data)
    policy = WritePolicy.objects.select_for_update().filter(organization=principal.organization).first()
    if policy is None:
        policy = WritePolicy(organization=principal.organization)
    before = write_policy_values(policy)
    for name, value in changes.items():
        setattr(policy, name, value)
    after = write_policy_values(policy)
    changed = [name for name in POLICY_FIELDS if before[name] != after[name]]
    if not changed:
        return policy
    policy.updated_at = timezone.now()
    policy.updated_by = author_of(principal)[1]
    policy.save()
    audit_record(
        principal=principal,
        action="write_policy.update",
        target_type="write_policy",
        target_id=principal.organization.slug,
        reason=why,
        data={"before": {k: before[k] for k in changed}, "after": {k: after[k] for k in changed}},
    )
    return policy
