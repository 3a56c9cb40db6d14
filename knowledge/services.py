"""Writes for knowledge: entities with their aliases, and temporal facts (one module because facts
resolve entities and both share the name rules). Links between memories: knowledge.links."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from knowledge.models import Entity, EntityAlias, Predicate, Triple
from knowledge.words import normalized_name
from memories import validation
from memories.inputs import MemoryId
from memories.selectors import memory_get
from memories.trust import screened_values
from memory_platform.db.tenancy import same_organization
from memory_platform.exceptions import Conflict, NotFound, ValidationError
from organizations.audit import audit_record
from organizations.models import Role
from organizations.principal import Principal
from organizations.selectors import repository_named

NAME_MAX = 200


def _name(value: object, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(f"{field} must be a non-empty name", details={"field": field})
    cleaned = " ".join(validation.without_nul(value, field).split())
    if len(cleaned) > NAME_MAX:
        raise ValidationError(f"{field} is longer than {NAME_MAX} characters", details={"field": field})
    return cleaned


def _entity_named(principal: Principal, normalized: str) -> Entity | None:
    alias = (
        EntityAlias.objects.select_related("entity")
        .filter(same_organization("entity"), organization=principal.organization, normalized=normalized)
        .first()
    )
    return alias.entity if alias is not None else None


def entity_resolve(*, principal: Principal, name: str, entity_type: str = "", create: bool = True) -> Entity | None:
    """The entity known by ``name`` (any alias, any case); created on first use when ``create``."""
    if create:
        entity, _ = entity_get_or_create(principal=principal, name=name, entity_type=entity_type)
        return entity
    return _entity_named(principal, normalized_name(_name(name, "name")))


def entity_get_or_create(*, principal: Principal, name: str, entity_type: str = "") -> tuple[Entity, bool]:
    """The entity known by ``name`` (any alias, any case), created on first use; and whether this
    call created it."""
    cleaned = _name(name, "name")
    normalized = normalized_name(cleaned)
    existing = _entity_named(principal, normalized)
    if existing is not None:
        return existing, False
    principal.require(Role.AGENT, "creating entities")
    try:
        with transaction.atomic():
            entity = Entity.objects.create(organization=principal.organization, name=cleaned, entity_type=entity_type)
            EntityAlias.objects.create(
                organization=principal.organization, entity=entity, alias=cleaned, normalized=normalized
            )
    except IntegrityError:
        # Created concurrently under the same name: use that one.
        return EntityAlias.objects.get(organization=principal.organization, normalized=normalized).entity, False
    return entity, True


@transaction.atomic
def entity_add_alias(*, principal: Principal, entity_name: str, alias: str) -> Entity:
    principal.require(Role.AGENT, "adding entity aliases")
    entity = entity_resolve(principal=principal, name=entity_name, create=False)
    if entity is None:
        raise NotFound(f"entity '{entity_name}' not found")
    cleaned = _name(alias, "alias")
    normalized = normalized_name(cleaned)
    existing = EntityAlias.objects.filter(organization=principal.organization, normalized=normalized).first()
    if existing is not None:
        if existing.entity_id != entity.pk:
            raise Conflict(f"'{cleaned}' already names another entity ('{existing.entity.name}')")
        return entity
    EntityAlias.objects.create(organization=principal.organization, entity=entity, alias=cleaned, normalized=normalized)
    return entity


def _predicate(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValidationError("predicate must be a non-empty name, e.g. 'works_on'", details={"field": "predicate"})
    cleaned = "_".join(_name(value, "predicate").lower().split())
    if len(cleaned) > 100:
        raise ValidationError("predicate is longer than 100 characters", details={"field": "predicate"})
    return cleaned


def _confidence(value: object) -> float:
    if value is None:
        return 1.0
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ValidationError("confidence must be a number from 0 to 1", details={"field": "confidence"})
    return float(value)


def _lock_subject_predicate(principal: Principal, subject: Entity, predicate: str) -> None:
    # Serialises asserts of one (subject, predicate): two concurrent asserts cannot both stay active.
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
            [f"triple:{principal.organization.pk}:{subject.pk}:{predicate}"],
        )


def _close(triple: Triple, *, at: datetime, now: datetime, reason: str = "", successor: Triple | None = None) -> Triple:
    """End a fact's validity at ``at``: expire the row and record its bounded copy (if any time is
    left). Returns the record of the ended fact: the bounded copy, or the expired row itself."""
    triple.expired_at = now
    if at <= triple.valid_from:
        # Ended before it began: no bounded copy is recorded, so the expired row keeps the why.
        triple.invalidation_reason = reason
        triple.superseded_by = successor
        triple.save(update_fields=["expired_at", "invalidation_reason", "superseded_by"])
        return triple
    triple.save(update_fields=["expired_at"])
    return Triple.objects.create(
        organization=triple.organization,
        subject=triple.subject,
        predicate=triple.predicate,
        object=triple.object,
        confidence=triple.confidence,
        provenance=triple.provenance,
        repository=triple.repository,
        memory=triple.memory,
        valid_from=triple.valid_from,
        valid_to=at,
        recorded_at=now,
        invalidation_reason=reason,
        superseded_by=successor,
        created_by=triple.created_by,
        created_by_token=triple.created_by_token,
    )


@dataclass(frozen=True)
class NewFact:
    """A fact as asserted, its fields checked (entities by name: they are resolved when written)."""

    subject_name: str
    predicate: str
    object_name: str
    confidence: float
    provenance: dict[str, object]
    valid_from: datetime | None

    @classmethod
    def parse(
        cls,
        *,
        subject: object,
        predicate: object,
        object: object,
        confidence: object = None,
        provenance: object = None,
        valid_from: object = None,
    ) -> NewFact:
        predicate_name = _predicate(predicate)
        checked_confidence = _confidence(confidence)
        subject_name, object_name = _name(subject, "name"), _name(object, "name")
        starts = validation.aware_datetime(valid_from, "valid_from")
        if provenance is not None and not isinstance(provenance, dict | str):
            raise ValidationError("provenance must be text or an object", details={"field": "provenance"})
        return cls(
            subject_name=subject_name,
            predicate=predicate_name,
            object_name=object_name,
            confidence=checked_confidence,
            provenance={"note": provenance} if isinstance(provenance, str) else dict(provenance or {}),
            valid_from=starts,
        )


@transaction.atomic
def triple_assert(
    *,
    principal: Principal,
    subject: str,
    predicate: str,
    object: str,
    confidence: float | None = None,
    provenance: str | dict[str, object] | None = None,
    valid_from: datetime | str | None = None,
    repository: str | None = None,
    memory_id: MemoryId | None = None,
) -> tuple[Triple, bool]:
    """Record that (subject, predicate, object) holds from ``valid_from`` (default now); returns
    the fact and whether this call recorded it.

    Unless the predicate is declared multi-valued, the fact currently open for (subject, predicate)
    ends where the new one starts; a fact starting before a recorded one of another object ends
    where that one begins. Asserting what is already believed changes nothing.
    """
    principal.require(Role.AGENT, "asserting facts")
    screened = screened_values(
        principal.organization, {"subject": subject, "predicate": predicate, "object": object, "provenance": provenance}
    )
    asserted = NewFact.parse(
        subject=screened["subject"],
        predicate=screened["predicate"],
        object=screened["object"],
        confidence=confidence,
        provenance=screened["provenance"],
        valid_from=valid_from,
    )
    predicate_name = asserted.predicate
    subject_entity, _ = entity_get_or_create(principal=principal, name=asserted.subject_name)
    object_entity, _ = entity_get_or_create(principal=principal, name=asserted.object_name)
    now = timezone.now()
    starts = asserted.valid_from or now
    repo = repository_named(principal, repository) if repository else None
    source_memory = memory_get(principal, validation.memory_id(memory_id, "memory_id")) if memory_id else None

    _lock_subject_predicate(principal, subject_entity, predicate_name)
    multi = Predicate.objects.filter(
        organization=principal.organization, name=predicate_name, multi_valued=True
    ).exists()
    # Every record currently believed for (subject, predicate), open or bounded.
    believed = list(
        Triple.objects.select_for_update().filter(
            organization=principal.organization, subject=subject_entity, predicate=predicate_name, expired_at=None
        )
    )
    # The new fact lasts until the next recorded fact of another object begins (open if none
    # does): a fact learned late about an earlier period does not replace what followed it.
    ends = None
    if not multi:
        ends = min(
            (t.valid_from for t in believed if t.valid_from > starts and t.object_id != object_entity.pk),
            default=None,
        )
    # Already believed: the same object over a period containing the new one's.
    same = next(
        (t for t in believed if t.object_id == object_entity.pk and t.valid_from <= starts and t.valid_to == ends),
        None,
    )
    if same is not None:
        return same, False
    new = Triple.objects.create(
        organization=principal.organization,
        subject=subject_entity,
        predicate=predicate_name,
        object=object_entity,
        confidence=asserted.confidence,
        provenance=asserted.provenance,
        repository=repo,
        memory=source_memory,
        valid_from=starts,
        valid_to=ends,
        recorded_at=now,
        created_by=principal.user,
        created_by_token=principal.token,
    )
    # Records overlapping the new fact's period end where it begins (a multi-valued predicate
    # only merges the same object).
    ended = []
    for fact in believed:
        if multi and fact.object_id != object_entity.pk:
            continue
        if (ends is None or fact.valid_from < ends) and (fact.valid_to is None or fact.valid_to > starts):
            ended.append(_close(fact, at=max(starts, fact.valid_from), now=now, reason="superseded", successor=new))
    # What it replaced, as its answer says (the same object carried over is not a replacement).
    new.ended = tuple(fact for fact in ended if fact.object_id != object_entity.pk)
    audit_record(
        principal=principal,
        action="triple.assert",
        target_type="triple",
        target_id=new.pk,
        data={"subject": subject_entity.name, "predicate": predicate_name, "object": object_entity.name},
    )
    return new, True


@transaction.atomic
def triple_invalidate(
    *, principal: Principal, triple_id: int | str, reason: str, successor_id: int | str | None = None
) -> Triple:
    """End a fact now (it stopped being true, or was never true), keeping it in the history."""
    principal.require(Role.AGENT, "invalidating facts")
    if not isinstance(reason, str) or not reason.strip():
        raise ValidationError("reason is required: say why the fact no longer holds", details={"field": "reason"})
    try:
        pk = int(triple_id)
    except (TypeError, ValueError):
        raise ValidationError(f"'{triple_id}' is not a fact id", details={"field": "id"}) from None
    triple = (
        Triple.objects.select_for_update()
        .filter(organization=principal.organization, pk=pk, expired_at__isnull=True)
        .first()
    )
    if triple is None:
        raise NotFound(f"fact {pk} not found (or already replaced)")
    successor = None
    if successor_id is not None and successor_id != "":
        try:
            successor_pk = int(successor_id)
        except (TypeError, ValueError):
            raise ValidationError(
                f"successor_id '{successor_id}' is not a fact id", details={"field": "successor_id"}
            ) from None
        successor = Triple.objects.filter(organization=principal.organization, pk=successor_pk).first()
        if successor is None:
            raise NotFound(f"fact {successor_id} (successor) not found")
    now = timezone.now()
    end = min(triple.valid_to or now, now)
    _close(triple, at=end, now=now, reason=reason.strip(), successor=successor)
    audit_record(principal=principal, action="triple.invalidate", target_type="triple", target_id=pk, reason=reason)
    return triple
