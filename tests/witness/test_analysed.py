"""The analyses ``rebind`` makes of the witness's module texts, kept between plans
(``witness.analysed``): what is read back is what was made, and a file that is not one is
made again, never trusted nor fatal."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import agentgate
from agentgate.witness import analysed, bindings
from agentgate.witness.select import IMPACTED, SKIP
from tests.support.git_repo import GitRepo
from tests.witness.recorded import labelled, recorded_repo

SOURCES = sorted(Path(agentgate.__file__).parent.rglob("*.py"))[:60]


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name)
def test_an_analysis_reads_back_as_it_was_made(source: Path) -> None:
    text = source.read_bytes()
    made = bindings.analyse(text, quiet_import=True, shadowed=frozenset({"types"}))
    assert made is not None
    kept = json.loads(json.dumps(analysed._encode(made)))
    assert analysed._decode(kept) == made


def _keeper(repo: GitRepo) -> analysed.Analysed:
    return analysed.Analysed(repo.path)


def test_a_kept_analysis_is_used_and_a_bad_one_made_again(repo: GitRepo) -> None:
    repo.files({"a.py": "x = 1\n"})
    repo.commit("a")
    text = b"import os\n\nLIMIT = 3\n\n\ndef f():\n    return os.sep * LIMIT\n"
    made: list[int] = []

    def make() -> bindings.Module | None:
        made.append(1)
        return bindings.analyse(text)

    first = _keeper(repo)
    expected = first.get(text, "o", make)
    first.save()
    again = _keeper(repo)
    assert again.get(text, "o", make) == expected and len(made) == 1
    # Other options are another analysis.
    assert again.get(text, "other", make) == expected and len(made) == 2
    # An entry that is no analysis (a type it may not make, a field too many) is made again.
    path = repo.path / ".git" / "agentgate" / analysed.FILE
    data = json.loads(path.read_text())
    for entry in data["entries"].values():
        entry[1] = {"t": "Popen", "f": {"args": ["true"]}}
    path.write_text(json.dumps(data))
    assert _keeper(repo).get(text, "o", make) == expected and len(made) == 3
    path.write_text("{not json")
    assert _keeper(repo).get(text, "o", make) == expected and len(made) == 4


FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "pyproject.toml": "[tool.agentgate]\nshadow_percent = 0\n",
    "app/__init__.py": "",
    "app/knobs.py": "SPEED = 2\nLIMIT = 3\n",
    "app/fast.py": "from app import knobs\n\n\ndef go():\n    return knobs.SPEED\n",
    "app/slow.py": "from app import knobs\n\n\ndef stop():\n    return knobs.LIMIT\n",
    "tests/test_fast.py": "from app.fast import go\n\n\ndef test_go():\n    assert go() == 2\n",
    "tests/test_slow.py": "from app.slow import stop\n\n\ndef test_stop():\n"
                          "    assert stop() == 3\n",
}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GitRepo, str]]:
    yield from recorded_repo(tmp_path_factory, FILES)


def test_plans_with_kept_analyses_decide_as_without(recorded: tuple[GitRepo, str]) -> None:
    """A module-level change judged by the names it rebinds: the same decisions from a
    cold keeper, a warm one, and one whose file was removed."""
    path = recorded[0].path / ".git" / "agentgate" / analysed.FILE
    change = {"app/knobs.py": "SPEED = 5\nLIMIT = 3\n"}
    cold = labelled(recorded, "cold", change)
    assert path.is_file()
    warm = labelled(recorded, "warm", change)
    path.unlink()
    gone = labelled(recorded, "gone", change)
    assert cold == warm == gone
    assert cold["tests/test_fast.py::test_go"] == IMPACTED
    assert cold["tests/test_slow.py::test_stop"] == SKIP
