"""What the lifecycle workers hand to curators: proposals, the pairs curators dismissed, and run records.

A merge, whether a curator applied a proposal, an agent asked for it or the worker did it on its own,
is itself recorded as a proposal in state ``applied``: the proposal keeps what the merge changed, so
it can be undone exactly, and the curator sees every automatic change in one list.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Prefetch, Q, QuerySet
from django.utils import timezone

from memories.models import Memory
from memory_platform.db.tenancy import same_organization
from organizations.models import ApiToken, Organization, User


class ProposalKind(models.TextChoices):
    MERGE = "merge", "Merge duplicates"
    SUPERSEDE = "supersede", "Supersede"
    CONTRADICTION = "contradiction", "Possible contradiction"
    STALE = "stale", "Stale"


class ProposalState(models.TextChoices):
    OPEN = "open", "Open"
    APPLIED = "applied", "Applied"
    DISMISSED = "dismissed", "Dismissed"
    UNDONE = "undone", "Undone"


class RunKind(models.TextChoices):
    CONSOLIDATION = "consolidation", "Consolidation"
    DECAY = "decay", "Decay"
    EXPIRY = "expiry", "Expiry"


class RunStatus(models.TextChoices):
    RUNNING = "running", "Running"
    COMPLETED = "completed", "Completed"
    FAILED = "failed", "Failed"


class LifecycleRun(models.Model):
    """One pass of a lifecycle worker over one organization."""

    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="lifecycle_runs", db_index=False
    )
    kind = models.CharField(max_length=16, choices=RunKind.choices)
    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.RUNNING)
    full = models.BooleanField(
        default=False, help_text="A full pass rather than the memories changed since the last run."
    )
    # Memories changed at or before this moment were looked at; the next incremental run starts here.
    watermark = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    counts = models.JSONField(default=dict, blank=True)
    errors = models.TextField(blank=True)
    time_budget_seconds = models.FloatField(default=0)
    seconds_used = models.FloatField(default=0)

    class Meta:
        ordering = ["-started_at"]
        indexes = [models.Index(fields=["organization", "kind", "-started_at"], name="lifecycle_run_org_kind_idx")]

    def __str__(self) -> str:
        return f"{self.kind} run of {self.organization_id} at {self.started_at:%Y-%m-%d %H:%M}"

    @property
    def counts_summary(self) -> str:
        """The counts as a person reads them: "examined 40, proposals: 1 merge, 1 contradiction"."""

        def said(key: str, value: object) -> str:
            name = key.replace("_", " ")
            if isinstance(value, dict):
                inner = ", ".join(f"{n} {kind.replace('_', ' ')}" for kind, n in value.items())
                return f"{name}: {inner or 'none'}"
            return f"{name} {value}"

        # Totals first, then the breakdowns (PostgreSQL keeps a JSON object's keys in its own order).
        counts = sorted((self.counts or {}).items(), key=lambda item: isinstance(item[1], dict))
        return ", ".join(said(key, value) for key, value in counts)


class ConsolidationProposal(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="consolidation_proposals", db_index=False
    )
    kind = models.CharField(max_length=16, choices=ProposalKind.choices)
    state = models.CharField(max_length=16, choices=ProposalState.choices, default=ProposalState.OPEN)
    memories: models.ManyToManyField[Memory, ProposalMemory] = models.ManyToManyField(
        Memory, related_name="consolidation_proposals", through="ProposalMemory"
    )
    # The ids as proposed, sorted: what "the same proposal" means, and what dismissal remembers.
    memory_ids = ArrayField(models.UUIDField())
    survivor = models.ForeignKey(
        Memory, null=True, blank=True, on_delete=models.SET_NULL, related_name="+", db_constraint=False
    )
    evidence = models.JSONField(default=dict, blank=True)
    # What applying it changed, so that undo can restore every member exactly.
    applied = models.JSONField(default=dict, blank=True)
    run = models.ForeignKey(
        LifecycleRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="proposals", db_constraint=False
    )
    created_at = models.DateTimeField(default=timezone.now)
    created_by = models.CharField(max_length=200, help_text="Who proposed it: the worker, an agent's token, a person.")
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.CharField(max_length=200, blank=True)
    decided_by_user = models.ForeignKey(User, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    decided_by_token = models.ForeignKey(ApiToken, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    reason = models.TextField(blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["organization", "state", "-created_at"], name="proposal_org_state_idx")]
        constraints = [
            # One open proposal of a kind for one set of memories, however many runs find it.
            models.UniqueConstraint(
                fields=["organization", "kind", "memory_ids"],
                condition=Q(state="open"),
                name="proposal_open_unique",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} of {len(self.memory_ids)} memories ({self.state})"

    # The memories are read through ProposalMemory, joined within the proposal's organization
    # (memory_platform.db.tenancy), never through ``memories``, whose join names the memory alone.
    member_rows: list[ProposalMemory]  # with_members

    @property
    def members(self) -> list[Memory]:
        """The memories the proposal names, the most important first (``with_members`` reads them
        for many proposals in one query; else one query, once)."""
        rows = getattr(self, "member_rows", None)
        if rows is None:
            rows = self.member_rows = list(proposal_member_rows().filter(consolidationproposal=self))
        return [row.memory for row in rows]

    def set_members(self, memory_ids: Iterable[Any]) -> None:
        """Make the proposal name these memories (of its organization), and no others."""
        wanted = set(memory_ids)
        rows = ProposalMemory.objects.filter(organization_id=self.organization_id, consolidationproposal=self)
        rows.exclude(memory_id__in=wanted).delete()
        have = set(rows.values_list("memory_id", flat=True))
        ProposalMemory.objects.bulk_create(
            ProposalMemory(consolidationproposal=self, memory_id=pk, organization_id=self.organization_id)
            for pk in sorted(wanted - have, key=str)
        )
        self.__dict__.pop("member_rows", None)


def proposal_member_rows(*related: str) -> QuerySet[ProposalMemory]:
    """Proposals' ProposalMemory rows with their memories (and the memories' ``related``)."""
    return (
        ProposalMemory.objects.filter(same_organization("memory"))
        .select_related("memory", *(f"memory__{name}" for name in related))
        .order_by("-memory__importance", "-memory__created_at", "memory_id")
    )


def with_members(*related: str) -> Prefetch[Any]:
    """For ``prefetch_related``: each proposal's ``members`` in one query for all of them."""
    return Prefetch("proposalmemory_set", queryset=proposal_member_rows(*related), to_attr="member_rows")


