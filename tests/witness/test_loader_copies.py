"""A module a loader makes without a file of its own (issue 12: toolz's ``tlz``).

``alias`` installs an import hook that serves ``alias.core`` by copying ``app.core``'s names
into a new module and, for introspection, giving it ``app.core``'s ``__file__`` (as ``tlz``
does with ``toolz``). The recorder takes a module's file from its import spec, not from
``__file__``: the copy has no location, so what its import ran (the loader) belongs to the
``alias`` package its users import first, not to ``app/core.py``, whose users never touched
the loader; and ``app/core.py`` keeps its own module name, so its readers stay its readers.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentgate.witness.select import IMPACTED, SKIP
from tests.support.git_repo import GitRepo
from tests.witness.recorded import labelled, recorded_repo

LOADER = (
    "import sys\nimport types\nfrom importlib import import_module\n"
    "from importlib.machinery import ModuleSpec\n\n\n"
    "class Copies:\n"
    "    def find_spec(self, fullname, path, target=None):\n"
    "        if fullname.startswith('alias.'):\n"
    "            return ModuleSpec(fullname, self)\n"
    "        return None\n\n"
    "    def create_module(self, spec):\n"
    "        return types.ModuleType(spec.name)\n\n"
    "    def exec_module(self, module):\n"
    "        real = import_module('app.' + module.__name__.partition('.')[2])\n"
    "        for name, value in vars(real).items():\n"
    "            if not name.startswith('__'):\n"
    "                setattr(module, name, value)\n"
    "        module.__file__ = real.__file__\n\n\n"
    "sys.meta_path.append(Copies())\n"
)
CORE = "LIMIT = 3\n\n\ndef value():\n    return 1\n"
MIRROR = "import app\n\n__path__ = list(app.__path__)\n"
FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "pyproject.toml": "[tool.agentgate]\nshadow_percent = 0\n",
    "app/__init__.py": "",
    "app/core.py": CORE,
    "alias/__init__.py": "from alias import _loader  # noqa: F401\n\nNAME = 'alias'\n",
    "alias/_loader.py": LOADER,
    "tests/test_core.py": "from app.core import value\n\n\n"
    "def test_core():\n    assert value() == 1\n",
    "tests/test_limit.py": "from app.core import LIMIT\n\n\n"
    "def test_limit():\n    assert LIMIT == 3\n",
    "tests/test_alias.py": "from alias.core import value\n\n\n"
    "def test_alias():\n    assert value() == 1\n",
    # Imports the copy after test_alias did: the loader does not run again for it.
    "tests/test_alias_again.py": "import alias.core\n\n\n"
    "def test_again():\n    assert alias.core.value() == 1\n",
    # Reads the package's constant through a cached import: only the package's name ties it
    # to ``alias/__init__.py``, and the copy must not take that name (its file is the
    # package's, by the parent rule).
    "tests/test_name.py": "from alias import NAME\n\n\n"
    "def test_name():\n    assert NAME == 'alias'\n",
    # A package that borrows app's folder: ``import mirror.core`` runs app/core.py again, as
    # a module of its own named mirror.core (a real file, unlike alias.core).
    "mirror/__init__.py": MIRROR,
    "app/extra.py": "EXTRA = 1\n",
    "tests/test_mirror.py": "import mirror.core\n\n\n"
    "def test_mirror():\n    assert mirror.core.value() == 1\n",
    # Gets mirror.core, imported already, by a name no import statement spells: only its
    # read of the module ties it to mirror/__init__.py.
    "tests/test_mirror_cached.py": "import sys\n\n\n"
    "def test_cached():\n    assert sys.modules['mirror' + '.core'].value() == 1\n",
    # Module-level code getting mirror.core (imported by test_mirror.py's collection) from
    # sys.modules: only its read of the copy ties app/user.py to mirror/__init__.py.
    "app/user.py": "import sys\n\nVALUE = sys.modules['mirror' + '.core'].value()\n",
    "tests/test_user.py": "from app.user import VALUE\n\n\n"
    "def test_user():\n    assert VALUE == 1\n",
    "tests/test_extra.py": "from app.extra import EXTRA\n\n\n"
    "def test_extra():\n    assert EXTRA == 1\n",
    # Imports mirror.extra first, mirror having been imported: only that import ties it to
    # mirror/__init__.py (app/extra.py also ran as app.extra).
    "tests/test_mirror_fresh.py": "import importlib\n\n\n"
    "def test_fresh():\n    importlib.import_module('mirror' + '.extra')\n",
}
CORE_TEST = "tests/test_core.py::test_core"
LIMIT_TEST = "tests/test_limit.py::test_limit"
ALIAS = "tests/test_alias.py::test_alias"
AGAIN = "tests/test_alias_again.py::test_again"
NAME_TEST = "tests/test_name.py::test_name"
MIRROR_TEST = "tests/test_mirror.py::test_mirror"
CACHED = "tests/test_mirror_cached.py::test_cached"
FRESH = "tests/test_mirror_fresh.py::test_fresh"
EXTRA_TEST = "tests/test_extra.py::test_extra"
USER = "tests/test_user.py::test_user"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GitRepo, str]]:
    yield from recorded_repo(tmp_path_factory, FILES)


def test_a_loader_change_reruns_the_copys_users_not_the_real_modules(
    recorded: tuple[GitRepo, str],
) -> None:
    """Taking the copy for ``app/core.py`` (its ``__file__``) charged the loader to
    test_core and test_limit, which never imported ``alias``."""
    edited = LOADER.replace("module.__file__ = real.__file__",
                            "module.__file__ = real.__file__\n        module.copied = True")
    labels = labelled(recorded, "loader", {"alias/_loader.py": edited})
    assert labels[ALIAS] == labels[AGAIN] == IMPACTED  # the second importer too
    assert labels[CORE_TEST] == labels[LIMIT_TEST] == SKIP


def test_the_real_modules_readers_still_rerun(recorded: tuple[GitRepo, str]) -> None:
    """``app/core.py`` keeps its module name (the copy once overwrote it): LIMIT's reader
    reruns, and the copy's users, whose loader read every name of the module."""
    labels = labelled(recorded, "limit", {"app/core.py": CORE.replace("= 3", "= 4")})
    assert labels[LIMIT_TEST] == labels[ALIAS] == labels[AGAIN] == IMPACTED
    assert labels[CORE_TEST] == SKIP


