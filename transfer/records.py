"""What an export holds, kind by kind, in the order an import creates them, and how a row becomes a
record (JSON) and back.

A record is ``{"kind": ..., "fields": {attname: value}}``: every concrete field of the row by its
attribute name (foreign keys as ``<name>_id``), ids as text, times in ISO 8601, vectors as lists.
Generated columns (the keyword index) are left out: PostgreSQL makes them again. Foreign keys point
at rows of the same file, at the organization (whatever its id on the other side) or at a person,
known everywhere by username (``user`` records carry what a person is, never a password).
"""

from __future__ import annotations

import datetime
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, cast

from django.db import models
from django.db.models import Prefetch, Q, QuerySet

from code_index.models import CodeIndex
from instructions.models import InstructionText
from knowledge.models import Entity, EntityAlias, MemoryLink, Predicate, Triple
from lifecycle.models import ConsolidationProposal, DismissedPair, LifecycleRun
from memories.models import Memory, MemoryAccess, MemoryVersion, RecallBundle, WritePolicy
from organizations.models import ApiToken, AuditEvent, Membership, Organization, Repository, User

FORMAT = "memory-platform-export"
VERSION = 1
# The fields of a person an export carries (no password, no permissions: those are the platform's).
USER_FIELDS = ("username", "email", "first_name", "last_name", "is_active")


@dataclass(frozen=True)
class Kind:
    """One kind of record: its model and the organization's rows of it."""

    name: str
    model: type[models.Model]
    rows: Callable[[Organization], QuerySet[Any]]
    # Many-to-many fields exported as lists of the related rows' ids.
    many: tuple[str, ...] = ()
    # Foreign keys to rows of the same kind: set once every row of the kind exists.
    later: tuple[str, ...] = field(default=())
    # What makes a row the same as one the organization already holds (attnames, the organization
    # aside): imported beside existing rows, such a row is the existing one, not a second.
    natural: tuple[str, ...] = ()


def _own(model: type[models.Model]) -> Callable[[Organization], QuerySet[Any]]:
    return lambda organization: model._default_manager.filter(organization=organization).order_by("pk")


KINDS: tuple[Kind, ...] = (
    Kind("repository", Repository, _own(Repository), natural=("slug",)),
    Kind("api_token", ApiToken, _own(ApiToken)),
    Kind("membership", Membership, _own(Membership), natural=("user_id",)),
    Kind("write_policy", WritePolicy, _own(WritePolicy), natural=("organization_id",)),
    Kind("memory", Memory, _own(Memory), later=("superseded_by",)),
    Kind("memory_version", MemoryVersion, _own(MemoryVersion)),
    Kind("memory_access", MemoryAccess, _own(MemoryAccess)),
    Kind("recall_bundle", RecallBundle, _own(RecallBundle), natural=("actor", "key")),
    Kind("entity", Entity, _own(Entity), natural=("name",)),
    Kind("entity_alias", EntityAlias, _own(EntityAlias), natural=("normalized",)),
    Kind("predicate", Predicate, _own(Predicate), natural=("name",)),
    Kind("memory_link", MemoryLink, _own(MemoryLink)),
    Kind("triple", Triple, _own(Triple), later=("superseded_by",)),
    Kind("instruction_text", InstructionText, _own(InstructionText), natural=("key",)),
    Kind("lifecycle_run", LifecycleRun, _own(LifecycleRun)),
    Kind("consolidation_proposal", ConsolidationProposal, _own(ConsolidationProposal), many=("memories",)),
    Kind("dismissed_pair", DismissedPair, _own(DismissedPair), natural=("first_id", "second_id")),
    Kind("code_index", CodeIndex, _own(CodeIndex), natural=("repository_id",)),
    Kind("audit_event", AuditEvent, _own(AuditEvent)),
)
BY_NAME = {kind.name: kind for kind in KINDS}
BY_MODEL = {kind.model: kind for kind in KINDS}


def fields_of(model: type[models.Model]) -> list[models.Field[Any, Any]]:
    """The fields a record carries: every concrete one but generated columns."""
    return [f for f in model._meta.concrete_fields if not isinstance(f, models.GeneratedField)]


def people_of(organization: Organization) -> QuerySet[User]:
    """Every person a row of the organization names: members, owners, authors, deciders."""
    named = Q(pk__in=[])
    for kind in KINDS:
        for f in fields_of(kind.model):
            if f.is_relation and f.related_model is User:
                ids = kind.rows(organization).exclude(**{f.attname: None}).values(f.attname)
                named |= Q(pk__in=ids)
    return User.objects.filter(named).distinct().order_by("pk")


_SCALARS: tuple[tuple[type | tuple[type, ...], Callable[[Any], Any]], ...] = (
    (uuid.UUID, str),
    ((datetime.datetime, datetime.date, datetime.time), lambda value: value.isoformat()),
    (datetime.timedelta, lambda value: value.total_seconds()),
    (Decimal, str),
)


def encode(value: Any) -> Any:
    """A field's value as JSON."""
    for types, convert in _SCALARS:
        if isinstance(value, types):
            return convert(value)
    if isinstance(value, list | tuple):
        return [encode(item) for item in value]
    if hasattr(value, "tolist"):  # a vector (numpy)
        return [float(item) for item in value.tolist()]
    return value


@dataclass(frozen=True)
class Many:
    """A many-to-many field read through its own table's rows (which name their organization), not
    through a join to the related rows: the ids are all an export needs."""

    through: type[models.Model]
    source: str  # the through table's key to the row's own model
    target: str  # and to the related model
    related: type[models.Model]  # the related model
    accessor: str  # the row's own model's name for its through rows

    @classmethod
    def of(cls, kind: Kind, name: str) -> Many:
        f = cast("models.ManyToManyField[Any, Any]", kind.model._meta.get_field(name))
        through = cast("type[models.Model]", f.remote_field.through)
        source: Any = through._meta.get_field(f.m2m_field_name())
        related = cast("type[models.Model]", f.related_model)
        accessor = source.remote_field.get_accessor_name()
        return cls(through, f.m2m_field_name(), f.m2m_reverse_field_name(), related, accessor)

    def rows(self, organization: Organization) -> QuerySet[Any]:
        return self.through._default_manager.filter(organization=organization)

    def prefetch(self, name: str, organization: Organization) -> Prefetch[Any]:
        """For ``prefetch_related``: each row's through rows, as ``_{name}_rows``."""
        return Prefetch(self.accessor, queryset=self.rows(organization), to_attr=f"_{name}_rows")


def record(kind: Kind, row: models.Model, *, embeddings: bool) -> dict[str, Any]:
    values = {}
    for f in fields_of(kind.model):
        if f.name == "embedding" and not embeddings:
            continue
        values[f.attname] = encode(getattr(row, f.attname))
    for name in kind.many:
        many = Many.of(kind, name)
        through_rows = getattr(row, f"_{name}_rows", None)  # Many.prefetch
        if through_rows is None:
            through_rows = many.rows(row.organization_id).filter(**{many.source: row})  # type: ignore[attr-defined]
        values[name] = sorted(str(getattr(through, f"{many.target}_id")) for through in through_rows)
    return {"kind": kind.name, "fields": values}
