"""The skip gate on a real repository with a real recording (``agentgate witness record``).

One repository and one recording serve the module: every test branches its own patch off
the recorded commit W and asks the gate about it, so the recording (a real pytest run)
happens once.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agentgate.core import config
from agentgate.witness import select as gate
from agentgate.witness.select import (
    AMBIENT_DRIFT,
    ESCALATE,
    FIXTURE_DRIFT,
    FROZEN,
    IMPACTED,
    NEW,
    SKIP,
    WitnessPlan,
)
from tests.support.git_repo import GitRepo
from tests.witness.recorded import patch as _patch
from tests.witness.recorded import plan as _plan
from tests.witness.recorded import recorded_repo

CORE = '''def _table():
    return {"a": 1}

TABLE = _table()

def lookup(k):
    return TABLE[k]

def other():
    return 2

def lazy_user():
    from app import lazy
    return lazy.compute()
'''
FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "pyproject.toml": "[tool.agentgate]\nshadow_percent = 50\n",
    "app/__init__.py": "",
    "app/core.py": CORE,
    "app/lazy.py": "def compute():\n    return 42\n",
    "tests/conftest.py": "",
    "tests/fixtures/x.json": '{"v": 1}\n',
    "tests/fixtures/y.json": '{"w": 1}\n',
    "tests/test_core.py": "from app.core import lookup, other\n\n"
    "def test_lookup():\n    assert lookup('a') == 1\n\n"
    "def test_other():\n    assert other() == 2\n",
    "tests/test_lazy.py": "def test_first():\n    from app import lazy\n"
    "    assert lazy.compute() == 42\n\n"
    "def test_lazy():\n    from app.core import lazy_user\n    assert lazy_user() == 42\n",
    "tests/test_data.py": "import json\n\n"
    "def test_reads_x():\n    with open('tests/fixtures/x.json') as f:\n"
    "        assert json.load(f)['v'] == 1\n\n"
    "def test_plain():\n    assert 1 + 1 == 2\n",
    "tests/test_io.py": "import socket, subprocess, sys\n\n"
    "def test_sub():\n    subprocess.run(['ls'], stdout=subprocess.DEVNULL, check=True)\n\n"
    "def test_sock():\n    s = socket.socket()\n    try:\n        s.connect(('127.0.0.1', 9))\n"
    "    except OSError:\n        pass\n    finally:\n        s.close()\n",
    "tests/sub/conftest.py": "import pytest\n\n@pytest.fixture\ndef sub_value():\n    return 5\n",
    "tests/sub/test_sub_dir.py": "def test_uses_sub(sub_value):\n    assert sub_value == 5\n",
}
ALL = {
    "tests/test_core.py::test_lookup", "tests/test_core.py::test_other",
    "tests/test_lazy.py::test_first", "tests/test_lazy.py::test_lazy",
    "tests/test_data.py::test_reads_x", "tests/test_data.py::test_plain",
    "tests/test_io.py::test_sub", "tests/test_io.py::test_sock",
    "tests/sub/test_sub_dir.py::test_uses_sub",
}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GitRepo, str]]:
    """A repository with one commit W and a witness recorded at W."""
    yield from recorded_repo(tmp_path_factory, FILES)


def _labels(plan: WitnessPlan) -> dict[str, str]:
    return {d.nodeid: d.label for d in plan.decisions}


def _running(plan: WitnessPlan) -> set[str]:
    return {d.nodeid for d in plan.decisions if d.runs}


def test_unrelated_patch_skips_everything_but_the_escalated(
    recorded: tuple[GitRepo, str],
) -> None:
    repo, w = recorded
    _patch(repo, w, "readme", {"README.md": "docs only\n"})
    plan = _plan(repo, w)
    labels = _labels(plan)
    assert set(labels) == ALL
    assert labels["tests/test_io.py::test_sub"] == ESCALATE
    assert labels["tests/test_io.py::test_sock"] == ESCALATE
    assert _running(plan) == {"tests/test_io.py::test_sub", "tests/test_io.py::test_sock"}
    assert plan.witness == w and not plan.full_suite


def test_data_file_reruns_its_reader_only_when_it_changes(recorded: tuple[GitRepo, str]) -> None:
    repo, w = recorded
    _patch(repo, w, "data-x", {"tests/fixtures/x.json": '{"v": 2}\n'})
    labels = _labels(_plan(repo, w))
    assert labels["tests/test_data.py::test_reads_x"] == FIXTURE_DRIFT
    assert labels["tests/test_data.py::test_plain"] == SKIP
    _patch(repo, w, "data-y", {"tests/fixtures/y.json": '{"w": 2}\n'})
    assert _labels(_plan(repo, w))["tests/test_data.py::test_reads_x"] == SKIP


def test_lazy_import_attributed_even_after_an_earlier_import(
    recorded: tuple[GitRepo, str],
) -> None:
    repo, w = recorded
    _patch(repo, w, "lazy", {"app/lazy.py": "def compute():\n    return 41 + 1\n"})
    plan = _plan(repo, w)
    impacted = {d.nodeid for d in plan.labelled(IMPACTED)}
    # test_first imported app.lazy first; test_lazy reached it lazily inside lazy_user().
    assert impacted == {"tests/test_lazy.py::test_first", "tests/test_lazy.py::test_lazy"}


def test_function_change_impacts_only_the_tests_that_ran_it(
    recorded: tuple[GitRepo, str],
) -> None:
    repo, w = recorded
    _patch(repo, w, "other", {"app/core.py": CORE.replace("return 2", "return 1 + 1")})
    plan = _plan(repo, w)
    assert {d.nodeid for d in plan.labelled(IMPACTED)} == {"tests/test_core.py::test_other"}
    assert "tests/test_core.py::test_other" in plan.selection
    assert "tests/test_core.py::test_lookup" not in plan.selection


def test_module_level_change_impacts_every_test_touching_the_file(
    recorded: tuple[GitRepo, str],
) -> None:
    """A change at module level that does more than bind names (a function run at import
    that changes state, a call with effects) impacts every test that used the module; a
    binding-only one, or a pure function run at import, is ``test_rebind``'s."""
    repo, w = recorded
    # _table() runs at import time, during whichever test imports app.core first; now it
    # also counts its calls in a global, which any test might see.
    counted = CORE.replace('def _table():\n    return {"a": 1}',
                           'CALLS = []\n\ndef _table():\n    CALLS.append(1)\n'
                           '    return {"a": 1}')
    _patch(repo, w, "table", {"app/core.py": counted})
    impacted = {d.nodeid for d in _plan(repo, w).labelled(IMPACTED)}
    assert impacted == {"tests/test_core.py::test_lookup", "tests/test_core.py::test_other",
                        "tests/test_lazy.py::test_lazy"}
    _patch(repo, w, "limit", {"app/core.py": "import logging\nlogging.basicConfig()\n" + CORE})
    impacted = {d.nodeid for d in _plan(repo, w).labelled(IMPACTED)}
    assert "tests/test_data.py::test_plain" not in impacted
    assert {"tests/test_core.py::test_lookup", "tests/test_lazy.py::test_lazy"} <= impacted


