"""A virtualenv inside the checkout (``.venv/``, ignored): what is installed there is a
library, not the repository's code. New-user trial: pytest's start-up, running from
``.venv/lib/.../site-packages``, listed ``tests/`` and the listing was charged to every
test as the repository's, so adding a test file reran the whole suite."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentgate.witness.select import IMPACTED, SKIP
from tests.support.git_repo import GitRepo
from tests.witness.recorded import labelled, recorded_repo

SITE = ".venv/lib/python3/site-packages"
FILES = {
    ".gitignore": ".venv/\n__pycache__/\n.pytest_cache/\n",
    # The installed plugin lists the test folder at start-up, with no repository code
    # under it (as pytest's own collection does).
    "pyproject.toml": "[tool.agentgate]\nshadow_percent = 0\n\n[tool.pytest.ini_options]\n"
                      f'pythonpath = ["{SITE}"]\naddopts = "-p lister"\n',
    f"{SITE}/lister.py": "import os\n\n\ndef pytest_configure(config):\n"
                         "    config.listed = sorted(os.listdir('tests'))\n",
    "app/__init__.py": "",
    "app/core.py": "def f(x):\n    return x + 1\n\n\ndef g(x):\n    return x * 2\n",
    "tests/__init__.py": "",
    "tests/test_f.py": "from app.core import f\n\n\ndef test_f():\n    assert f(1) == 2\n",
    "tests/test_g.py": "from app.core import g\n\n\ndef test_g():\n    assert g(2) == 4\n",
    # The twin: the repository's own conftest listing the folder is the tests' input.
    "other/__init__.py": "",
    "other/conftest.py": "import os\n\nimport pytest\n\n\n@pytest.fixture\n"
                         "def names():\n    return sorted(os.listdir('tests'))\n",
    "other/test_names.py": "def test_names(names):\n    assert 'test_f.py' in names\n",
}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GitRepo, str]]:
    yield from recorded_repo(tmp_path_factory, FILES)


def test_a_listing_by_an_installed_library_is_no_tests_input(
    recorded: tuple[GitRepo, str],
) -> None:
    repo, _ = recorded
    assert not repo.git("ls-files", ".venv").strip()  # ignored, as a virtualenv is
    labels = labelled(recorded, "new-test-file", {
        "tests/test_f_more.py": "from app.core import f\n\n\ndef test_more():\n"
                                "    assert f(2) == 3\n"})
    assert labels["tests/test_g.py::test_g"] == SKIP
    assert labels["tests/test_f.py::test_f"] == SKIP
    assert labels["other/test_names.py::test_names"] == IMPACTED
