"""A repository that is part of pytest's own tooling (issue 12: pluggy's repository, whose
``src/pluggy`` pytest imports and runs): its functions are still the repository's code.

``watch`` skips reads made by pytest's and pluggy's folders (collection, hook discovery)
and counts reads made by the repository's functions. On pluggy's own repository both are
the same folder; classing it as tooling first would drop the computed reads of the
repository's own functions, while ``rebind`` trusts the recording to have seen them. Here
the repository holds a copy of the installed pluggy, put first on ``PYTHONPATH`` so that
pytest itself runs it, with one more module whose function reads a module attribute by a
computed name.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pluggy
import pytest

from agentgate.witness.select import IMPACTED, SKIP
from tests.support.git_repo import GitRepo, run_agentgate
from tests.witness.recorded import isolate, labelled

LIMITS = "LIMIT = 3\nOTHER = 1\n"
FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "pyproject.toml": "[tool.agentgate]\nshadow_percent = 0\n",
    "src/app/__init__.py": "",
    "src/app/limits.py": LIMITS,
    "src/pluggy/_reader.py": "def read(module, name):\n    return getattr(module, name)\n",
    "tests/test_read.py": "import app.limits\nfrom pluggy import _reader\n\n\n"
                          "def test_read():\n"
                          "    assert _reader.read(app.limits, 'LIM' + 'IT') == 3\n",
    "tests/test_other.py": "import app.limits\nfrom pluggy import _reader\n\n\n"
                           "def test_other():\n"
                           "    assert _reader.read(app.limits, 'OTH' + 'ER') == 1\n",
    "tests/test_tooling.py": "import pathlib\n\nimport pluggy\n\n\n"
                             "def test_pytest_runs_the_repository_pluggy():\n"
                             "    assert pathlib.Path(pluggy.__file__).parts[-3] == 'src'\n",
}
READ = "tests/test_read.py::test_read"
OTHER = "tests/test_other.py::test_other"
TOOLING = "tests/test_tooling.py::test_pytest_runs_the_repository_pluggy"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GitRepo, str]]:
    with pytest.MonkeyPatch.context() as mp:
        isolate(mp, tmp_path_factory)
        repo = GitRepo.init(tmp_path_factory.mktemp("tooling") / "repo")
        shutil.copytree(Path(pluggy.__file__).parent, repo.path / "src" / "pluggy",
                        ignore=shutil.ignore_patterns("__pycache__"))
        repo.files(FILES)
        sha = repo.commit("initial")
        # pytest imports pluggy before reading any configuration: only the environment
        # puts the repository's copy first, at recording and at planning alike.
        mp.setenv("PYTHONPATH", str(repo.path / "src"))
        done = run_agentgate("witness", "record", cwd=repo.path)
        assert done.returncode == 0, done.stdout + done.stderr
        yield repo, sha


def test_a_computed_read_by_the_repository_pluggy_counts(
    recorded: tuple[GitRepo, str],
) -> None:
    labels = labelled(recorded, "limit",
                      {"src/app/limits.py": LIMITS.replace("LIMIT = 3", "LIMIT = 4")})
    assert labels[TOOLING] == SKIP  # it passed when recorded: pytest ran the repository's pluggy
    assert labels[READ] == IMPACTED  # LIMIT, read by src/pluggy/_reader.py at run time
    assert labels[OTHER] == SKIP  # the same function, another name
