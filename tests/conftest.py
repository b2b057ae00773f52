from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentgate.core.config import DEFAULT_AGENT_ENV
from tests.support.git_repo import AUTHOR, EMAIL, GitRepo


@pytest.fixture(autouse=True)
def _isolated_env(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """Pin git's identity and keep the machine's config, templates, hooks and $HOME out.

    Agent variables are removed too: the suite may itself run inside a coding agent's
    shell, and a test must say explicitly when it plays an agent.
    """
    home = tmp_path_factory.mktemp("home")
    templates = tmp_path_factory.mktemp("git-templates")
    real_home = os.environ.get("HOME")
    for name in list(os.environ):
        # PYTEST_XDIST_*: under ``pytest -n`` a child pytest would take itself for a worker.
        if name.startswith(("GIT_", "PRE_COMMIT", "PYTEST_XDIST")) or name in DEFAULT_AGENT_ENV:
            monkeypatch.delenv(name, raising=False)
    for name in ("VIRTUAL_ENV", "NO_COLOR", "AGENTGATE_DEBUG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    # Under pre-commit the live counts go to /dev/tty: never to the terminal running the suite
    # (tests/flows/test_progress.py turns them on under a pseudo-terminal of its own).
    monkeypatch.setenv("AGENTGATE_PROGRESS", "0")
    monkeypatch.setenv("GIT_TEMPLATE_DIR", str(templates))
    monkeypatch.setenv("GIT_AUTHOR_NAME", AUTHOR)
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", EMAIL)
    monkeypatch.setenv("GIT_COMMITTER_NAME", AUTHOR)
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", EMAIL)
    monkeypatch.setenv("GIT_AUTHOR_DATE", "2026-01-01T00:00:00+00:00")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2026-01-01T00:00:00+00:00")
    monkeypatch.setenv("PRE_COMMIT_HOME", str(_pre_commit_home(tmp_path_factory)))
    yield
    # Tripwire: nothing may write into the real home during a test.
    if real_home:
        assert not (Path(real_home) / ".cache" / "agentgate").exists(), "wrote to real $HOME"


_PRE_COMMIT_HOME: list[Path] = []


def _pre_commit_home(factory: pytest.TempPathFactory) -> Path:
    """One pre-commit cache per session: its hook environment is built once, not per test."""
    if not _PRE_COMMIT_HOME:
        _PRE_COMMIT_HOME.append(factory.mktemp("pre-commit-home"))
    return _PRE_COMMIT_HOME[0]


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    """An empty repository on branch ``main`` with no commits."""
    return GitRepo.init(tmp_path / "repo")


@pytest.fixture
def app_repo(repo: GitRepo) -> GitRepo:
    """A small flat-layout app with one commit: pricing/tax.py imported by checkout/session.py."""
    repo.files(
        {
            "app/__init__.py": "",
            "app/pricing/__init__.py": "",
            "app/pricing/tax.py": "RATE = 0.2\n\ndef tax(x):\n    return x * RATE\n",
            "app/checkout/__init__.py": "",
            "app/checkout/session.py": "from app.pricing.tax import tax\n\n"
            "def total(x):\n    return x + tax(x)\n",
            "tests/test_tax.py": "from app.pricing.tax import tax\n\n"
            "def test_tax():\n    assert tax(10) == 2\n",
            "tests/test_session.py": "from app.checkout.session import total\n\n"
            "def test_total():\n    assert total(10) == 12\n",
            "README.md": "demo app\n",
        }
    )
    repo.commit("initial")
    return repo
