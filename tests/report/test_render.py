"""The JSON rendering: the same document json.dumps gives, laid out one item per line."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, ClassVar

import pytest

from agentgate.core.model import Reason, Result, Verdict
from agentgate.report.render import to_json


@dataclass(frozen=True)
class Data:
    """A detail whose JSON is whatever the test needs to lay out."""

    kind: ClassVar[str] = "plan"
    data: dict[Any, Any]

    def to_json(self) -> dict[str, Any]:
        return self.data


def test_json_is_the_plain_document_one_item_per_line() -> None:
    result = Result(command="plan", base="b" * 40, head="h" * 40)
    result.reasons = [Reason("protected", Verdict.PROMOTE, "reaches 'app/billing'", path="x.py")]
    result.detail = Data({
        "tests": ["tests/test_a.py", "tests/test_b.py"],
        "why": {"tests/test_a.py": ("tests/test_a.py", "app/a.py"), "tests/test_b.py": ["b"]},
        "shadow": {"missed": {"z", "y"}, "ran": True},
        "empty": [],
        "none": None,
    })
    text = to_json(result)
    data = json.loads(text)
    plain = json.dumps(result.to_json(), default=lambda v: sorted(v) if isinstance(v, set) else v)
    assert data == json.loads(plain)
    assert data["shadow"]["missed"] == ["y", "z"]  # sets come out sorted
    lines = text.splitlines()
    assert lines[0] == "{" and lines[-1] == "}"
    assert '    "tests/test_b.py"' in lines  # a test per line
    assert '    "tests/test_a.py": ["tests/test_a.py", "app/a.py"],' in lines  # a chain per line
    assert '  "verdict": "promote",' in lines
    assert '  "empty": [],' in lines


def test_json_keys_are_written_as_json_writes_them() -> None:
    result = Result(command="plan")
    result.detail = Data({"counts": {None: 1, True: 2, 3: 3, "s": 4}})
    assert json.loads(to_json(result))["counts"] == {"null": 1, "true": 2, "3": 3, "s": 4}
    result.detail = Data({"counts": {(1, 2): 0}})
    with pytest.raises(TypeError):  # as json.dumps refuses it
        to_json(result)
