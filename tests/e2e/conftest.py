"""Fixtures of the end-to-end hook tests: a scenario asks for ``driver`` and runs once per
driver (plain ``hooks/``, the pre-commit framework). A module of scenarios that only one
driver has names it: ``DRIVERS = ("hooks",)``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.e2e_project import set_up_remote
from tests.support.git_repo import GitRepo
from tests.support.hook_drivers import Driver, PlainHooks, PreCommitFramework, snapshot_checkout


@pytest.fixture(scope="session")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """pre-commit's hook repository, built once: its virtualenv is then built once too
    (PRE_COMMIT_HOME is shared by tests/conftest.py)."""
    return snapshot_checkout(tmp_path_factory.mktemp("hook-repo"))


ALL_DRIVERS = ("hooks", "pre-commit")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "driver" in metafunc.fixturenames:
        names = getattr(metafunc.module, "DRIVERS", ALL_DRIVERS)
        metafunc.parametrize("driver", names, indirect=True)


@pytest.fixture
def driver(request: pytest.FixtureRequest, tmp_path: Path) -> Driver:
    if request.param == "hooks":
        return PlainHooks(tmp_path)
    return PreCommitFramework(request.getfixturevalue("hook_repo"))


@pytest.fixture
def env(driver: Driver) -> dict[str, str]:
    return driver.env()


@pytest.fixture
def project(tmp_path: Path, driver: Driver) -> GitRepo:
    return driver.project(tmp_path / "shop repo")


@pytest.fixture
def remote(project: GitRepo, env: dict[str, str]) -> GitRepo:
    return set_up_remote(project, env)
