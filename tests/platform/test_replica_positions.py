"""WAL positions as the replica check compares them (memory_platform.db.replicas): numbers, not text."""

from __future__ import annotations

from memory_platform.db.replicas import _position


def test_positions_compare_as_numbers() -> None:
    assert _position("0/0") == 0
    assert _position("0/10") > _position("0/9")  # as text, "0/10" < "0/9"
    assert _position("1/0") > _position("0/FFFFFFFF")
    assert _position("16/B374D848") == (0x16 << 32) | 0xB374D848