def test_a_pure_function_run_at_import_impacts_the_readers_of_what_it_computed(
    recorded: tuple[GitRepo, str],
) -> None:
    """``TABLE = _table()``: _table only computes its result, so changing it changes TABLE
    and nothing else; the tests that read TABLE run, the module's other users do not."""
    repo, w = recorded
    _patch(repo, w, "pure", {"app/core.py": CORE.replace('{"a": 1}', '{"a": 1, "b": 2}')})
    found = _plan(repo, w)
    impacted = {d.nodeid: d.detail for d in found.labelled(IMPACTED)}
    assert set(impacted) == {"tests/test_core.py::test_lookup"}
    assert "reads TABLE" in impacted["tests/test_core.py::test_lookup"]
    assert _labels(found)["tests/test_core.py::test_other"] == SKIP
    # Storing into another object (here the module's function) is more than computing.
    _patch(repo, w, "impure", {"app/core.py": CORE.replace(
        '    return {"a": 1}', '    lookup.calls = 1\n    return {"a": 1}')})
    impacted = {d.nodeid: d.detail for d in _plan(repo, w).labelled(IMPACTED)}
    assert set(impacted) == {"tests/test_core.py::test_lookup", "tests/test_core.py::test_other",
                             "tests/test_lazy.py::test_lazy"}