class ProposalMemory(models.Model):
    """A memory a proposal names (the proposal's ``memories``), in the proposal's organization."""

    # Indexed by the (proposal, memory, organization) unique constraint.
    consolidationproposal = models.ForeignKey(
        ConsolidationProposal, on_delete=models.CASCADE, db_index=False, db_constraint=False
    )
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, db_constraint=False)
    # The proposal's (the database gives it to an insert that leaves it out: migration 0003).
    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="+", db_index=False, editable=False
    )

    class Meta:
        db_table = "lifecycle_consolidationproposal_memories"  # Django's name for it, kept
        constraints = [
            models.UniqueConstraint(
                fields=["consolidationproposal", "memory", "organization"], name="proposal_memory_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.consolidationproposal_id}: {self.memory_id}"


class DismissedPair(models.Model):
    """Two memories a curator said are not duplicates: never proposed together again."""

    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    # Stored in sorted order, so (a, b) and (b, a) are one pair.
    first = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="+", db_index=False, db_constraint=False)
    second = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="+", db_index=False, db_constraint=False)
    proposal = models.ForeignKey(
        ConsolidationProposal, null=True, blank=True, on_delete=models.SET_NULL, related_name="+", db_constraint=False
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["first", "second", "organization"], name="dismissed_pair_unique"),
            models.CheckConstraint(condition=Q(first__lt=models.F("second")), name="dismissed_pair_ordered"),
        ]

    def __str__(self) -> str:
        return f"{self.first_id} ≠ {self.second_id}"
