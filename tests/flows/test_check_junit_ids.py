"""A test class imported into a second test file is collected twice, but JUnit's xunit1
``file`` names its defining file for both copies: the band counted the second copy's
failure under the first's node id, and reported fewer failures than pytest (itsdangerous,
new-user trial). Node ids come from the run's own collection."""

from __future__ import annotations

from agentgate.flows import check as checkrun
from tests.support.git_repo import GitRepo


def test_a_class_collected_in_two_files_counts_twice_under_each_id(repo: GitRepo) -> None:
    repo.files({
        "app/__init__.py": "def add(a, b):\n    return a + b\n",
        "tests/__init__.py": "",
        "tests/test_a.py": "from app import add\n\n\nclass TestAdd:\n"
                           "    def test_add(self):\n        assert add(1, 2) == 3\n",
        "tests/test_b.py": "from .test_a import TestAdd  # noqa: F401\n",
    })
    repo.commit("base")
    repo.git("tag", "base")
    repo.files({"app/__init__.py": "def add(a, b):\n    return a - b\n"})
    repo.commit("break add")
    data = checkrun.check(repo.path, "base", "HEAD").to_json()
    results = data["results"]
    assert data["exit_code"] == 1
    assert sorted(results["failed_ids"]) == [
        "tests/test_a.py::TestAdd::test_add", "tests/test_b.py::TestAdd::test_add"]
    assert results["failed"] == 2
