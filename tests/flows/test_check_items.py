"""Tests a conftest collects from files that are not Python run in the band.

Red-team round 6: the base's root conftest collected JSON cases (pytest's own "YAML test"
example; Sybil, pytest-yaml and nbval work the same way) that named a function of the code
and its expected results. They were no test *file* of the import graph, so a change to that
function never selected them: the agent broke ``mul``, the Python tests did not cover it, and
the band passed. What such an item runs is in its data, so it may import anything: every
change that reaches code runs them, in a run of their own (``band.ITEMS``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentgate.core.config import Config
from agentgate.core.model import Change
from agentgate.plan.planner import PlanInput, plan
from agentgate.run import band, outcomes
from agentgate.run.band import BandSpec
from tests.plan.test_planner import graph
from tests.support.git_repo import GitRepo, run_agentgate

JSON_CONFTEST = '''import importlib
import json

import pytest


def pytest_collect_file(parent, file_path):
    if file_path.suffix == ".json" and file_path.name.startswith("test"):
        return JsonFile.from_parent(parent, path=file_path)


class JsonFile(pytest.File):
    def collect(self):
        for name, spec in json.loads(self.path.read_text()).items():
            yield JsonItem.from_parent(self, name=name, spec=spec)


class JsonItem(pytest.Item):
    def __init__(self, *, spec, **kwargs):
        super().__init__(**kwargs)
        self.spec = spec

    def runtest(self):
        func = getattr(importlib.import_module(self.spec["module"]), self.spec["func"])
        assert func(*self.spec["args"]) == self.spec["want"]
'''
# Sybil's way: the hook is bound by assignment, and the conftest imports nothing of the code.
MD_CONFTEST = '''import doctest

import pytest


class MdFile(pytest.File):
    def collect(self):
        text = self.path.read_text()
        test = doctest.DocTestParser().get_doctest(text, {}, self.path.name, str(self.path), 0)
        yield MdItem.from_parent(self, name="examples", dtest=test)


class MdItem(pytest.Item):
    def __init__(self, *, dtest, **kwargs):
        super().__init__(**kwargs)
        self.dtest = dtest

    def runtest(self):
        runner = doctest.DocTestRunner()
        runner.run(self.dtest)
        assert runner.failures == 0, "doc example failed"


def _collect(parent, file_path):
    if file_path.suffix == ".md":
        return MdFile.from_parent(parent, path=file_path)


pytest_collect_file = _collect
'''
CALC = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"
FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["tests", "docs"]\n',
    "app/__init__.py": "",
    "app/calc.py": CALC,
    "app/other.py": "def shout(s):\n    return s.upper()\n",
    "tests/__init__.py": "",
    # The Python tests cover add only, and another module.
    "tests/test_calc.py": "from app.calc import add\n\n\ndef test_add():\n"
                          "    assert add(2, 3) == 5\n",
    "tests/test_other.py": "from app.other import shout\n\n\ndef test_shout():\n"
                           "    assert shout('a') == 'A'\n",
}
JSON_CASES = {"tests/conftest.py": JSON_CONFTEST, "tests/test_table.json": json.dumps(
    {"mul_small": {"module": "app.calc", "func": "mul", "args": [2, 3], "want": 6},
     "mul_zero": {"module": "app.calc", "func": "mul", "args": [0, 9], "want": 0}})}
MD_CASES = {"docs/conftest.py": MD_CONFTEST,
            "docs/usage.md": "# Usage\n\n```python\n>>> from app.calc import mul\n"
                             ">>> mul(2, 3)\n6\n\n```\n"}
BROKEN = CALC.replace("return a * b", "return a * b + (1 if a > 1 else 0)")
HARMLESS = CALC + "\n\ndef sub(a, b):\n    return a - b\n"


def _check(repo: GitRepo, base: str) -> tuple[int, dict[str, object]]:
    done = run_agentgate("check", "--base", base, "--format", "json", cwd=repo.path)
    return done.returncode, json.loads(done.stdout)


def _results(data: dict[str, object]) -> dict[str, object]:
    results = data["results"]
    assert isinstance(results, dict)
    return results


@pytest.mark.parametrize(("cases", "failing"), [
    (JSON_CASES, ["tests/test_table.json::mul_small"]),
    (MD_CASES, ["docs/usage.md::examples"]),
], ids=["json-cases-computed-import", "markdown-examples-by-assignment"])
def test_a_change_the_collected_items_catch_fails_the_band(
    repo: GitRepo, cases: dict[str, str], failing: list[str],
) -> None:
    repo.files({**FILES, **cases})
    base = repo.commit("initial")
    repo.write("app/calc.py", BROKEN)
    repo.commit("simplify mul\n\nCo-authored-by: Claude <noreply@anthropic.com>")
    code, data = _check(repo, base)
    assert code == 1, data["reasons"]
    assert _results(data)["failed_ids"] == failing


def test_the_items_pass_beside_a_harmless_change_and_no_test_file_runs_twice(
    repo: GitRepo,
) -> None:
    repo.files({**FILES, **JSON_CASES, **MD_CASES})
    base = repo.commit("initial")
    repo.write("app/calc.py", HARMLESS)
    repo.commit("add sub")
    code, data = _check(repo, base)
    assert code == 0, data["reasons"]
    # The three items, and the two test files under the JSON conftest, whose computed import
    # may reach the change: each once.
    assert (_results(data)["passed"], _results(data)["failed"]) == (5, 0)


def test_a_change_to_no_code_runs_no_item(repo: GitRepo) -> None:
    repo.files({**FILES, **JSON_CASES})
    base = repo.commit("initial")
    repo.write("README.md", "# calc\n")
    repo.commit("readme")
    code, data = _check(repo, base)
    assert code == 0, data["reasons"]
    assert "no test impacted: nothing to run" in data["notes"], data["notes"]


def test_the_planner_walks_each_collectors_folder_once() -> None:
    def dirs(collectors: set[str], config: Config) -> tuple[str, ...]:
        inp = PlanInput(config=config, changes=(Change("M", "app/util.py"),), graph=graph(),
                        collectors=frozenset(collectors))
        return plan(inp).item_dirs

    config = Config(root=Path("."), tests=("tests", "docs"), sources=(".",))
    assert dirs({"tests/conftest.py", "tests/unit/conftest.py"}, config) == ("tests",)
    assert dirs({"conftest.py"}, config) == ("docs", "tests")  # the test roots
    assert dirs({"conftest.py"}, Config(root=Path("."), collect_anywhere=True)) == (".",)
    assert dirs(set(), config) == ()


def test_the_items_run_walks_its_folders_alone() -> None:
    spec = BandSpec(("tests/test_calc.py::test_add", "tests/cases.json::one"),
                    item_dirs=("tests", "nowhere"))
    runs = band.band_runs(spec, Path(__file__).parents[2])
    assert [(r.label, r.args) for r in runs] == [
        ("band", ("--agentgate-select=tests/test_calc.py::test_add",
                  "--agentgate-select=tests/cases.json::one", "tests")),
        # The witness's impacted item runs in the band, not twice.
        (band.ITEMS, (f"{band.ITEMS_OPTION}=tests", "--ignore=tests/cases.json", "tests")),
    ]
    assert band.ITEMS_OPTION == outcomes.ITEMS_OPTION  # a copy: the plugin imports pytest


def _with_installed_collector(tmp_path: Path) -> Path:
    """A virtualenv for the project whose site-packages holds a pytest plugin, installed as
    pip leaves one (a ``pytest11`` entry point, a ``RECORD``), that collects JSON cases."""
    from tests.attribution.test_untrusted_head import _interpreter_of_its_own

    venv = _interpreter_of_its_own(tmp_path)
    site = next(venv.glob("lib/python*/site-packages"))
    (site / "jsoncases.py").write_text(JSON_CONFTEST, encoding="utf-8")
    meta = site / "jsoncases-1.0.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: jsoncases\nVersion: 1.0\n",
                                   encoding="utf-8")
    (meta / "entry_points.txt").write_text("[pytest11]\njsoncases = jsoncases\n",
                                           encoding="utf-8")
    (meta / "RECORD").write_text("jsoncases.py,,\njsoncases-1.0.dist-info/RECORD,,\n",
                                 encoding="utf-8")
    return venv


@pytest.mark.parametrize("calc", [BROKEN, HARMLESS], ids=["broken", "harmless"])
def test_items_an_installed_plugin_collects_run_when_code_changes(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, calc: str,
) -> None:
    """Red-team round 6, 04 by entry point: the JSON cases are collected by an installed
    plugin (as pytest-yaml, tavern, nbval are), not a conftest the repository holds, so no
    ``git grep`` finds the collector. The interpreter's distributions are read for it: the
    broken ``mul`` fails its JSON case; the harmless change runs the cases and passes."""
    from agentgate.flows import check as checkrun

    monkeypatch.setenv("VIRTUAL_ENV", str(_with_installed_collector(tmp_path)))
    repo.files({**FILES, "tests/test_table.json": JSON_CASES["tests/test_table.json"]})
    base = repo.commit("initial")
    repo.write("app/calc.py", calc)
    repo.commit("simplify mul\n\nCo-authored-by: Claude <noreply@anthropic.com>")
    data = checkrun.check(repo.path, base, "HEAD").to_json()
    results = _results(data)
    assert any("jsoncases (installed)" in n for n in data["notes"]), data["notes"]
    if calc == BROKEN:
        assert data["exit_code"] == 1, data["reasons"]
        assert results["failed_ids"] == ["tests/test_table.json::mul_small"]
    else:
        assert data["exit_code"] == 0, data["reasons"]
        assert (results["passed"], results["failed"]) == (3, 0), data["reasons"]
