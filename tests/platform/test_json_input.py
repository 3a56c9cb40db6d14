"""Every interface reads JSON through one guard: bounded depth, valid Unicode, a clear refusal."""

from __future__ import annotations

import json

import pytest

from memory_platform.json_input import JsonInputError, loads


def _nested(depth: int, leaf: str = "1") -> str:
    return "[" * depth + leaf + "]" * depth


def test_ordinary_json_reads_as_json() -> None:
    body = json.dumps({"title": "Ruff 😀", "tags": ["a", "b"], "metadata": {"team": {"name": "ops"}}})

    assert loads(body) == {"title": "Ruff 😀", "tags": ["a", "b"], "metadata": {"team": {"name": "ops"}}}
    assert loads(b'"\\ud83d\\ude00"') == "😀"  # a surrogate pair, as JSON spells characters beyond U+FFFF


@pytest.mark.parametrize("depth", [33, 1_000, 100_000])
def test_deep_nesting_is_refused_with_the_limit(depth: int) -> None:
    with pytest.raises(JsonInputError, match="nested more than 32 levels"):
        loads(_nested(depth))


def test_nesting_up_to_the_limit_is_read() -> None:
    assert loads(_nested(32)) is not None


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ('{"id": "\\ud800"}', "at id"),
        ('{"params": {"arguments": {"query": "x\\udfff"}}}', "at params.arguments.query"),
        ('[["\\ud800"]]', "at 0.0"),
    ],
)
def test_a_lone_surrogate_is_refused_saying_where(body: str, where: str) -> None:
    with pytest.raises(JsonInputError) as refused:
        loads(body)

    assert where in refused.value.message and "not valid Unicode" in refused.value.message
    refused.value.message.encode("utf-8")  # the message itself is printable anywhere


def test_a_lone_surrogate_in_a_key_is_refused() -> None:
    with pytest.raises(JsonInputError, match="a key in metadata is not valid Unicode"):
        loads('{"metadata": {"\\ud800": 1}}')


@pytest.mark.parametrize("body", [b"{not json", b"\xff\xfe\x00", b""])
def test_what_is_not_json_is_refused(body: bytes) -> None:
    with pytest.raises(JsonInputError, match="not"):
        loads(body)
