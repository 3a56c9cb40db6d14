"""What every request serializer shares: strict fields, JSON types as documented, the error shape."""

from __future__ import annotations

import copy
import json
from typing import Any

from django.http import QueryDict
from rest_framework import serializers

from memories import validation


def _json_type_error(field: serializers.Field, value: Any) -> str | None:
    """What is wrong with the JSON type of ``value`` for ``field``, if anything.

    DRF's fields coerce (0 becomes "0", false becomes 0.0, "5" becomes 5); a JSON body must carry the
    type the schema documents, so a client bug is a 400 rather than a silently different value.
    """
    if value is None:
        return None  # allow_null decides
    expected: str | None = None
    if isinstance(field, serializers.BooleanField):
        expected = None if isinstance(value, bool) else "true or false"
    elif isinstance(field, serializers.IntegerField):
        expected = None if isinstance(value, int) and not isinstance(value, bool) else "an integer"
    elif isinstance(field, serializers.FloatField):
        expected = None if isinstance(value, int | float) and not isinstance(value, bool) else "a number"
    elif isinstance(field, serializers.CharField | serializers.ChoiceField | serializers.UUIDField):
        expected = None if isinstance(value, str) else "a string"
        if expected is None:
            return _length_error(field, value) or _choice_error(field, value)
    elif isinstance(field, serializers.DateTimeField):
        expected = None if isinstance(value, str) else "an ISO 8601 date-time string"
    elif isinstance(field, serializers.ListField):
        if not isinstance(value, list):
            return "must be a list"
        for item in value:
            inner = _json_type_error(field.child, item)
            if inner is not None:
                return f"items: {inner}"
    elif isinstance(field, serializers.DictField | serializers.JSONField) and validation.contains_nul(value):
        # CharFields refuse NUL already; PostgreSQL cannot store it in jsonb either, nor compare with it.
        return "must not contain NUL characters (\\u0000) in keys or values"
    return None if expected is None else f"must be {expected}, not {json.dumps(value)[:50]}"


def _choice_error(field: serializers.Field, value: str) -> str | None:
    """A value outside a choice field's choices, answered with the choices (DRF names none)."""
    if not isinstance(field, serializers.ChoiceField) or value in field.choices:
        return None
    if value == "" and field.allow_blank:
        return None
    return f"{json.dumps(value)[:50]} is not one of: {', '.join(str(choice) for choice in field.choices)}"


def _length_error(field: serializers.Field, value: str) -> str | None:
    """The documented maxLength counts the string as sent.

    DRF trims surrounding whitespace before it checks max_length, so without this a value one space
    longer than the schema allows would be accepted.
    """
    limit = getattr(field, "max_length", None)
    if isinstance(field, serializers.CharField) and limit is not None and len(value) > limit:
        return f"must be at most {limit} characters, not {len(value)}"
    return None


class StrictSerializer(serializers.Serializer):
    """Refuses fields it does not know, so a typo is an error rather than silently ignored."""

    # (Not in docstrings, which the schema shows for every request body.)
    def get_fields(self) -> dict[str, serializers.Field]:
        # DRF deep-copies the declared fields for every serializer it builds, which builds each field
        # again from its arguments: a REST write spent more CPU on that than on its three INSERTs.
        # A shallow copy is enough: validating does not change a field, and what one serializer
        # changes on its own fields (MemoryUpdateSerializer makes them optional) is set on its copies.
        return {name: copy.copy(field) for name, field in self._declared_fields.items()}

    # A JSON body must use the documented types (no "5" for 5), and a query parameter that is
    # present must have a value (`?limit=` is an error, not the default).
    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError(
                    {name: [f"unknown field; known fields: {', '.join(self.fields)}"] for name in unknown}
                )
            errors: dict[str, list[str]] = {}
            for name, field in self.fields.items():
                if name not in data:
                    continue
                if isinstance(data, QueryDict):
                    values = data.getlist(name)
                    single = field.child if isinstance(field, serializers.ListField) else field
                    if "" in values and not getattr(field, "allow_blank", False):
                        errors[name] = ["is empty; give a value or leave the parameter out"]
                    elif problems := [
                        p for v in values if (p := _length_error(single, v) or _choice_error(single, v)) is not None
                    ]:
                        errors[name] = problems[:1]
                else:
                    problem = _json_type_error(field, data[name])
                    if problem is not None:
                        errors[name] = [problem]
            if errors:
                raise serializers.ValidationError(errors)
        return super().to_internal_value(data)


# --- errors --------------------------------------------------------------------------------------


class ErrorDetailSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="Stable machine-readable code, e.g. invalid, not_found, locked.")
    message = serializers.CharField(help_text="What went wrong and what to send instead.")
    details = serializers.JSONField(allow_null=True, help_text="Per-field messages or context; null if none.")


class ErrorSerializer(serializers.Serializer):
    error = ErrorDetailSerializer()


class StrictFloatField(serializers.FloatField):
    """A number, never a JSON boolean (which DRF's FloatField would read as 0 or 1)."""

    def to_internal_value(self, data: Any) -> float:
        if isinstance(data, bool):
            self.fail("invalid")
        value: float = super().to_internal_value(data)
        return value


def min_score_field(default: float, results: str, *, note: str = "") -> serializers.FloatField:
    """A search's ``min_score``: its floor, 0 to 1, ``default`` when not given."""
    return StrictFloatField(
        required=False,
        allow_null=True,
        min_value=0,
        max_value=1,
        help_text=f"Leave out {results} scoring below this. Default {default:g} (what does not match stays out); "
        f"0 returns every candidate.{note}",
    )