def test_a_function_change_reruns_who_ran_it_through_either_name(
    recorded: tuple[GitRepo, str],
) -> None:
    labels = labelled(recorded, "value", {"app/core.py": CORE.replace("return 1", "return 2")})
    assert labels == {CORE_TEST: IMPACTED, ALIAS: IMPACTED, AGAIN: IMPACTED, LIMIT_TEST: SKIP,
                      NAME_TEST: SKIP, MIRROR_TEST: IMPACTED, CACHED: IMPACTED, FRESH: SKIP,
                      EXTRA_TEST: SKIP, USER: IMPACTED}


def test_the_packages_own_readers_still_rerun(recorded: tuple[GitRepo, str]) -> None:
    edited = FILES["alias/__init__.py"].replace("'alias'", "'alias!'")
    labels = labelled(recorded, "name", {"alias/__init__.py": edited})
    assert labels[NAME_TEST] == IMPACTED
    assert labels[CORE_TEST] == labels[LIMIT_TEST] == SKIP


def test_a_package_that_borrows_a_folder_reruns_its_users_not_the_folders(
    recorded: tuple[GitRepo, str],
) -> None:
    """app/core.py ran as app.core and as mirror.core. Its file's node once took whichever
    name came last, and with it mirror's package: test_core and test_limit, which never
    imported mirror, reran for every change to mirror/__init__.py. Now the copy's package
    belongs to its import and to each read of the copy: whoever got mirror.core from
    ``sys.modules`` (a test, or module-level code) or imported mirror.extra by a computed
    name reruns too."""
    labels = labelled(recorded, "mirror", {"mirror/__init__.py": MIRROR + "app.mirrored = True\n"})
    assert labels[MIRROR_TEST] == labels[CACHED] == labels[FRESH] == labels[USER] == IMPACTED
    assert labels[CORE_TEST] == labels[LIMIT_TEST] == labels[ALIAS] == labels[EXTRA_TEST] == SKIP
