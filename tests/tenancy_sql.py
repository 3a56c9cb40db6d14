"""Which tables belong to one organization, and whether a statement joins two organizations' rows.

The path past one database server (docs/explanation/performance.md, "Past one database server") is
Citus with the organization as the distribution column: every tenant table is distributed by its
``organization_id`` and co-located, what every organization shares is a reference table copied to
each node. A statement is then answered on one node only when every distributed table it reads is
tied to the same organization: their ``organization_id`` columns equal to each other (a co-located
join) or to the same value (a query routed to one node). ``cross_organization_join`` reads a
statement with PostgreSQL's own parser (pglast) and says which distributed tables it leaves untied.

What counts as a tie is deliberately narrow: an equality (``=``, ``IN`` or ``= ANY`` of one value)
between columns or a column and a value, in a WHERE clause or a join's ON, at the top of its AND
chain. Under NOT nothing ties; of an OR, only the one arm left once the arms reading system-scope
memories only are set aside (SYSTEM_SCOPE). Links through a reference table count
(``a.organization_id = r.organization_id AND r.organization_id = b.organization_id``). The two
branches of a UNION stack rows and do not pair them. The values are weighed per execution (the
same organization in two parameters ties them); each statement's text is parsed once.
"""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pglast
from django.apps import apps
from django.db import models
from pglast import ast
from pglast.enums import A_Expr_Kind, BoolExprType, SetOperation

PLATFORM_APPS = frozenset(
    {"memory_platform", "organizations", "memories", "knowledge", "instructions", "lifecycle", "code_index",
     "curation", "mcp_api", "rest_api", "identity", "transfer"}
)  # fmt: skip

# Shared by every organization and naming none: Citus reference tables (or left on the coordinator).
SHARED = {
    "organizations_organization": "the organizations themselves: the distribution column's table",
    "organizations_user": "a person may be a member of several organizations",
    "organizations_user_groups": "Django's groups of a user (unused by the platform's roles)",
    "organizations_user_user_permissions": "Django's permissions of a user (unused by the platform's roles)",
    "memory_platform_heartbeat": "the liveness of the background processes, one row each",
    "memory_platform_ratecount": "request counts per caller and window, when Redis does not keep them",
}

# A tenant's tables that become reference tables all the same: few rows an organization, read on
# every request, and joined to by their id alone from the distributed tables (a memory's
# repository, a request's token and membership). Copied to every node, those joins stay local.
REFERENCE = {
    "organizations_repository": "a memory's or code index's repository, joined by its id",
    "organizations_membership": "who may act in an organization, read on every request",
    "organizations_apitoken": "a request's token, read on every request",
    "identity_singlesignonmembership": "a membership given by single sign-on, read at sign-in",
    "memories_writepolicy": "one row an organization, read on every write",
    "code_index_codeindex": "a repository's code index, one row a repository",
}

ORGANIZATION_COLUMN = "organization_id"

# System-scope memories are the one thing of a tenant every organization reads (memories.selectors,
# memory_visibility_arms): on Citus they would be kept apart, in a reference table. A read of
# memories limited to them (``scope_type = 'system'``, or the arm of an OR that says so) is a read
# of that reference table.
SYSTEM_SCOPE = ("memories_memory", "scope_type", "system")


def has_organization(model: type[models.Model]) -> bool:
    return any(
        field.is_relation
        and field.related_model is not None
        and field.related_model._meta.label == "organizations.Organization"
        for field in model._meta.concrete_fields
    )


def platform_tables() -> dict[str, type[models.Model]]:
    """Every table of the platform's own apps, by name."""
    return {
        model._meta.db_table: model
        for model in apps.get_models(include_auto_created=True)
        if model._meta.app_label in PLATFORM_APPS and model._meta.managed and not model._meta.proxy
    }


def tenant_tables() -> dict[str, type[models.Model]]:
    """The tables whose every row belongs to one organization (an ``organization`` column)."""
    return {table: model for table, model in platform_tables().items() if has_organization(model)}


@functools.cache
def distributed_tables() -> frozenset[str]:
    """The tables Citus would distribute by organization: the tenant's, but the reference ones."""
    return frozenset(set(tenant_tables()) - set(REFERENCE))


