"""InstructionText moves here from mcp_api, keeping every organization's overrides.

The table mcp_api 0001 created is renamed, not copied: the rows, their ids and the constraint
stay as they are. In the migration state the model is created here and, in mcp_api 0002 (which
runs after this one), deleted there; neither touches the table. The content type follows the
model, so permissions granted on it (and the admin log) keep pointing at it.
"""

import django.db.models.deletion
import django.utils.timezone
from django.apps.registry import Apps
from django.conf import settings
from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor

OLD_TABLE = "mcp_api_instructiontext"
NEW_TABLE = "instructions_instructiontext"


def _move_content_type(apps: Apps, from_label: str, to_label: str) -> None:
    content_type = apps.get_model("contenttypes", "ContentType")
    if not content_type.objects.filter(app_label=to_label, model="instructiontext").exists():
        content_type.objects.filter(app_label=from_label, model="instructiontext").update(app_label=to_label)


def content_type_forwards(apps: Apps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    _move_content_type(apps, "mcp_api", "instructions")


def content_type_backwards(apps: Apps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    _move_content_type(apps, "instructions", "mcp_api")


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("mcp_api", "0001_instruction_texts"),
        ("organizations", "0001_tenancy_and_tokens"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    f"ALTER TABLE {OLD_TABLE} RENAME TO {NEW_TABLE}",
                    reverse_sql=f"ALTER TABLE {NEW_TABLE} RENAME TO {OLD_TABLE}",
                ),
            ],
            state_operations=[
                migrations.CreateModel(
                    name="InstructionText",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("key", models.CharField(choices=[("memory-agent-core", "Prompt: memory-agent-core"), ("memory-index-policy", "Prompt: memory-index-policy"), ("tool-usage-guidelines", "Prompt: tool-usage-guidelines"), ("mcp-overview", "Doc: docs://mcp-overview"), ("tools-guide", "Doc: docs://tools-guide"), ("memory-rules", "Doc: docs://memory-rules")], max_length=64)),
                        ("text", models.TextField()),
                        ("updated_at", models.DateTimeField(default=django.utils.timezone.now)),
                        ("organization", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="instruction_texts", to="organizations.organization")),
                        ("updated_by", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="+", to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        "constraints": [models.UniqueConstraint(fields=("organization", "key"), name="instruction_text_unique_per_org")],
                    },
                ),
            ],
        ),
        migrations.RunPython(content_type_forwards, content_type_backwards),
    ]
