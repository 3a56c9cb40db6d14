"""InstructionText now lives in the instructions app: only the migration state forgets it here.

The table itself was renamed, with its rows, by instructions 0001, which runs before this.
"""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("mcp_api", "0001_instruction_texts"),
        ("instructions", "0001_instruction_texts_from_mcp_api"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="InstructionText")],
            database_operations=[],
        ),
    ]