@functools.cache
def _mentions_pattern() -> re.Pattern[str]:
    return re.compile(r"\b(" + "|".join(sorted(distributed_tables(), key=len, reverse=True)) + r")\b")


@dataclass(frozen=True)
class CrossJoin:
    """A statement reading distributed tables not all tied to one organization."""

    sql: str
    groups: tuple[tuple[str, ...], ...]  # the distributed tables, grouped by what ties them

    def __str__(self) -> str:
        groups = " | ".join(", ".join(group) for group in self.groups)
        return f"distributed tables not tied to one organization: {groups}\n  {self.sql}"


_PLACEHOLDER = re.compile(r"%\((\w+)\)s|%s|%%")


@functools.lru_cache(maxsize=4096)
def _numbered(sql: str) -> tuple[str, tuple[str | None, ...]]:
    """The statement with Django's placeholders (``%s``, ``%(name)s``) as PostgreSQL's ``$n``, and
    what each ``$n`` takes: the next positional value (None) or the named one."""
    taken: list[str | None] = []
    named: dict[str, int] = {}

    def replace(match: re.Match[str]) -> str:
        if match.group(0) == "%%":
            return "%"
        name = match.group(1)
        if name is None:
            taken.append(None)
            return f"${len(taken)}"
        if name not in named:
            taken.append(name)
            named[name] = len(taken)
        return f"${named[name]}"

    return _PLACEHOLDER.sub(replace, sql), tuple(taken)


def _values(taken: tuple[str | None, ...], params: Any) -> list[Any]:
    if isinstance(params, Mapping):
        return [params.get(name) if name is not None else None for name in taken]
    positional = iter(params if isinstance(params, Sequence) and not isinstance(params, str) else ())
    return [next(positional, None) if name is None else None for name in taken]


# An INSERT of values reads no table (a bulk create's RETURNING names its table a second time):
# only a SELECT in it could. Parsing one of thousands of rows cost more than running it.
_INSERT_OF_VALUES = re.compile(r'\s*INSERT\s+INTO\s+[\w."]+\s*\([^()]*\)\s*VALUES\s', re.IGNORECASE)
_SELECT = re.compile(r"\bSELECT\b", re.IGNORECASE)


def cross_organization_join(sql: str, params: Any = None) -> CrossJoin | None:
    """The distributed tables this statement reads without tying them to one organization, or
    None when it reads fewer than two or ties them all."""
    if len(_mentions_pattern().findall(sql)) < 2:
        return None
    if _INSERT_OF_VALUES.match(sql) and not _SELECT.search(sql):
        return None
    numbered, taken = _numbered(sql) if params is not None else (sql, ())
    readings = _readings(numbered)
    if isinstance(readings, str):
        return CrossJoin(sql=sql, groups=((f"unreadable: {readings}",),))
    values = _values(taken, params)
    for reading in readings:
        groups = reading.untied(values)
        if groups:
            return CrossJoin(sql=sql, groups=groups)
    return None


@functools.lru_cache(maxsize=4096)
def _readings(sql: str) -> tuple[_Reading, ...] | str:
    """Each statement of ``sql`` read once (the values are weighed per execution), or why not."""
    try:
        statements = pglast.parse_sql(sql)
    except pglast.parser.ParseError as error:
        return str(error)
    readings = []
    for raw in statements:
        reading = _Reading()
        reading.statement(raw.stmt, [])
        readings.append(reading)
    return tuple(readings)


# --- the reading --------------------------------------------------------------------------------

# What a condition equates: columns ("col", occurrence, name), constants ("val", repr), parameters
# ("param", n) and the one element of a list parameter ("elem", n), resolved per execution.
_Key = tuple[Any, ...]
# A condition as read: ("eq", key, key), ("and", [conditions]) or ("or", [conditions]).
_Condition = tuple[Any, ...]


