"""Code that asks whether a tracer runs takes another path while recording (red-team).

``add`` dispatches on ``sys.gettrace()``: the recording (under coverage's tracer) saw only
``_traced_add`` run, so a patch breaking ``_plain_add``, the path every other run takes, was
witnessed as reaching no test and the failing test was skipped. A file whose code asks
about the tracer makes every test that ran or imported it incomplete: it runs.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentgate.witness.select import ESCALATE, SKIP
from agentgate.witness.store import Store
from tests.support.git_repo import GitRepo
from tests.witness.recorded import labelled, recorded_repo

CALC = ("import sys\n\n\ndef _traced_add(a, b):\n    return a + b\n\n\n"
        "def _plain_add(a, b):\n    return a + b\n\n\n"
        "def add(a, b):\n    impl = _traced_add if sys.gettrace() else _plain_add\n"
        "    return impl(a, b)\n")
OTHER = "def mul(a, b):\n    return a * b\n\n\ndef unused():\n    return 0\n"
FILES = {
    "app/__init__.py": "",
    "app/calc.py": CALC,
    "app/other.py": OTHER,
    "tests/test_calc.py": "from app.calc import add\n\n\ndef test_add():\n"
                          "    assert add(2, 3) == 5\n",
    "tests/test_other.py": "from app.other import mul\n\n\ndef test_mul():\n"
                           "    assert mul(2, 3) == 6\n",
}
ADD, MUL = "tests/test_calc.py::test_add", "tests/test_other.py::test_mul"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GitRepo, str]]:
    yield from recorded_repo(tmp_path_factory, FILES)


def test_a_test_running_code_that_asks_about_the_tracer_is_incomplete(
    recorded: tuple[GitRepo, str],
) -> None:
    repo, w = recorded
    witness = Store.for_repo(repo.path).load(w)
    assert witness is not None
    assert "asks whether a tracer runs" in (witness.tests[ADD].incomplete or "")
    assert witness.tests[MUL].complete  # the twin: a file that does not ask
    broken = CALC.replace("def _plain_add(a, b):\n    return a + b",
                          "def _plain_add(a, b):\n    return a - b")
    labels = labelled(recorded, "plain-path", {"app/calc.py": broken})
    assert labels[ADD] == ESCALATE and labels[MUL] == SKIP
    labels = labelled(recorded, "other", {"app/other.py": OTHER.replace("0", "1")})
    assert labels[MUL] == SKIP
