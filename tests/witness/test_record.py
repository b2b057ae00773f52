"""``agentgate witness record/export/import/show`` and the store, through the real CLI."""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from agentgate.core import config
from agentgate.git import gitio, worktrees
from agentgate.witness import select as gate
from agentgate.witness.store import Store, StoreError, default_path
from tests.support.git_repo import GitRepo, run_agentgate

_IGNORE = {".gitignore": "__pycache__/\n.pytest_cache/\n"}


def _record(repo: GitRepo, *args: str) -> subprocess.CompletedProcess[str]:
    done = run_agentgate("witness", "record", "--format", "json", *args, cwd=repo.path)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def test_record_stores_a_witness_for_head(app_repo: GitRepo) -> None:
    app_repo.files(_IGNORE)
    sha = app_repo.commit("ignore caches")
    out = json.loads(_record(app_repo).stdout)
    assert out["witness"] == sha and out["tests"] == 2 and out["incomplete"] == []
    assert out["replaced"] is False
    entries = Store.for_repo(app_repo.path).entries()
    assert [e.sha for e in entries] == [sha]
    assert default_path(app_repo.path).is_relative_to(gitio.state_dir(app_repo.path))
    again = json.loads(_record(app_repo).stdout)
    assert again["replaced"] is True  # an explicit re-record replaces, and says so


def test_record_an_older_revision_in_a_worktree(app_repo: GitRepo) -> None:
    first = app_repo.sha()
    app_repo.files({"tests/test_more.py": "def test_more():\n    pass\n"})
    app_repo.commit("more tests")
    app_repo.write("dirty.txt", "uncommitted\n")
    out = json.loads(_record(app_repo, "--rev", first).stdout)
    assert out["witness"] == first and out["tests"] == 2  # the old revision's suite
    # The worktree manager's tree of that revision: cached (and pruned) like the band's and
    # attribution's, and no private or scratch folder left beside it.
    cached = worktrees.tree_in(app_repo.path, worktrees.path_for(app_repo.path, first)).resolve()
    assert list(gitio.worktrees(app_repo.path)) == [app_repo.path.resolve(), cached]
    assert worktrees.cached(app_repo.path) == [first]
    assert not [p for p in worktrees.worktrees_dir(app_repo.path).iterdir() if "-tmp-" in p.name]
    (cached / "debris.py").write_text("left by the last run\n")
    again = json.loads(_record(app_repo, "--rev", first).stdout)
    assert again["tests"] == 2 and not (cached / "debris.py").exists()  # reused, cleaned


