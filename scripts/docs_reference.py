"""The documentation's reference pages, written from the code: the configuration (every environment
variable the code reads, with memory_platform.configuration's meaning), the MCP tools, resources and
prompts (from the live registry), the REST endpoints (from the OpenAPI schema) and the workflow.

    .venv/bin/python scripts/docs_reference.py           # write docs/reference/*.md
    .venv/bin/python scripts/docs_reference.py --check   # exit 1 naming the pages that differ

``make docs`` runs it before building the site.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import sys
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_platform.settings")

import django  # noqa: E402 - after the path and settings module are set

django.setup()

from memory_platform.configuration import GROUPS, VARIABLES  # noqa: E402

GENERATED = "<!-- Written by scripts/docs_reference.py from the code; change the code, not this page. -->"

# The platform's own code: where configuration is read (tests, benchmarks and scripts set theirs).
APPS = (
    "code_index", "curation", "identity", "instructions", "knowledge", "lifecycle", "mcp_api", "memories",
    "memory_platform", "organizations", "rest_api", "screening",
)  # fmt: skip
_READERS = {"env_str", "env_bool", "env_int", "env_float", "env_list", "env_choice"}


@dataclass(frozen=True)
class Read:
    """One place the code reads an environment variable."""

    name: str
    default: str | None  # as the reference prints it; None where it is not a literal
    where: str


def environment_reads(base: Path | None = None) -> list[Read]:
    """Every read of an environment variable by name in the apps' code (not their migrations)."""
    base = base or ROOT
    reads = []
    for app in APPS:
        for path in sorted((base / app).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            tree = ast.parse(path.read_text(), filename=str(path))
            reads += [Read(name, default, str(path.relative_to(base))) for name, default in _reads_in(tree)]
    return reads


def _reads_in(tree: ast.AST) -> Iterator[tuple[str, str | None]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args and _is_text(node.args[0]):
            name = node.args[0].value  # type: ignore[attr-defined]
            function = node.func
            if isinstance(function, ast.Name) and function.id in _READERS:
                yield name, _literal(node.args[1]) if len(node.args) > 1 else _NO_DEFAULT.get(function.id)
            elif _is_environ_get(function) or (isinstance(function, ast.Attribute) and function.attr == "getenv"):
                yield name, _literal(node.args[1]) if len(node.args) > 1 else None
        elif (
            isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load)
            and _is_environ(node.value) and _is_text(node.slice)
        ):  # fmt: skip
            yield node.slice.value, "required"  # type: ignore[attr-defined]


_NO_DEFAULT = {"env_str": "empty", "env_bool": "false"}


def _is_text(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _is_environ(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "environ"


def _is_environ_get(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "get" and _is_environ(node.value)


def _literal(node: ast.AST) -> str | None:
    try:
        value = ast.literal_eval(node)
    except ValueError:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(map(str, value)) or "empty"
    if value == "":
        return "empty"
    return str(value)


def configuration_page() -> str:
    """docs/reference/configuration.md: one table per group, every variable with its default."""
    reads: dict[str, list[Read]] = defaultdict(list)
    for read in environment_reads():
        reads[read.name].append(read)
    rows: dict[str, list[str]] = defaultdict(list)
    for name, variable in sorted(VARIABLES.items()):
        default = variable.default or _one_default(name, reads.get(name, []))
        rows[variable.group].append(f"| `{name}` | {_code(default)} | {variable.meaning} |")
    lines = [
        GENERATED, "", "# Configuration", "",
        "Everything is set through environment variables; none is needed to run on one machine. "
        "The guides say when to change which.", "",
    ]  # fmt: skip
    for group in GROUPS:
        lines += [f"## {group}", "", "| variable | default | meaning |", "|---|---|---|", *rows[group], ""]
    return "\n".join(lines)


def _one_default(name: str, reads: list[Read]) -> str:
    defaults = {read.default for read in reads if read.default is not None}
    if len(defaults) != 1:
        places = ", ".join(sorted(read.where for read in reads)) or "nowhere"
        raise ValueError(
            f"{name}: read with defaults {sorted(defaults)} in {places}; give it one literal default, "
            "or its default text in memory_platform/configuration.py"
        )
    return defaults.pop()


def _code(default: str) -> str:
    if default in ("empty", "unset", "required") or " " in default:
        return f"*{default}*"
    return f"`{default}`"


def mcp_page() -> str:
    """docs/reference/mcp.md: every tool with its arguments, every resource and prompt."""
    from mcp_api.registry import offered

    registry = offered()
    tools = list(registry.tools.values())
    resources = [record for record in registry.resources if "{" not in record.uri]
    templates = [record for record in registry.resources if "{" in record.uri]
    prompts = registry.prompts
    lines = [
        GENERATED, "", "# MCP tools, resources and prompts", "",
        "What the MCP server offers an agent, over Streamable HTTP (`/mcp`) and stdio alike. "
        "Arguments a tool does not list are refused.", "", "## Tools", "",
    ]  # fmt: skip
    for tool in sorted(tools, key=lambda t: t.name):
        lines += [f"### `{tool.name}`", "", (tool.description or "").strip(), ""]
        schema = tool.input_schema
        required = set(schema.get("required", []))
        properties = schema.get("properties", {})
        if properties:
            lines += ["| argument | type | required | description |", "|---|---|---|---|"]
            for name, spec in properties.items():
                lines.append(
                    f"| `{name}` | {_type_of(spec)} | {'yes' if name in required else 'no'} "
                    f"| {_cell(spec.get('description', ''))} |"
                )
            lines.append("")
    lines += ["## Resources", "", "| URI | name | description |", "|---|---|---|"]
    for resource in sorted(resources, key=lambda r: str(r.uri)):
        lines.append(f"| `{resource.uri}` | {resource.name} | {_cell(resource.description or '')} |")
    for template in sorted(templates, key=lambda t: t.uri):
        lines.append(f"| `{template.uri}` | {template.name} | {_cell(template.description or '')} |")
    lines += ["", "## Prompts", "", "| name | description |", "|---|---|"]
    for prompt in sorted(prompts, key=lambda p: p.name):
        lines.append(f"| `{prompt.name}` | {_cell(prompt.description or '')} |")
    return "\n".join(lines) + "\n"


def _type_of(spec: dict[str, Any]) -> str:
    if "anyOf" in spec:
        kinds = [_type_of(option) for option in spec["anyOf"] if option.get("type") != "null"]
        return " or ".join(kinds) or "null"
    kind = spec.get("type", "any")
    if kind == "array" and "items" in spec:
        return f"array of {_type_of(spec['items'])}"
    if "enum" in spec:
        return " \\| ".join(f"`{json.dumps(value)}`" for value in spec["enum"])
    return str(kind)


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def rest_page() -> str:
    """docs/reference/rest.md: every endpoint of the committed OpenAPI schema, by tag."""
    schema = yaml.safe_load((ROOT / "docs" / "openapi.yaml").read_text())
    by_tag: dict[str, list[str]] = defaultdict(list)
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            if not isinstance(operation, dict):
                continue
            tag = (operation.get("tags") or ["other"])[0]
            summary = _cell(operation.get("summary") or operation.get("description", "").split("\n")[0])
            by_tag[tag].append(f"| `{method.upper()}` | `{path}` | {summary} |")
    lines = [
        GENERATED, "", "# REST API", "",
        f"{schema['info']['title']} {schema['info']['version']}. The full schema, with every field, is "
        "[openapi.yaml](../openapi.yaml) (served live at `/api/schema/`, browsable at `/api/docs/`).", "",
    ]  # fmt: skip
    for tag in sorted(by_tag):
        lines += [f"## {tag}", "", "| method | path | what |", "|---|---|---|", *by_tag[tag], ""]
    return "\n".join(lines)


def workflow_page() -> str:
    """docs/reference/workflow.md: the decisions curators make, from memories.workflow."""
    from memories import workflow

    return "\n".join([
        GENERATED, "", "# Workflow", "",
        "Every decision on a memory, which statuses it applies to, what it makes of them and who may take it. "
        "The services check this table, the admin's buttons follow it; a decision that does not apply is "
        "refused, saying what to do instead.", "", workflow.table_markdown(), "",
    ])  # fmt: skip


def benchmarks_page() -> str:
    """docs/performance.md: every benchmark under bench/ with what its docstring says (and how to
    run it), then every dated result kept under bench/results/."""
    lines = [
        GENERATED, "", "# Benchmarks", "",
        "Speed, memory and quality are measured by the benchmarks under `bench/`, never by timed assertions in "
        "tests. What the numbers mean, and what made them so, is in [Performance](explanation/performance.md).",
        "",
    ]  # fmt: skip
    for path in sorted((ROOT / "bench").glob("*.py")):
        docstring = ast.get_docstring(ast.parse(path.read_text()))
        if path.name.startswith("_") or not docstring:
            continue
        lines += [f"## `bench/{path.name}`", "", docstring.strip(), ""]
    lines += [
        "## Results", "",
        "Each run's `--json` file, one folder per day; `recorded` says which commit it measured, with what command.",
        "", "| day | file | benchmark | commit | note |", "|---|---|---|---|---|",
    ]  # fmt: skip
    for path in sorted((ROOT / "bench" / "results").glob("*/*.json"), reverse=True):
        data = json.loads(path.read_text())
        recorded = data.get("recorded") or {}
        commit = (recorded.get("commit") or "")[:10] or "*not recorded*"
        if recorded.get("uncommitted_changes"):
            commit += " (uncommitted changes)"
        note = _cell(str(data.get("note", "")))[:160]
        benchmark = data.get("benchmark") or data.get("bench") or ""
        lines.append(f"| {path.parent.name} | `{path.name}` | {benchmark} | {commit} | {note} |")
    return "\n".join(lines) + "\n"


PAGES: dict[str, Callable[[], str]] = {
    "performance.md": benchmarks_page,
    "reference/configuration.md": configuration_page,
    "reference/mcp.md": mcp_page,
    "reference/rest.md": rest_page,
    "reference/workflow.md": workflow_page,
}


def docs_dir() -> Path:
    return ROOT / "docs"


def stale_pages() -> list[str]:
    """The reference pages whose committed text differs from what the code gives now."""
    return [page for page, build in PAGES.items() if _read(docs_dir() / page) != build()]


def write_pages() -> list[str]:
    """Write every reference page; returns those that changed."""
    changed = []
    for page, build in PAGES.items():
        text, path = build(), docs_dir() / page
        if _read(path) != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            changed.append(page)
    return changed


def _read(path: Path) -> str | None:
    return path.read_text() if path.exists() else None


def undocumented_variables() -> tuple[list[str], list[str]]:
    """Variables the code reads that memory_platform/configuration.py does not explain, and ones it
    explains that no code reads."""
    read = {r.name for r in environment_reads()}
    return sorted(read - set(VARIABLES)), sorted(set(VARIABLES) - read)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="Write nothing; exit 1 if a page differs.")
    args = parser.parse_args()
    missing, dead = undocumented_variables()
    if missing or dead:
        for name in missing:
            print(f"{name} is read by the code but not explained in memory_platform/configuration.py")
        for name in dead:
            print(f"{name} is explained in memory_platform/configuration.py but no code reads it")
        return 1
    if args.check:
        stale = stale_pages()
        for page in stale:
            print(f"docs/{page} differs from the code: run scripts/docs_reference.py")
        return 1 if stale else 0
    for page in write_pages():
        print(f"wrote docs/{page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