def test_conftest_change_reruns_the_tests_under_it(recorded: tuple[GitRepo, str]) -> None:
    repo, w = recorded
    _patch(repo, w, "subconf", {"tests/sub/conftest.py": FILES["tests/sub/conftest.py"] + "\n"})
    plan = _plan(repo, w)
    assert {d.nodeid for d in plan.labelled(FIXTURE_DRIFT)} == {
        "tests/sub/test_sub_dir.py::test_uses_sub"
    }
    assert _labels(plan)["tests/test_core.py::test_lookup"] == SKIP


SUB_CONFTEST_TWINS = {
    # legitimate: fixtures and a folder hook serve the tests under tests/sub only
    "a new fixture": (FILES["tests/sub/conftest.py"]
                      + "\n@pytest.fixture(scope='module', autouse=True)\ndef extra():\n"
                      "    return os.getcwd()\n").replace("import pytest", "import os, pytest"),
    "a folder hook": FILES["tests/sub/conftest.py"]
    + "\ndef pytest_runtest_setup(item):\n    item.stash_me = 1\n",
}
SUB_CONFTEST_ATTACKS = {
    # red-team (helper-9): loaded for the session, these reach tests outside tests/sub
    "a session hook": FILES["tests/sub/conftest.py"]
    + "\ndef pytest_collection_modifyitems(items):\n    for item in items:\n"
    "        item.obj = lambda *a, **k: None\n",
    "module-level code": FILES["tests/sub/conftest.py"]
    + "\nimport app.core\napp.core.TABLE['a'] = 2\n",
    "a repository import": "import app.core\n" + FILES["tests/sub/conftest.py"],
    "a decorator that calls": FILES["tests/sub/conftest.py"]
    + "\n@pytest.fixture(params=__import__('app.core').core.TABLE)\ndef p(request):\n"
    "    return request.param\n",
}


@pytest.mark.parametrize("what", sorted(SUB_CONFTEST_TWINS))
def test_a_conftest_that_only_serves_its_folder_reruns_its_folder(
    recorded: tuple[GitRepo, str], what: str
) -> None:
    repo, w = recorded
    _patch(repo, w, f"local-{what.replace(' ', '-')}",
           {"tests/sub/conftest.py": SUB_CONFTEST_TWINS[what]})
    plan = _plan(repo, w)
    assert {d.nodeid for d in plan.labelled(FIXTURE_DRIFT)} == {
        "tests/sub/test_sub_dir.py::test_uses_sub"}
    assert _labels(plan)["tests/test_core.py::test_lookup"] == SKIP


@pytest.mark.parametrize("what", sorted(SUB_CONFTEST_ATTACKS))
def test_a_conftest_that_runs_code_at_load_reruns_every_test(
    recorded: tuple[GitRepo, str], what: str
) -> None:
    repo, w = recorded
    _patch(repo, w, f"everywhere-{what.replace(' ', '-')}",
           {"tests/sub/conftest.py": SUB_CONFTEST_ATTACKS[what]})
    labels = _labels(_plan(repo, w))
    assert labels["tests/test_core.py::test_lookup"] == FIXTURE_DRIFT
    assert labels["tests/test_data.py::test_plain"] == FIXTURE_DRIFT


def test_setting_tz_in_conftest_runs_the_whole_suite(recorded: tuple[GitRepo, str]) -> None:
    repo, w = recorded
    _patch(repo, w, "tz", {"tests/conftest.py": "import os\nos.environ['TZ'] = 'Asia/Tokyo'\n"})
    plan = _plan(repo, w)
    assert plan.full_suite and plan.selection == () and plan.shadow == ()
    assert set(_labels(plan).values()) == {AMBIENT_DRIFT}
    assert "TZ" in plan.ambient_drift[0]