def _pytest_only_venv(tmp_path: Path) -> Path:
    """A real virtualenv that has pytest (linked in) but neither agentgate nor coverage."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    links = tmp_path / "linked"
    links.mkdir()
    for name in ("pytest", "_pytest", "py", "pluggy", "iniconfig", "packaging", "pygments"):
        source = Path(importlib.import_module(name).__file__ or "")
        if source.name == "__init__.py":
            source = source.parent
        (links / source.name).symlink_to(source)
    # pytest reads its plugins' metadata (importlib.metadata), so the dist-infos come too.
    for dist in ("pytest", "pluggy", "iniconfig", "packaging", "pygments"):
        info = Path(str(importlib.metadata.distribution(dist)._path))  # type: ignore[attr-defined]
        if not (links / info.name).exists():
            (links / info.name).symlink_to(info)
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "linked.pth").write_text(str(links) + "\n", encoding="utf-8")
    return venv


def test_record_with_an_interpreter_that_lacks_agentgate(app_repo: GitRepo, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    venv = _pytest_only_venv(tmp_path)
    python = str(venv / "bin" / "python")
    for name in ("agentgate", "coverage"):  # the premise: the project's interpreter lacks them
        check = subprocess.run([python, "-c", f"import {name}"], capture_output=True, cwd=tmp_path)
        assert check.returncode != 0
    # A Python child of a test is followed there too: the recorder it starts comes from the
    # links the run makes inside the tree, which are not the repository's modules.
    app_repo.files({**_IGNORE, "tests/test_child.py": "import subprocess\nimport sys\n\n\n"
                    "def test_child():\n    subprocess.run([sys.executable, '-c', "
                    "'from app.pricing.tax import tax; tax(1)'], check=True)\n"})
    sha = app_repo.commit("ignore caches, a child")
    monkeypatch.setenv("VIRTUAL_ENV", str(venv))
    out = json.loads(_record(app_repo).stdout)
    assert out["witness"] == sha and out["tests"] == 3
    assert any("agentgate, coverage importable" in n for n in out["notes"])
    witness = Store.for_repo(app_repo.path).load(sha)
    assert witness is not None
    child = witness.tests["tests/test_child.py::test_child"]
    assert not child.incomplete and ("app/pricing/tax.py", "tax") in child.units


def test_incremental_record_with_an_interpreter_that_lacks_agentgate(
    app_repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The plugin loaded from the package (``-p agentgate.witness``), not the entry point,
    still deselects the carried tests: else the recording cannot say what it carried."""
    monkeypatch.setenv("VIRTUAL_ENV", str(_pytest_only_venv(tmp_path)))
    app_repo.files(_IGNORE)
    app_repo.commit("ignore caches")
    _record(app_repo)
    app_repo.files({"app/checkout/session.py": "from app.pricing.tax import tax\n\n"
                    "def total(x):\n    return x + tax(x) + 0\n"})
    sha = app_repo.commit("session")
    out = json.loads(_record(app_repo, "--incremental").stdout)
    assert out["witness"] == sha and out["tests"] == 2
    assert any("1 of its 2 tests carried" in n for n in out["notes"])


def test_export_import_between_clones(app_repo: GitRepo, tmp_path: Path) -> None:
    app_repo.files(_IGNORE)
    sha = app_repo.commit("ignore caches")
    _record(app_repo)
    exported = tmp_path / "witness.sqlite3"
    done = run_agentgate("witness", "export", str(exported), cwd=app_repo.path)
    assert done.returncode == 0, done.stderr
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(app_repo.path), str(clone)], check=True)
    done = run_agentgate("witness", "import", str(exported), cwd=clone)
    assert done.returncode == 0 and "imported 1 witness" in done.stdout, done.stderr
    assert [e.sha for e in Store.for_repo(clone).entries()] == [sha]
    twice = run_agentgate("witness", "import", str(exported), cwd=clone)
    assert "kept 1 already stored" in twice.stdout
    shown = run_agentgate("witness", "show", "--format", "json", cwd=clone)
    assert json.loads(shown.stdout)["witnesses"][0]["revision"] == sha
    repo = GitRepo(clone)
    repo.files({"app/pricing/tax.py": "RATE = 0.2\n\ndef tax(x):\n    return x * RATE * 1\n"})
    repo.commit("patch")
    plan = gate.evaluate(clone, config.load(clone), base=sha, head="HEAD")
    assert plan is not None
    assert {d.nodeid for d in plan.labelled(gate.IMPACTED)} == {
        "tests/test_tax.py::test_tax", "tests/test_session.py::test_total"
    }


def test_store_with_another_schema_is_refused_and_left_untouched(app_repo: GitRepo) -> None:
    path = default_path(app_repo.path)
    path.parent.mkdir(parents=True)
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        con.execute("INSERT INTO meta VALUES ('schema', '999')")
    before = path.read_bytes()
    with pytest.raises(StoreError, match="schema 999"):
        Store(path).entries()
    done = run_agentgate("witness", "record", cwd=app_repo.path)
    assert done.returncode == 64 and "left untouched" in done.stderr
    assert path.read_bytes() == before
    notes: list[str] = []
    sha = app_repo.sha()
    assert gate.evaluate(app_repo.path, config.load(app_repo.path), base=sha, head=sha,
                         notes=notes) is None
    assert "schema 999" in notes[-1]


