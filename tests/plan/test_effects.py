"""Which top-level changes have an effect beyond the module's own names (pure)."""

from __future__ import annotations

import pytest

from agentgate.plan.effects import gained

BASE = b"from app import calc\n\nLIMIT = 3\n\n\ndef f():\n    calc.mul = None\n"


@pytest.mark.parametrize(("head", "expected"), [
    (BASE + b"\ncalc.configure(fast=True)\n", True),
    (BASE + b"\ncalc.mul = lambda a, b: 0\n", True),
    (BASE + b"\ncalc.TABLE['x'] = 1\n", True),
    (BASE + b"\ndel calc.mul\n", True),
    (BASE + b"\nif True:\n    calc.configure(fast=True)\n", True),
    (BASE + b"\ntry:\n    import fast\nexcept ImportError:\n    setattr(calc, 'x', 1)\n", True),
    (BASE.replace(b"LIMIT = 3", b"LIMIT = 4"), False),  # a constant: the module's own name
    (BASE + b"\n\ndef g():\n    calc.configure(fast=True)\n", False),  # runs when called
    (BASE + b"\nimport os\n", False),
    (BASE + b"\ncalc.configure(  # the same call, another line\n", False),  # does not parse
])
def test_a_top_level_effect_is_one_the_base_did_not_have(head: bytes, expected: bool) -> None:
    assert gained(BASE, head) is expected


def test_an_added_module_with_an_effect_has_gained_it() -> None:
    assert gained(None, b"from app import calc\n\ncalc.mul = None\n")
    assert not gained(None, b"X = 1\n")
    assert not gained(BASE + b"\ncalc.configure()\n", BASE + b"\ncalc.configure()\n")