def test_shadow_sample_is_stable_per_patch_and_differs_between_patches(
    recorded: tuple[GitRepo, str],
) -> None:
    repo, w = recorded
    _patch(repo, w, "shadow-a", {"README.md": "one\n"})
    first, again = _plan(repo, w), _plan(repo, w)
    _patch(repo, w, "shadow-a2", {"README.md": "one\n"})  # same diff, another commit
    rebased = _plan(repo, w)
    others = []
    for word in ("two", "three", "four", "five"):  # one may draw the same sample by chance
        _patch(repo, w, f"shadow-{word}", {"README.md": f"{word}\n"})
        others.append(_plan(repo, w).shadow)
    assert first.shadow == again.shadow == rebased.shadow
    assert any(first.shadow != other for other in others)
    skipped = {d.nodeid for d in first.labelled(SKIP)}
    assert set(first.shadow) <= skipped and first.shadow
    assert set(first.run_args) >= set(first.shadow)


def test_frozen_tests_run_and_are_never_sampled(recorded: tuple[GitRepo, str]) -> None:
    repo, w = recorded
    _patch(repo, w, "frozen", {"README.md": "one\n"})
    sampled = _plan(repo, w).shadow
    assert sampled
    frozen = frozenset(sampled)
    plan = _plan(repo, w, frozen=frozen)
    assert not set(plan.shadow) & frozen
    assert {d.nodeid for d in plan.labelled(FROZEN)} == frozen
    assert frozen <= set(plan.selection)


def test_changes_between_the_witness_and_the_base_count(recorded: tuple[GitRepo, str]) -> None:
    repo, w = recorded
    base = _patch(repo, w, "main-moved", {"app/core.py": CORE.replace("return 2", "return 2 * 1")})
    repo.files({"README.md": "patch\n"})
    repo.commit("patch on top")
    plan = _plan(repo, base)
    assert plan.witness == w and plan.age_commits == 1
    assert _labels(plan)["tests/test_core.py::test_other"] == IMPACTED


def test_new_test_files_and_new_tests_run(recorded: tuple[GitRepo, str]) -> None:
    repo, w = recorded
    _patch(repo, w, "new", {
        "tests/test_new.py": "def test_brand_new():\n    pass\n",
        "tests/test_core.py": FILES["tests/test_core.py"] + "\ndef test_added():\n    pass\n",
    })
    plan = _plan(repo, w)
    new = {d.nodeid for d in plan.labelled(NEW)}
    assert new == {"tests/test_new.py", "tests/test_core.py::test_added"}
    assert {"tests/test_new.py", "tests/test_core.py"} <= set(plan.selection)
    assert "tests/test_core.py::test_lookup" not in plan.selection  # its file runs whole


def test_no_usable_witness_is_none(recorded: tuple[GitRepo, str], tmp_path: Path) -> None:
    fresh = GitRepo.init(tmp_path / "fresh")
    fresh.files({"app.py": "x = 1\n"})
    sha = fresh.commit("one")
    notes: list[str] = []
    assert gate.evaluate(fresh.path, config.load(fresh.path), base=sha, head=sha,
                         notes=notes) is None
    assert "no witness recorded" in notes[0]
    repo, _w = recorded
    # A witness recorded at a commit that is not an ancestor of the base is not used.
    repo.git("checkout", "-q", "-f", "--orphan", "unrelated")
    repo.files({"README.md": "elsewhere\n"})
    other = repo.commit("unrelated root")
    notes = []
    assert gate.evaluate(repo.path, config.load(repo.path), base=other, head=other,
                         notes=notes) is None
    assert "no witness recorded at an ancestor" in notes[-1]


def test_running_under_other_ambient_values_than_recorded_is_drift(
    recorded: tuple[GitRepo, str],
) -> None:
    repo, w = recorded
    pinned = FILES["pyproject.toml"] + 'tz = "Asia/Tokyo"\n'
    _patch(repo, w, "pinned-tz", {"pyproject.toml": pinned})
    plan = _plan(repo, w)
    assert plan.full_suite
    assert plan.ambient_drift == ("TZ was 'UTC' when recorded, is 'Asia/Tokyo' now",)
