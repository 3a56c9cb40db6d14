"""Where each import of an export stands, so that one cut off (the process killed, the database gone
away) goes on from its last stored chunk when the same file is imported again."""

from __future__ import annotations

import uuid

from django.db import models
from django.utils import timezone

from organizations.models import Organization


class ImportStatus(models.TextChoices):
    RUNNING = "running", "running"
    COMPLETED = "completed", "completed"
    UNDONE = "undone", "undone"


class ImportRun(models.Model):
    """One import of one file (by its SHA-256) into an organization."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+", db_index=False)
    source_sha256 = models.CharField(max_length=64)
    new_ids = models.BooleanField()
    status = models.CharField(max_length=16, choices=ImportStatus.choices, default=ImportStatus.RUNNING)
    # Every record up to this line of the file is stored (a run still "running" with no process on it
    # was cut off: importing the file again goes on from here).
    line = models.PositiveIntegerField(default=0)
    started_by = models.CharField(max_length=200, blank=True)
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["organization", "source_sha256"], name="transfer_run_source_idx")]
        constraints = [
            models.CheckConstraint(condition=models.Q(status__in=ImportStatus.values), name="transfer_run_status_valid")
        ]

    def __str__(self) -> str:
        return f"import {self.pk} into {self.organization_id}: {self.status} at line {self.line}"


class ImportedId(models.Model):
    """Where a row of the file went: its id in the file, its id here, and whether the import made it
    (or found the organization's own, by its natural key)."""

    run = models.ForeignKey(
        ImportRun, on_delete=models.CASCADE, related_name="ids", db_index=False, db_constraint=False
    )
    # The run's (the database gives it to an insert that leaves it out: migration 0003).
    organization = models.ForeignKey(
        "organizations.Organization", on_delete=models.CASCADE, related_name="+", db_index=False, editable=False
    )
    model = models.CharField(max_length=80)  # app_label.ModelName
    old = models.CharField(max_length=64)
    new = models.CharField(max_length=64)
    created = models.BooleanField(default=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "model", "old", "organization"], name="transfer_imported_once")
        ]

    def __str__(self) -> str:
        return f"{self.model} {self.old} -> {self.new}"
