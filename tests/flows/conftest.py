"""Fixtures shared by the plan and check tests."""

from __future__ import annotations

import pytest

from tests.support.chain_app import CHAIN_APP
from tests.support.git_repo import GitRepo


@pytest.fixture
def chain(repo: GitRepo) -> GitRepo:
    """The chain app committed once and tagged ``base``: each test commits its change on top."""
    repo.files(CHAIN_APP)
    repo.commit("initial")
    repo.git("tag", "base")
    return repo