def test_a_file_that_is_not_a_store_is_refused(app_repo: GitRepo, tmp_path: Path) -> None:
    junk = tmp_path / "junk.sqlite3"
    junk.write_bytes(b"not a database at all" * 100)
    done = run_agentgate("witness", "import", str(junk), cwd=app_repo.path)
    assert done.returncode == 64 and "left untouched" in done.stderr
    assert junk.read_bytes() == b"not a database at all" * 100


def test_show_a_test_lists_what_it_depends_on(app_repo: GitRepo) -> None:
    app_repo.files(_IGNORE)
    app_repo.commit("ignore caches")
    _record(app_repo)
    done = run_agentgate("witness", "show", "--test", "tests/test_session.py::test_total",
                         cwd=app_repo.path)
    assert done.returncode == 0, done.stderr
    assert "app/pricing/tax.py: <module>, tax" in done.stdout
    assert "app/checkout/session.py: <module>, total" in done.stdout
    missing = run_agentgate("witness", "show", "--test", "tests/nope.py::x", cwd=app_repo.path)
    assert missing.returncode == 64


def test_plain_pytest_with_the_flag_stores_for_a_clean_head(app_repo: GitRepo) -> None:
    app_repo.files(_IGNORE)
    sha = app_repo.commit("ignore caches")
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "agentgate.witness", "--agentgate-witness"]
    done = subprocess.run(cmd, cwd=app_repo.path, capture_output=True, text=True)
    assert f"2 tests recorded at {sha[:12]}" in done.stdout, done.stdout + done.stderr
    assert [e.sha for e in Store.for_repo(app_repo.path).entries()] == [sha]
    app_repo.write("app/pricing/tax.py", "RATE = 0.3\n\ndef tax(x):\n    return x * RATE\n")
    dirty = subprocess.run(cmd, cwd=app_repo.path, capture_output=True, text=True)
    assert "not stored: the work tree differs from HEAD" in dirty.stdout
    assert [e.sha for e in Store.for_repo(app_repo.path).entries()] == [sha]


@pytest.mark.parametrize(("conftest", "says"), [
    # A hook of the suite's own that raises: pytest's internal error, which may be the
    # recorder's (a traceback through agentgate/witness/) or the suite's.
    ("def pytest_collection_modifyitems(items):\n    raise RuntimeError('boom')\n",
     "internal error while recording"),
    # A conftest that does not import: the suite's to fix.
    ("import not_a_module_anywhere\n", "fix the suite's collection or configuration"),
], ids=["internal-error", "conftest-error"])
def test_a_recording_that_does_not_finish_says_whose_failure_it_may_be(
    repo: GitRepo, conftest: str, says: str,
) -> None:
    repo.files({**_IGNORE, "conftest.py": conftest,
                "tests/test_one.py": "def test_one():\n    assert True\n"})
    repo.commit("a suite")
    done = run_agentgate("witness", "record", cwd=repo.path)
    assert done.returncode != 0
    assert says in done.stderr, done.stderr[-2000:]
    # pytest's own account of it, the tail of its log, comes first.
    shown = "RuntimeError: boom" if "boom" in conftest else "not_a_module_anywhere"
    assert shown in done.stderr.split(says)[0], done.stderr[-2000:]


def test_a_recording_that_finishes_shows_none_of_pytests_output(repo: GitRepo) -> None:
    """New-user trial: a project's ``addopts = -v`` printed every PASSED line before the
    result; ``check`` and the hooks show none of pytest's output when it went well."""
    repo.files({**_IGNORE, "pytest.ini": "[pytest]\naddopts = -v\n",
                "tests/test_one.py": "def test_one():\n    assert True\n\n\n"
                                     "def test_two():\n    assert False\n"})
    repo.commit("a suite with a failing test")
    done = run_agentgate("witness", "record", cwd=repo.path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "PASSED" not in done.stderr and "test_one" not in done.stderr, done.stderr
