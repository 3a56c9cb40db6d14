"""Request and response shapes of the lifecycle endpoints: proposals, merges, runs."""

from __future__ import annotations

from rest_framework import serializers

from lifecycle.merge import MERGE_MAX, MERGE_MIN, REASON_MAX
from lifecycle.models import ProposalKind, ProposalState, RunKind, RunStatus
from rest_api.serializers.base import StrictSerializer
from rest_api.serializers.memories import MemorySerializer, ReasonSerializer

STATE_CHOICES = [*ProposalState.values, "all"]


class ProposalMemorySerializer(serializers.Serializer):
    id = serializers.UUIDField()
    title = serializers.CharField()
    status = serializers.CharField()
    memory_type = serializers.CharField()
    superseded_by = serializers.UUIDField(source="superseded_by_id", allow_null=True)


class ProposalSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    kind = serializers.ChoiceField(ProposalKind.choices)
    state = serializers.ChoiceField(ProposalState.choices)
    memory_ids = serializers.ListField(child=serializers.UUIDField())
    memories = ProposalMemorySerializer(many=True, source="members")
    survivor_id = serializers.UUIDField(allow_null=True, help_text="The memory proposed (or chosen) to stay.")
    evidence = serializers.DictField(help_text="Similarity, whether exact, and the parts that differ.")
    applied = serializers.DictField(help_text="What applying changed (versions before/after), for undo.")
    run_id = serializers.IntegerField(allow_null=True)
    created_at = serializers.DateTimeField()
    created_by = serializers.CharField()
    decided_at = serializers.DateTimeField(allow_null=True)
    decided_by = serializers.CharField()
    reason = serializers.CharField()


class ProposalPageSerializer(serializers.Serializer):
    results = ProposalSerializer(many=True)
    next_cursor = serializers.CharField(allow_null=True)


class ProposalListQuerySerializer(StrictSerializer):
    state = serializers.ChoiceField(STATE_CHOICES, required=False, default=ProposalState.OPEN)
    kind = serializers.ChoiceField(ProposalKind.choices, required=False)
    limit = serializers.IntegerField(required=False, default=50, min_value=1, max_value=200)
    cursor = serializers.CharField(required=False, max_length=500, help_text="next_cursor of the previous page.")


class ProposalApplySerializer(ReasonSerializer):
    survivor_id = serializers.UUIDField(required=False, help_text="Another member to keep than the proposed one.")
    content = serializers.CharField(required=False, max_length=100_000, help_text="The merged text of the survivor.")


class ConsolidateSerializer(StrictSerializer):
    memory_ids = serializers.ListField(
        child=serializers.UUIDField(),
        required=False,
        max_length=MERGE_MAX,
        help_text=f"{MERGE_MIN} to {MERGE_MAX} memories to merge; leave out to list duplicate candidates.",
    )
    survivor_id = serializers.UUIDField(required=False)
    content = serializers.CharField(required=False, max_length=100_000)
    dry_run = serializers.BooleanField(required=False, default=False)
    reason = serializers.CharField(required=False, allow_blank=True, max_length=REASON_MAX, default="")
    cursor = serializers.CharField(
        required=False, allow_blank=True, max_length=2_000,
        help_text="Listing only: the next_cursor of the previous page, to go on from there.",
    )  # fmt: skip


class ClusterSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(["duplicate", "contradiction"])
    memory_ids = serializers.ListField(child=serializers.UUIDField())
    similarity = serializers.FloatField()
    exact = serializers.BooleanField()
    proposal_id = serializers.UUIDField(allow_null=True)
    differences = serializers.DictField()


class ConsolidationSerializer(serializers.Serializer):
    outcome = serializers.ChoiceField(
        ["merged", "proposed", "preview", "refused", "candidates"],
        help_text="merged; proposed (a curator decides); preview (dry_run); refused; candidates (no ids given).",
    )
    message = serializers.CharField()
    proposal_id = serializers.UUIDField(allow_null=True)
    survivor = MemorySerializer(allow_null=True)
    superseded = serializers.ListField(child=serializers.UUIDField())
    result = serializers.DictField(help_text="With dry_run: what the survivor would become.")
    clusters = ClusterSerializer(many=True)
    next_cursor = serializers.CharField(
        allow_null=True, help_text="Listing only: pass it back as cursor for the next page; null on the last."
    )


class LifecycleRunSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.ChoiceField(RunKind.choices)
    status = serializers.ChoiceField(RunStatus.choices)
    full = serializers.BooleanField()
    started_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    counts = serializers.DictField()
    errors = serializers.CharField()
    seconds_used = serializers.FloatField()


class LifecycleRunPageSerializer(serializers.Serializer):
    results = LifecycleRunSerializer(many=True)
    next_cursor = serializers.CharField(allow_null=True)


class LifecycleRunQuerySerializer(StrictSerializer):
    kind = serializers.ChoiceField(RunKind.choices, required=False)
    limit = serializers.IntegerField(required=False, default=50, min_value=1, max_value=200)
    cursor = serializers.CharField(required=False, max_length=500, help_text="next_cursor of the previous page.")