@dataclass
class _Occurrence:
    """One table named in a statement (a distributed table read twice is two occurrences)."""

    number: int
    table: str | None  # None: a subquery, a function or a CTE
    columns: frozenset[str]
    path: tuple[tuple[str, int, int], ...]  # the subqueries and set operations' branches it is in

    def combines_with(self, other: _Occurrence) -> bool:
        """Whether the statement may put this one's rows beside the other's: always, but when
        they sit in two branches of one set operation (UNION, INTERSECT, EXCEPT), which stack
        rows rather than pair them."""
        for mine, theirs in zip(self.path, other.path, strict=False):
            if mine != theirs:
                return not (mine[0] == theirs[0] == "branch" and mine[1] == theirs[1])
        return True


def _columns(table: str) -> frozenset[str]:
    model = platform_tables().get(table)
    if model is None:
        return frozenset()
    return frozenset(field.column for field in model._meta.concrete_fields)


class _Ties:
    """A union-find over keys: what one execution's conditions equate."""

    def __init__(self, reading: _Reading, values: list[Any]) -> None:
        self.reading = reading
        self.values = values
        self.parent: dict[_Key, _Key] = {}
        self.system: set[int] = set()  # occurrences read for their system-scope memories only

    def find(self, key: _Key) -> _Key:
        self.parent.setdefault(key, key)
        while self.parent[key] != key:
            self.parent[key] = self.parent[self.parent[key]]
            key = self.parent[key]
        return key

    def resolve(self, key: _Key) -> _Key | None:
        if key[0] in ("param", "elem"):
            value = self.values[key[1] - 1] if 0 < key[1] <= len(self.values) else None
            if key[0] == "elem":
                value = value[0] if isinstance(value, list | tuple) and len(value) == 1 else None
            return ("val", repr(_plain(value))) if value is not None else None
        return key

    def _system_only(self, condition: _Condition) -> int | None:
        """The occurrence this equality limits to system-scope memories, if it does."""
        table, column, value = SYSTEM_SCOPE
        left, right = self.resolve(condition[1]), self.resolve(condition[2])
        for one, other in ((left, right), (right, left)):
            if (
                one is not None
                and one[0] == "col"
                and one[2] == column
                and other == ("val", repr(value))
                and self.reading.occurrences[one[1]].table == table
            ):
                return int(one[1])
        return None

    def _equalities(self, condition: _Condition) -> Iterator[_Condition]:
        if condition[0] == "eq":
            yield condition
        elif condition[0] == "and":
            for part in condition[1]:
                yield from self._equalities(part)

    def apply(self, condition: _Condition) -> None:
        """Tie what the condition equates. Of an OR, the arms reading system-scope memories only
        are left aside: the one arm left, if one, ties."""
        if condition[0] == "and":
            for part in condition[1]:
                self.apply(part)
        elif condition[0] == "or":
            rest = [
                arm for arm in condition[1]
                if not any(self._system_only(pair) is not None for pair in self._equalities(arm))
            ]  # fmt: skip
            if len(rest) == 1:
                self.apply(rest[0])
        else:
            system = self._system_only(condition)
            if system is not None:
                self.system.add(system)
            left, right = self.resolve(condition[1]), self.resolve(condition[2])
            if left is not None and right is not None:
                self.parent[self.find(left)] = self.find(right)


