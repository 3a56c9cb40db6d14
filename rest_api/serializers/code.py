"""Request and response shapes of /api/v1/code/: code indexes of repositories, and code search."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework import serializers

from code_index.chunking import ChunkType
from code_index.files import PATH_MAX_CHARS
from code_index.languages import LANGUAGES
from code_index.models import RunPhase, RunStatus, Source, Trigger
from code_index.search import DEFAULT_LIMIT, GLOB_MAX_CHARS, MAX_LIMIT, MAX_QUERY_CHARS
from memories.search import SearchMode
from rest_api.serializers.base import StrictSerializer, min_score_field
from rest_api.serializers.search import BelowFloorSerializer

# --- requests ------------------------------------------------------------------------------------


class CodeIndexPathSerializer(StrictSerializer):
    path = serializers.CharField(
        max_length=PATH_MAX_CHARS,
        trim_whitespace=False,
        help_text="Absolute path of a directory on the server, under one of CODE_INDEX_ROOTS.",
    )
    watch = serializers.BooleanField(required=False, default=False, help_text="Re-scan it for changes (beat).")


class CodeManifestSerializer(StrictSerializer):
    manifest = serializers.DictField(
        child=serializers.CharField(max_length=64, trim_whitespace=False),
        help_text="Every file to index: its path relative to the repository's root → the sha256 (hex) of its bytes.",
    )


class CodeFileSerializer(StrictSerializer):
    path = serializers.CharField(max_length=PATH_MAX_CHARS, trim_whitespace=False)
    content = serializers.CharField(allow_blank=True, trim_whitespace=False, help_text="The file's text, exactly.")


class CodeFilesSerializer(StrictSerializer):
    files = serializers.ListField(
        child=CodeFileSerializer(),
        required=False,
        max_length=settings.CODE_INDEX_UPLOAD_MAX_FILES,
        help_text="Files the manifest's answer asked for (at most CODE_INDEX_UPLOAD_MAX_FILES files and bytes).",
    )
    done = serializers.BooleanField(
        required=False, default=False, help_text="No more files will come: those not sent are left out."
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not attrs.get("files") and not attrs.get("done"):
            raise serializers.ValidationError({"files": ["send files, or done: true to end the sync"]})
        return attrs


class CodeSearchSerializer(StrictSerializer):
    query = serializers.CharField(max_length=MAX_QUERY_CHARS, help_text="What the code does, or names in it.")
    repository = serializers.CharField(
        max_length=100, required=False, allow_null=True, help_text="Only this repository (slug)."
    )
    language = serializers.ChoiceField(LANGUAGES, required=False, allow_null=True)
    path = serializers.CharField(
        max_length=GLOB_MAX_CHARS,
        required=False,
        allow_null=True,
        help_text="Only file paths matching this glob: *.py, src/**/*.ts, docs/ (a directory).",
    )
    chunk_type = serializers.ChoiceField(list(ChunkType.values), required=False, allow_null=True)
    limit = serializers.IntegerField(required=False, default=DEFAULT_LIMIT, min_value=1, max_value=MAX_LIMIT)
    mode = serializers.ChoiceField([m.value for m in SearchMode], required=False, default=SearchMode.HYBRID.value)
    min_score = min_score_field(settings.CODE_SEARCH_MIN_SCORE, "chunks")


class CodeRunQuerySerializer(StrictSerializer):
    limit = serializers.IntegerField(required=False, default=20, min_value=1, max_value=200)
    cursor = serializers.CharField(required=False, max_length=500, help_text="next_cursor of the previous page.")


# --- responses -----------------------------------------------------------------------------------


class CodeRunSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    trigger = serializers.ChoiceField(Trigger.choices)
    status = serializers.ChoiceField(RunStatus.choices)
    phase = serializers.ChoiceField(RunPhase.choices)
    requested_by = serializers.CharField()
    total_files = serializers.IntegerField()
    indexed_files = serializers.IntegerField()
    skipped_files = serializers.IntegerField()
    added = serializers.IntegerField()
    modified = serializers.IntegerField()
    removed = serializers.IntegerField()
    unchanged = serializers.IntegerField()
    chunks_written = serializers.IntegerField()
    embeddings_computed = serializers.IntegerField()
    embeddings_reused = serializers.IntegerField(help_text="Chunks whose embedding an equal chunk already had.")
    resumed = serializers.IntegerField(help_text="Times the run was handed to a worker again after its worker died.")
    error = serializers.CharField(allow_null=True)
    started_at = serializers.DateTimeField()
    completed_at = serializers.DateTimeField(allow_null=True)


class CodeRunPageSerializer(serializers.Serializer):
    results = CodeRunSerializer(many=True)
    next_cursor = serializers.CharField(allow_null=True)


class CodeIndexStatusSerializer(serializers.Serializer):
    repository = serializers.CharField()
    status = serializers.ChoiceField(RunStatus.choices, help_text="Of the latest run.")
    phase = serializers.ChoiceField(RunPhase.choices, allow_null=True)
    total_files = serializers.IntegerField()
    indexed_files = serializers.IntegerField(help_text="Progress of a run under way.")
    total_chunks = serializers.IntegerField()
    started_at = serializers.DateTimeField(allow_null=True)
    completed_at = serializers.DateTimeField(allow_null=True)
    error = serializers.CharField(allow_null=True)
    files_to_send = serializers.IntegerField(help_text="Files a manifest sync still waits for.")
    source = serializers.ChoiceField(Source.choices)
    path = serializers.CharField(allow_null=True)
    watch = serializers.BooleanField()
    languages = serializers.DictField(child=serializers.IntegerField(), help_text="Indexed files per language.")
    last_completed_at = serializers.DateTimeField(allow_null=True)
    last_run = CodeRunSerializer(allow_null=True)


class BatchLimitsSerializer(serializers.Serializer):
    files = serializers.IntegerField()
    bytes = serializers.IntegerField()


class CodeIndexStartedSerializer(serializers.Serializer):
    repository = serializers.CharField()
    run_id = serializers.IntegerField()
    status = serializers.ChoiceField(RunStatus.choices)
    phase = serializers.ChoiceField(RunPhase.choices)
    path = serializers.CharField()
    watch = serializers.BooleanField()
    message = serializers.CharField()


class CodeManifestAnswerSerializer(serializers.Serializer):
    repository = serializers.CharField()
    run_id = serializers.IntegerField()
    status = serializers.ChoiceField(RunStatus.choices)
    phase = serializers.ChoiceField(RunPhase.choices)
    needed = serializers.ListField(child=serializers.CharField(), help_text="Paths to send (the first 1,000).")
    needed_count = serializers.IntegerField()
    unchanged = serializers.IntegerField()
    to_remove = serializers.IntegerField()
    ignored = serializers.ListField(child=serializers.CharField(), help_text="Left out by the default ignore list.")
    ignored_count = serializers.IntegerField()
    batch_limits = BatchLimitsSerializer()
    message = serializers.CharField()


class CodeUploadAnswerSerializer(serializers.Serializer):
    repository = serializers.CharField()
    run_id = serializers.IntegerField()
    status = serializers.ChoiceField(RunStatus.choices)
    phase = serializers.ChoiceField(RunPhase.choices)
    received = serializers.IntegerField()
    remaining = serializers.ListField(child=serializers.CharField(), help_text="Paths still to send (the first 1,000).")
    remaining_count = serializers.IntegerField()
    batch_limits = BatchLimitsSerializer()
    message = serializers.CharField()


class CodeDeletedSerializer(serializers.Serializer):
    repository = serializers.CharField()
    deleted = serializers.BooleanField()
    files = serializers.IntegerField()
    chunks = serializers.IntegerField()
    message = serializers.CharField()


class CodeHitSerializer(serializers.Serializer):
    file_path = serializers.CharField(help_text="Relative to the indexed root.")
    start_line = serializers.IntegerField()
    end_line = serializers.IntegerField()
    language = serializers.CharField()
    chunk_type = serializers.ChoiceField(list(ChunkType.values))
    name = serializers.CharField(help_text="The symbol or heading (several, comma-separated, if merged).")
    score = serializers.FloatField(
        min_value=0,
        max_value=1,
        help_text="The estimated probability that the chunk is what the query looks for (as a memory search's score).",
    )
    content = serializers.CharField(help_text="The chunk's code, trimmed to CODE_SEARCH_CONTENT_MAX_CHARS.")
    repository = serializers.CharField()
    container = serializers.CharField(help_text="The class (or headings) the chunk is in.")
    truncated = serializers.BooleanField()


class CodeSearchResultSerializer(serializers.Serializer):
    results = CodeHitSerializer(many=True)
    warning = serializers.CharField(allow_null=True, help_text="Set when only keyword search could run.")
    below_floor = BelowFloorSerializer(
        required=False,
        help_text="Only when every candidate scored below `min_score`: something weak matched, where its absence "
        "means nothing did. Search again with `min_score` 0 to see them, or with other words.",
    )
