"""A real ``git push`` from a terminal, with the plain ``hooks/pre-push``: the hook shows the
band's live counts there while it runs, then its report (issue 13). Under pre-commit the
counts go to /dev/tty instead (tests/flows/test_progress.py)."""

from __future__ import annotations

import pytest

from tests.support.e2e_project import CODE, FILES
from tests.support.git_repo import GitRepo
from tests.support.terminal import on_a_terminal, progress_env

pytestmark = pytest.mark.e2e
DRIVERS = ("hooks",)


def test_a_push_from_a_terminal_shows_the_bands_progress(
    project: GitRepo, remote: GitRepo, env: dict[str, str]
) -> None:
    project.write(CODE, FILES[CODE].replace("RATE = 0.2", "RATE = 0.3"))
    project.commit("tax: a new rate")
    code, screen, _ = on_a_terminal(["git", "push", "origin", "main"], project.path,
                                    progress_env(env), terminal_stdio=True)
    assert code != 0, screen
    assert b"running band: 1/1 tests, 1 failed" in screen, screen
    assert b"FAILED tests/test_tax.py::test_tax" in screen