class _Reading:
    """One statement, read: the tables it names and the conditions that may tie them."""

    def __init__(self) -> None:
        self.occurrences: list[_Occurrence] = []
        self.conditions: list[_Condition] = []
        self.path: tuple[tuple[str, int, int], ...] = ()

    def untied(self, values: list[Any]) -> tuple[tuple[str, ...], ...]:
        """The distributed tables (grouped by what ties them) of the first pair of occurrences
        whose rows the statement combines without tying their organizations; () when none."""
        ties = _Ties(self, values)
        for condition in self.conditions:
            ties.apply(condition)
        distributed = [o for o in self.occurrences if o.table in distributed_tables() and o.number not in ties.system]
        root = {o.number: ties.find(("col", o.number, ORGANIZATION_COLUMN)) for o in distributed}
        for index, one in enumerate(distributed):
            for other in distributed[index + 1 :]:
                if root[one.number] != root[other.number] and one.combines_with(other):
                    groups: dict[_Key, list[str]] = {}
                    for occurrence in distributed:
                        if occurrence.combines_with(one) or occurrence.combines_with(other):
                            groups.setdefault(root[occurrence.number], []).append(str(occurrence.table))
                    return tuple(tuple(sorted(group)) for group in groups.values())
        return ()

    # scopes: a list (outermost first) of {name: occurrence}
    def _occurrence(self, table: str | None) -> _Occurrence:
        occurrence = _Occurrence(len(self.occurrences), table, _columns(table) if table else frozenset(), self.path)
        self.occurrences.append(occurrence)
        return occurrence

    def _names(self, node: Any, scope: dict[str, _Occurrence]) -> None:
        """Register what a FROM item names in ``scope``."""
        if isinstance(node, ast.RangeVar):
            occurrence = self._occurrence(node.relname)
            scope[node.alias.aliasname if node.alias else node.relname] = occurrence
        elif isinstance(node, ast.JoinExpr):
            self._names(node.larg, scope)
            self._names(node.rarg, scope)
            if node.alias:
                scope[node.alias.aliasname] = self._occurrence(None)
        elif isinstance(node, ast.RangeSubselect | ast.RangeFunction) and node.alias:
            scope[node.alias.aliasname] = self._occurrence(None)

    def _column(self, node: Any, scopes: list[dict[str, _Occurrence]]) -> _Key | None:
        """The key of a column reference or a single value, None for anything else."""
        if isinstance(node, ast.ColumnRef):
            return self._reference(node, scopes)
        if isinstance(node, ast.TypeCast):
            return self._column(node.arg, scopes)
        if isinstance(node, ast.ParamRef):
            return ("param", node.number)
        if isinstance(node, ast.A_Const) and not node.isnull:
            constant = node.val
            value = getattr(constant, "ival", getattr(constant, "sval", getattr(constant, "fval", None)))
            return ("val", repr(value)) if value is not None else None
        return None

    def _reference(self, node: ast.ColumnRef, scopes: list[dict[str, _Occurrence]]) -> _Key | None:
        """A column reference's key: qualified, the nearest scope naming its table; unqualified, the
        nearest scope with one table having such a column (or with one table at all)."""
        names = [field.sval for field in node.fields if isinstance(field, ast.String)]
        if len(names) != len(node.fields) or not names:
            return None
        column = names[-1]
        for scope in reversed(scopes):
            if len(names) >= 2:
                found = scope.get(names[-2])
                if found is not None:
                    return ("col", found.number, column)
                continue
            having = [o for o in scope.values() if column in o.columns]
            if len(having) == 1 or len(scope) == 1:
                return ("col", (having or list(scope.values()))[0].number, column)
        return None

    def _single(self, node: Any, scopes: list[dict[str, _Occurrence]]) -> _Key | None:
        """The one value a list (``IN (...)``, ``= ANY(...)``) holds, if it holds one."""
        if isinstance(node, tuple | list) and len(node) == 1:
            return self._column(node[0], scopes)
        if isinstance(node, ast.ParamRef):
            return ("elem", node.number)
        if isinstance(node, ast.TypeCast):
            return self._single(node.arg, scopes)
        if isinstance(node, ast.A_ArrayExpr) and node.elements and len(node.elements) == 1:
            return self._column(node.elements[0], scopes)
        return None

    def _condition(self, node: Any, scopes: list[dict[str, _Occurrence]]) -> _Condition | None:
        """What a condition may tie: its equalities (``=``, and ``IN`` or ``= ANY`` of one value)
        under AND and OR; nothing under NOT or anything else."""
        if isinstance(node, ast.BoolExpr) and node.boolop in (BoolExprType.AND_EXPR, BoolExprType.OR_EXPR):
            parts = [self._condition(argument, scopes) for argument in node.args]
            if node.boolop == BoolExprType.AND_EXPR:
                return ("and", [part for part in parts if part is not None])
            return ("or", [part or ("and", []) for part in parts])
        if isinstance(node, ast.A_Expr) and node.name and getattr(node.name[-1], "sval", None) == "=":
            left = self._column(node.lexpr, scopes)
            if node.kind == A_Expr_Kind.AEXPR_OP:
                right = self._column(node.rexpr, scopes)
            elif node.kind in (A_Expr_Kind.AEXPR_IN, A_Expr_Kind.AEXPR_OP_ANY):
                right = self._single(node.rexpr, scopes)
            else:
                return None
            if left is not None and right is not None:
                return ("eq", left, right)
        return None

    def _conjuncts(self, node: Any, scopes: list[dict[str, _Occurrence]]) -> None:
        condition = self._condition(node, scopes)
        if condition is not None:
            self.conditions.append(condition)

    def statement(self, node: Any, scopes: list[dict[str, _Occurrence]]) -> None:
        outer = self.path
        self.path = (*outer, ("query", id(node), 0))
        try:
            self._statement(node, scopes)
        finally:
            self.path = outer

    def _statement(self, node: Any, scopes: list[dict[str, _Occurrence]]) -> None:
        if isinstance(node, ast.SelectStmt):
            self._select(node, scopes)
        elif isinstance(node, ast.UpdateStmt | ast.DeleteStmt):
            scope: dict[str, _Occurrence] = {}
            self._names(node.relation, scope)
            for item in (node.fromClause if isinstance(node, ast.UpdateStmt) else node.usingClause) or ():
                self._names(item, scope)
            inner = [*scopes, scope]
            self._with(node.withClause, scopes)
            self._conjuncts(node.whereClause, inner)
            self._walk(node, inner, skip={"relation", "withClause"})
        elif isinstance(node, ast.InsertStmt):
            target = self._occurrence(node.relation.relname)
            self._with(node.withClause, scopes)
            query = node.selectStmt
            if isinstance(query, ast.SelectStmt) and query.targetList and node.cols:
                inner = self._select(query, scopes)
                for column, result in zip(node.cols, query.targetList, strict=False):
                    key = self._column(result.val, inner)
                    if key is not None:
                        self.conditions.append(("eq", ("col", target.number, column.name), key))
            else:
                self._walk(node, scopes, skip={"relation", "withClause"})
        else:
            self._walk(node, scopes)

    def _with(self, clause: Any, scopes: list[dict[str, _Occurrence]]) -> None:
        for cte in (clause.ctes if clause else ()) or ():
            self.statement(cte.ctequery, scopes)

    def _select(self, node: ast.SelectStmt, scopes: list[dict[str, _Occurrence]]) -> list[dict[str, _Occurrence]]:
        """Read a SELECT; the names in reach inside it."""
        self._with(node.withClause, scopes)
        if node.op != SetOperation.SETOP_NONE:
            outer = self.path
            for branch, query in enumerate((node.larg, node.rarg)):
                self.path = (*outer, ("branch", id(node), branch))
                self._select(query, scopes)
            self.path = outer
            return scopes
        scope: dict[str, _Occurrence] = {}
        for item in node.fromClause or ():
            self._names(item, scope)
        inner = [*scopes, scope]
        self._conjuncts(node.whereClause, inner)
        self._walk(node, inner, skip={"withClause", "larg", "rarg"})
        return inner

    def _walk(
        self, node: Any, scopes: list[dict[str, _Occurrence]], skip: frozenset[str] | set[str] = frozenset()
    ) -> None:
        """Visit every node under this one: subqueries are read as statements of their own (with
        the enclosing names in reach), joins' ON conditions tie what they equate."""
        for child in _children(node, skip):
            if isinstance(child, ast.SelectStmt | ast.UpdateStmt | ast.DeleteStmt | ast.InsertStmt):
                self.statement(child, scopes)
            else:
                if isinstance(child, ast.JoinExpr) and child.quals is not None:
                    self._conjuncts(child.quals, scopes)
                self._walk(child, scopes)


def _plain(value: Any) -> Any:
    """A value as the database compares it (Django's choices are enums of their values)."""
    return value.value if isinstance(value, enum.Enum) else value


def _children(node: Any, skip: Collection[str] = frozenset()) -> Iterator[Any]:
    if isinstance(node, tuple | list):
        for item in node:
            if isinstance(item, ast.Node):
                yield item
            elif isinstance(item, tuple | list):
                yield from _children(item)
        return
    if not isinstance(node, ast.Node):
        return
    for name in type(node).__slots__:
        if name in skip:
            continue
        value = getattr(node, name, None)
        if isinstance(value, ast.Node):
            yield value
        elif isinstance(value, tuple | list):
            yield from _children(value)
