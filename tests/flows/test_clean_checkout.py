"""``check`` runs the band in the checkout only when nothing there can change the run (issue 11,
item 7): git-ignored files that Python or pytest would read send it to a worktree of head.

Each attack plants an ignored file that breaks every test when it is read: the check stays
green only because the band ran in a worktree, where the file does not exist. Each
legitimate twin ignores a tool folder holding the same kind of file, and keeps the checkout.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest

from agentgate.flows import check as checkrun
from tests.support.chain_app import CHAIN_APP, commit
from tests.support.git_repo import GitRepo

FAIL_EVERY_TEST = (
    "import pytest\n\n@pytest.fixture(autouse=True)\ndef _poison():\n"
    "    raise AssertionError('an ignored conftest was read')\n"
)
BREAK_RATE = "import app.pricing.rates as r\nr.RATE = 0.5\n"  # total(10) == 15
SETTINGS_HOOK = (
    "try:\n    from app.local_settings import RATE\nexcept ImportError:\n    RATE = 0.2\n"
)


def _checked(repo: GitRepo) -> dict[str, Any]:
    data = checkrun.check(repo.path, "base", "HEAD").to_json()
    assert (data["exit_code"], data["results"]["passed"]) == (0, 2), data
    return dict(data["results"])


def _ignore(repo: GitRepo, *patterns: str, exclude: bool = False) -> None:
    """Ignore through ``.git/info/exclude`` (nothing committed) or a committed .gitignore."""
    text = "".join(p + "\n" for p in patterns)
    if exclude:
        (repo.path / ".git" / "info").mkdir(exist_ok=True)  # git init may not make it
        with (repo.path / ".git" / "info" / "exclude").open("a", encoding="utf-8") as f:
            f.write(text)
    else:
        commit(repo, {".gitignore": text}, "ignore local files")


def _pytest_in_checkout(repo: GitRepo) -> int:
    """What a run in the checkout would have seen: proof that the planted file bites."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PYTEST_"))}
    env["PYTHONPATH"] = str(repo.path)
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
    return subprocess.run(cmd, cwd=repo.path, env=env, capture_output=True).returncode


def _touched_chain(chain: GitRepo) -> GitRepo:
    commit(chain, {"app/pricing/rates.py": "RATE = 0.2  # same value\n"})
    return chain


# --- attacks: the ignored file would change the run, so the band runs in a worktree -------

def test_conftest_ignored_in_info_exclude_sends_the_band_to_a_worktree(chain: GitRepo) -> None:
    repo = _touched_chain(chain)
    repo.write("tests/conftest.py", FAIL_EVERY_TEST)
    _ignore(repo, "tests/conftest.py", exclude=True)
    assert repo.git("status", "--porcelain") == ""  # git calls the checkout clean
    assert _pytest_in_checkout(repo) == 1  # yet pytest there fails every test
    assert _checked(repo)["worktree"] is True


def test_ignored_module_a_tracked_module_imports_sends_the_band_to_a_worktree(
    chain: GitRepo,
) -> None:
    commit(chain, {"app/pricing/rates.py": SETTINGS_HOOK})
    _ignore(chain, "app/local_settings.py")
    chain.write("app/local_settings.py", "RATE = 0.5\n")
    assert _checked(chain)["worktree"] is True


def test_ignored_startup_file_in_the_source_root_sends_the_band_to_a_worktree(
    chain: GitRepo,
) -> None:
    repo = _touched_chain(chain)
    _ignore(repo, "sitecustomize.py", "*.pth")
    repo.write("sitecustomize.py", BREAK_RATE)  # Python imports it at start-up
    assert _checked(repo)["worktree"] is True


def test_ignored_pth_in_the_source_root_sends_the_band_to_a_worktree(chain: GitRepo) -> None:
    repo = _touched_chain(chain)
    _ignore(repo, "*.pth")
    # site runs a .pth only in a site folder; a source root may be one (an installed layout).
    repo.write("local.pth", "import app.pricing.rates as r; r.RATE = 0.5\n")
    assert _checked(repo)["worktree"] is True


def test_ignored_data_file_in_a_test_root_sends_the_band_to_a_worktree(chain: GitRepo) -> None:
    repo = _touched_chain(chain)
    _ignore(repo, "tests/data/")
    repo.write("tests/data/expected.json", "{}\n")  # a test may read it
    assert _checked(repo)["worktree"] is True


# --- the legitimate twins: tool folders (and files no run reads) keep the checkout ---------

@pytest.mark.parametrize(
    ("pattern", "planted"),
    [
        (".venv/", ".venv/lib/python3/site-packages/conftest.py"),
        ("__pycache__/", "app/pricing/__pycache__/rates.cpython-311.pyc"),
        ("build/", "build/lib/app/pricing/rates.py"),
        ("*.egg-info/", "app.egg-info/top_level.txt"),
        ("*.log", "run.log"),
    ],
)
def test_ignored_tool_folders_keep_the_checkout(
    chain: GitRepo, pattern: str, planted: str
) -> None:
    repo = _touched_chain(chain)
    _ignore(repo, pattern)
    repo.write(planted, FAIL_EVERY_TEST if planted.endswith(".py") else "x\n")
    results = _checked(repo)  # flat layout: sources ["."], so the .venv is inside a root
    assert results["worktree"] is False and results["tree"] == str(repo.path)


def test_ignored_file_outside_every_root_keeps_the_checkout(repo: GitRepo) -> None:
    """src layout: an ignored module under docs/ is neither in a root nor holds one."""
    repo.files({(f"src/{k}" if k.startswith("app/") else k): v for k, v in CHAIN_APP.items()})
    repo.write("pyproject.toml", "[tool.agentgate]\nsources = ['src']\n")
    repo.commit("initial")
    repo.git("tag", "base")
    commit(repo, {"src/app/pricing/rates.py": "RATE = 0.2  # same value\n"})
    _ignore(repo, "docs/_build/")
    repo.write("docs/_build/conf.py", "raise SystemExit(3)\n")
    assert _checked(repo)["worktree"] is False


def test_the_checkouts_harness_does_not_reach_a_worktree_run(chain: GitRepo) -> None:
    repo = _touched_chain(chain)
    _ignore(repo, "/pytest.ini", "/conftest.py")
    repo.write("pytest.ini", "[pytest]\n")  # makes the checkout pytest's rootdir
    repo.write("conftest.py", FAIL_EVERY_TEST)
    assert _checked(repo)["worktree"] is True
