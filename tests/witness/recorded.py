"""One recording shared by a test module: a repository at W with a witness, and patches
branched off W (each test asks the gate about its own branch)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentgate.core import config
from agentgate.witness import select as gate
from agentgate.witness.select import WitnessPlan
from tests.support.git_repo import AUTHOR, EMAIL, GitRepo, run_agentgate


def recorded_repo(
    factory: pytest.TempPathFactory, files: dict[str, str],
    outside: dict[str, str] | None = None, executable: tuple[str, ...] = (),
    links: dict[str, str] | None = None,
) -> Iterator[tuple[GitRepo, str]]:
    """A repository with one commit W holding ``files`` and a witness recorded at W;
    ``outside``: files next to the repository, in ``../outside`` (a library installed
    outside the tree, which the repository's tests put on ``sys.path``)."""
    with pytest.MonkeyPatch.context() as mp:
        isolate(mp, factory)
        top = factory.mktemp("witness")
        for name, text in (outside or {}).items():
            (top / "outside" / name).parent.mkdir(parents=True, exist_ok=True)
            (top / "outside" / name).write_text(text)
        repo = GitRepo.init(top / "repo")
        repo.files(files)
        for path in executable:
            (repo.path / path).chmod(0o755)
        for path, target in (links or {}).items():  # symbolic links, committed as such
            (repo.path / path).symlink_to(target)
        sha = repo.commit("initial")
        done = run_agentgate("witness", "record", cwd=repo.path)
        assert done.returncode == 0, done.stdout + done.stderr
        yield repo, sha


def isolate(mp: pytest.MonkeyPatch, factory: pytest.TempPathFactory) -> None:
    # The suite's autouse isolation is per test; a module fixture pins the same itself.
    for name in list(os.environ):
        if name.startswith(("GIT_", "PYTEST_XDIST")) or name in ("VIRTUAL_ENV", "PYTEST_ADDOPTS"):
            mp.delenv(name)
    mp.setenv("HOME", str(factory.mktemp("home")))
    mp.setenv("GIT_CONFIG_NOSYSTEM", "1")
    mp.setenv("GIT_TEMPLATE_DIR", str(factory.mktemp("templates")))
    for role in ("AUTHOR", "COMMITTER"):
        mp.setenv(f"GIT_{role}_NAME", AUTHOR)
        mp.setenv(f"GIT_{role}_EMAIL", EMAIL)
        mp.setenv(f"GIT_{role}_DATE", "2026-01-01T00:00:00+00:00")


def patch(repo: GitRepo, base: str, name: str, files: dict[str, str],
          *, remove: tuple[str, ...] = ()) -> str:
    repo.git("checkout", "-q", "-f", "-B", name, base)
    repo.files(files)
    for path in remove:
        (repo.path / path).unlink()
    return repo.commit(name)


def plan(repo: GitRepo, base: str, *, frozen: frozenset[str] = frozenset()) -> WitnessPlan:
    notes: list[str] = []
    root: Path = repo.path
    found = gate.evaluate(root, config.load(root), base=base, head="HEAD", frozen=frozen,
                          notes=notes)
    assert found is not None, notes
    return found


def labelled(recorded: tuple[GitRepo, str], name: str, files: dict[str, str]) -> dict[str, str]:
    """The gate's label per node id for a patch ``name`` of ``files`` branched off W."""
    repo, w = recorded
    patch(repo, w, name, files)
    return {d.nodeid: d.label for d in plan(repo, w).decisions}
