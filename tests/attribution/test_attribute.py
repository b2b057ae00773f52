"""``agentgate attribute`` end to end: real repositories, real worktrees, real pytest runs.

The tests in these repositories fail as deterministic functions of ``PYTHONHASHSEED``
(through set iteration order). Which seeds fail is never written down here: ``truth`` asks
the project's interpreter for the set order under each seed, and the attribution must agree.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agentgate.attribution import attribute as engine
from agentgate.attribution.request import Request
from agentgate.core import config as config_mod
from agentgate.core.errors import AgentgateError
from agentgate.core.model import Result
from agentgate.git import gitio, worktrees
from agentgate.report.render import text_lines
from agentgate.run import interp
from tests.run.test_process import alive
from tests.support.git_repo import GitRepo, run_agentgate
from tests.support.text import unwrap

SEEDS = 4
ITEMS = '["apple", "pear"]'
SET_FIRST = f"next(iter(set({ITEMS})))"
NODE = "tests/test_core.py::test_pick"

BASE_CODE = f"def pick(items):\n    return max(set(items))\n\nITEMS = {ITEMS}\n"
SET_ORDER_CODE = f"def pick(items):\n    return next(iter(set(items)))\n\nITEMS = {ITEMS}\n"
TEST_PICK = (
    "from app.core import ITEMS, pick\n\n"
    "def test_pick():\n    assert pick(ITEMS) == max(ITEMS)\n"
)


def truth(repo: GitRepo, expr: str, seeds: int = SEEDS) -> dict[int, str]:
    """``expr`` evaluated by the project's interpreter under each seed."""
    python = interp.project_python(repo.path, config_mod.load(repo.path))
    values = {}
    for seed in range(seeds):
        env = {**os.environ, "PYTHONHASHSEED": str(seed)}
        out = subprocess.run([python, "-c", f"print({expr})"], env=env, capture_output=True,
                             text=True, check=True)
        values[seed] = out.stdout.strip()
    return values


def seeds_where(repo: GitRepo, expr: str, value: str) -> list[int]:
    seeds = [s for s, v in truth(repo, expr).items() if v == value]
    # The scenario needs both outcomes among the seeds, or it proves nothing.
    assert 0 < len(seeds) < SEEDS, f"{expr} is {value!r} under seeds {seeds} of 0..{SEEDS - 1}"
    return seeds


def patch_repo(
    repo: GitRepo, base: dict[str, str], head: dict[str, str], remove: tuple[str, ...] = ()
) -> tuple[str, str]:
    """``main`` with the base files; branch ``patch`` one commit on with the head changes."""
    repo.files({"app/__init__.py": "", "tests/__init__.py": "", **base})
    base_sha = repo.commit("base")
    repo.git("checkout", "-q", "-b", "patch")
    repo.files(head)
    if remove:
        repo.rm(*remove)
    return base_sha, repo.commit("patch")


def attribute(repo: GitRepo, nodeid: str = NODE, **options: object) -> Result:
    options.setdefault("runs", SEEDS)
    options.setdefault("repeats", 2)
    request = Request(nodeid=nodeid, base="main", **options)  # type: ignore[arg-type]
    return engine.attribute(repo.path, config_mod.load(repo.path), request)


def no_worktree_left(repo: GitRepo) -> bool:
    registered = [p.resolve() for p in gitio.worktrees(repo.path)]
    folder = worktrees.worktrees_dir(repo.path)
    names = [p.name for p in folder.iterdir()] if folder.exists() else []
    return registered == [repo.path.resolve()] and names == []


# --- the verdicts ---------------------------------------------------------------------------

@pytest.mark.e2e
def test_patch_introducing_set_order_dependence_is_patch_induced(repo: GitRepo) -> None:
    base, head = patch_repo(
        repo, {"app/core.py": BASE_CODE, "tests/test_core.py": TEST_PICK},
        {"app/core.py": SET_ORDER_CODE},
    )
    failing = seeds_where(repo, SET_FIRST, "apple")  # max() is "pear"
    result = attribute(repo)
    extra = result.to_json()
    assert (extra["verdict"], extra["freeze_allowed"], result.exit_code) == (
        "PATCH_INDUCED", False, 1)
    # Each tree imported its own code: base never fails, head fails exactly where set
    # order puts "apple" first.
    assert extra["trees"]["base"]["failing_seeds"] == []
    assert extra["trees"]["head"]["failing_seeds"] == failing
    assert extra["trees"]["head"]["per_seed"][str(failing[0])] == ["failed"] * 3
    assert extra["trees"]["base"]["per_seed"][str(failing[0])] == ["passed"] * 3
    assert (result.base, result.head) == (base, head)
    assert extra["recheck"].startswith(f"agentgate attribute {NODE} --base {base} --head {head}")
    assert 0 < extra["fisher_p"] <= 1
    low, high = extra["trees"]["head"]["ci95"]
    assert low < extra["trees"]["head"]["rate"] < high
    # Worktrees are kept for the next run on the same revisions.
    assert set(worktrees.cached(repo.path)) == {base, head}


@pytest.mark.e2e
def test_failure_on_the_same_seeds_on_both_trees_is_pre_existing_and_freezable(
    repo: GitRepo,
) -> None:
    patch_repo(
        repo, {"app/core.py": SET_ORDER_CODE, "tests/test_core.py": TEST_PICK},
        {"README.md": "unrelated docs change\n"},
    )
    failing = seeds_where(repo, SET_FIRST, "apple")
    until = (datetime.now(UTC).date() + timedelta(days=14)).isoformat()
    proc = run_agentgate(
        "attribute", NODE, "--base", "main", "--runs", str(SEEDS), "--repeats", "2",
        "--freeze", "--owner", "Test Human", "--until", until, "--format", "json",
        cwd=repo.path,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert (data["verdict"], data["freeze_allowed"]) == ("PRE_EXISTING", True)
    assert data["trees"]["base"]["failing_seeds"] == data["trees"]["head"]["failing_seeds"]
    assert data["trees"]["head"]["failing_seeds"] == failing
    record = json.loads((repo.path / data["freeze"]["path"]).read_text(encoding="utf-8"))
    assert record["test"] == NODE
    assert record["verdict"] == "PRE_EXISTING"
    assert record["owner"] == "Test Human"
    assert record["freeze_until"] == until
    assert record["recheck"] == data["recheck"]
    assert record["evidence"]["base_fail"] == record["evidence"]["head_fail"] == failing
    assert record["evidence"]["tz"] == "UTC"
    assert record["frozen_at_sha"] == repo.sha()
    # The ledger accepts the record it was handed.
    check = run_agentgate("ledger", "check", cwd=repo.path)
    assert check.returncode == 0, check.stdout + check.stderr


@pytest.mark.e2e
def test_a_full_run_the_time_limit_ended_confirms_no_freeze(repo: GitRepo) -> None:
    """The base's own full run is a freeze's last check; one that another file's hang ended
    says nothing of the test, so it confirms nothing: no freeze (read-back: a timeout
    counted as the failure that confirms it)."""
    patch_repo(repo, {"app/core.py": SET_ORDER_CODE, "tests/test_core.py": TEST_PICK,
                      "tests/test_hang.py": "import time\n\n\ndef test_hang():\n"
                                            "    time.sleep(120)\n"},
               {"README.md": "unrelated docs change\n"})
    seeds_where(repo, SET_FIRST, "apple")
    # 3 s a run, so a loaded machine still runs every one (at 1 s they timed out under
    # load); the control run's limit is ten of them, well short of the hang.
    extra = attribute(repo, context="file", timeout=3).to_json()
    assert (extra["verdict"], extra["freeze_allowed"]) == ("HARNESS_ENV", False), extra
    assert "was not confirmed (timeout" in extra["detail"], extra["detail"]


@pytest.mark.e2e
def test_a_test_reading_its_folder_name_is_judged_as_in_the_checkout(repo: GitRepo) -> None:
    """The attack: the test asserts the name of the folder it runs in (a project name taken
    from the checkout) and the patch breaks the code. Run in a folder named after a sha, the
    base's test failed too, the verdict was PRE_EXISTING and a freeze was allowed. The trees
    agentgate makes are named as the checkout is: the base passes, the patch's failure is the
    patch's."""
    named = (
        "from pathlib import Path\n\nfrom app.core import ITEMS, pick\n\n"
        "def test_pick():\n"
        f"    assert Path(__file__).resolve().parents[1].name == {repo.path.name!r}\n"
        "    assert pick(ITEMS) == max(ITEMS)\n"
    )
    patch_repo(repo, {"app/core.py": BASE_CODE, "tests/test_core.py": named},
               {"app/core.py": BASE_CODE.replace("max(set(items))", "min(set(items))")})
    extra = attribute(repo).to_json()
    assert (extra["verdict"], extra["freeze_allowed"]) == ("PATCH_INDUCED", False)
    assert extra["trees"]["base"]["failing_seeds"] == []
    assert {p.name for p in worktrees.worktrees_dir(repo.path).glob("*/*")} == {repo.path.name}


@pytest.mark.e2e
def test_a_project_that_runs_under_xdist_is_attributed(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Flake trial: ``addopts = -n 2`` with ``-p no:xdist`` made ``-n`` an unknown option,
    every run a usage error and the verdict "neither tree could run the test". The runs keep
    xdist and say ``-n 0``: one process, as attribution needs."""
    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD")  # as a project with -n runs
    patch_repo(repo, {"app/core.py": SET_ORDER_CODE, "tests/test_core.py": TEST_PICK,
                      "pyproject.toml": '[tool.pytest.ini_options]\naddopts = "-n 2"\n'},
               {"README.md": "unrelated docs change\n"})
    failing = seeds_where(repo, SET_FIRST, "apple")
    extra = attribute(repo).to_json()
    assert extra["verdict"] == "PRE_EXISTING", extra["reasons"]
    assert extra["trees"]["head"]["failing_seeds"] == failing


POISON = (
    "from pathlib import Path\n\n"
    "TREE = Path(__file__).resolve().parents[1]\n"
    "for other in TREE.parents[1].glob('*/*/tests'):\n"
    "    if other != TREE / 'tests':\n"
    "        (other / 'conftest.py').write_text(\n"
    "            'import pytest\\n\\n@pytest.fixture(autouse=True)\\n'\n"
    "            'def _poisoned():\\n    raise RuntimeError(\"poisoned\")\\n')\n"
)


@pytest.mark.e2e
def test_a_head_that_writes_into_the_base_tree_gets_no_freeze(repo: GitRepo) -> None:
    """Flake trial: the patch breaks the code, and its new conftest writes a failing
    conftest into the base's tree beside it (which its code can find): the base failed the
    same way, PRE_EXISTING, freeze allowed. A base tree that changed while the test ran is
    no evidence: BASE_UNAVAILABLE."""
    patch_repo(repo, {"app/core.py": BASE_CODE, "tests/test_core.py": TEST_PICK},
               {"app/core.py": BASE_CODE.replace("max(set(items))", "min(set(items))"),
                "tests/conftest.py": POISON})
    extra = attribute(repo).to_json()
    assert (extra["verdict"], extra["freeze_allowed"]) == ("BASE_UNAVAILABLE", False), extra
    assert "tests/conftest.py" in extra["base_problem"]


CACHED = (
    "import json, os\n\nPATH = os.path.expanduser('~/.cache/app/rate.json')\n\n\n"
    "def compute():\n    return 10\n\n\n"
    "def rate():\n"
    "    if os.path.exists(PATH):\n        with open(PATH) as f:\n"
    "            return json.load(f)\n"
    "    os.makedirs(os.path.dirname(PATH), exist_ok=True)\n"
    "    with open(PATH, 'w') as f:\n        json.dump(compute(), f)\n"
    "    return compute()\n"
)
TEST_RATE = "from app.core import rate\n\n\ndef test_rate():\n    assert rate() == 10\n"


@pytest.mark.e2e
def test_a_cache_head_left_under_home_is_no_evidence_against_the_base(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Flake trial: head's code caches its wrong value in ``~/.cache``; the developer's own
    run at head left it there, the base read it and failed the same way: PRE_EXISTING,
    freeze allowed. Every run now has a home of its own."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", os.fspath(home))
    patch_repo(repo, {"app/core.py": CACHED, "tests/test_core.py": TEST_RATE},
               {"app/core.py": CACHED.replace("return 10", "return 12")})
    local = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                            "tests/test_core.py"], cwd=repo.path, capture_output=True,
                           text=True, env={**os.environ, "PYTHONPATH": os.fspath(repo.path)})
    assert local.returncode == 1 and (home / ".cache" / "app" / "rate.json").exists(), local
    extra = attribute(repo, "tests/test_core.py::test_rate").to_json()
    assert (extra["verdict"], extra["freeze_allowed"]) == ("PATCH_INDUCED", False), extra
    assert extra["env"]["HOME"] == "(fresh per run)"
    assert json.loads((home / ".cache" / "app" / "rate.json").read_text()) == 12


TEST_CACHED = (
    "from app.core import ITEMS, pick\n\n\n"
    "def test_pick(cache):\n    cache.set('seen', 1)\n    assert pick(ITEMS) == max(ITEMS)\n"
)


@pytest.mark.e2e
def test_a_test_using_pytests_cache_is_attributed_with_it(repo: GitRepo) -> None:
    """Flake trial round 3: the runs turned pytest's cache plugin off, so a test using its
    ``cache`` fixture errored at setup on both trees: PRE_EXISTING, freezable, for a patch
    that broke it. The cache stays on, in each run's own home."""
    patch_repo(repo, {"app/core.py": BASE_CODE, "tests/test_core.py": TEST_CACHED},
               {"app/core.py": BASE_CODE.replace("max(set(items))", "min(set(items))")})
    extra = attribute(repo, context="file").to_json()
    assert extra["verdict"] == "PATCH_INDUCED", extra
    assert not (repo.path / ".pytest_cache").exists()


DATA_READER = "from pathlib import Path\n\n\ndef rate():\n" \
    "    return int((Path(__file__).parent / 'rate.txt').read_text())\n"
DATA_WRITER = (
    "from pathlib import Path\n\n"
    "TREE = Path(__file__).resolve().parents[1]\n"
    "for other in TREE.parents[1].glob('*/*/app/rate.txt'):\n"
    "    other.write_text('12')\n"
)


@pytest.mark.e2e
def test_a_head_that_rewrites_a_data_file_of_the_base_tree_gets_no_freeze(
    repo: GitRepo,
) -> None:
    """Flake trial round 3: head's conftest rewrote the base's data file (no module, no
    conftest), so the base failed as head did: PRE_EXISTING. Any file the base commits
    that changed while the runs went on makes them no evidence."""
    test = "from app.core import rate\n\n\ndef test_rate():\n    assert rate() == 10\n"
    patch_repo(repo, {"app/core.py": DATA_READER, "app/rate.txt": "10", "tests/test_r.py": test},
               {"app/rate.txt": "12", "tests/conftest.py": DATA_WRITER})
    extra = attribute(repo, "tests/test_r.py::test_rate", context="file").to_json()
    assert (extra["verdict"], extra["freeze_allowed"]) == ("BASE_UNAVAILABLE", False), extra
    assert "app/rate.txt" in extra["base_problem"]


@pytest.mark.e2e
def test_a_patch_that_crashes_the_interpreter_on_some_seeds_is_patch_induced(
    repo: GitRepo,
) -> None:
    """Flake trial round 3: head's code called os.abort() on the seeds where set order put
    "apple" first; no JUnit XML, so the runs were harness errors and the verdict
    HARNESS_ENV. A run killed by a signal while the test ran is the test's failure."""
    seeds_where(repo, SET_FIRST, "apple")  # both outcomes among the seeds
    crash = ("import os\n\n\ndef pick(items):\n    if next(iter(set(items))) == 'apple':\n"
             "        os.abort()\n    return max(set(items))\n\nITEMS = " + ITEMS + "\n")
    patch_repo(repo, {"app/core.py": BASE_CODE, "tests/test_core.py": TEST_PICK},
               {"app/core.py": crash})
    extra = attribute(repo).to_json()
    assert (extra["verdict"], extra["freeze_allowed"]) == ("PATCH_INDUCED", False), extra


CROSS_FILE = {
    "app/state.py": "STATE = {}\n\n\ndef prepare():\n    STATE['ready'] = True\n",
    "tests/test_a.py": "from app.state import prepare\n\n\ndef test_a():\n    prepare()\n",
    "tests/test_b.py": "from app.state import STATE\n\n\n"
                       "def test_b():\n    assert STATE.get('ready')\n",
}


@pytest.mark.e2e
def test_a_failure_only_apart_from_the_suite_is_no_freeze(repo: GitRepo) -> None:
    """Flake trial round 3: ``test_b`` needs what a test in another file sets up, and the
    patch broke that set-up. Run in its own file, ``test_b`` fails on both trees:
    PRE_EXISTING, freeze written. The base's own full run, which a freeze is checked
    against, passes it: HARNESS_ENV."""
    patch_repo(repo, CROSS_FILE, {"app/state.py": CROSS_FILE["app/state.py"].replace(
        "    STATE['ready'] = True\n", "    pass\n")})
    extra = attribute(repo, "tests/test_b.py::test_b", context="file").to_json()
    assert (extra["verdict"], extra["freeze_allowed"]) == ("HARNESS_ENV", False), extra
    assert "in the base's own full run" in extra["detail"], extra["detail"]


@pytest.mark.e2e
@pytest.mark.parametrize("addopts", [
    "--reruns 2 --strict-markers", "--strict-markers --max-runs 3", "--strict-markers",
], ids=["rerunfailures-options", "flaky-options", "markers-only"])
# (pytest 9 reads ``--strict-markers`` as a warning's filter; ``strict_markers`` is its ini)
def test_a_configuration_naming_the_turned_off_plugins_still_runs(
    repo: GitRepo, addopts: str,
) -> None:
    """Flake trial round 4 (r04): the runs turn rerunfailures, flaky and xdist off; their
    options in ``addopts``, or their markers under ``--strict-markers``, made every run a
    usage or collection error, and a genuinely pre-existing failure "fix the harness"."""
    known_bug = ("import pytest\n\n\n@pytest.mark.flaky(reruns=2)\n"
                 "@pytest.mark.xdist_group('db')\ndef test_known():\n    assert 1 == 2\n")
    patch_repo(repo, {"pytest.ini": f"[pytest]\naddopts = {addopts}\nstrict_markers = true\n",
                      "tests/test_known.py": known_bug}, {"README.md": "docs\n"})
    extra = attribute(repo, "tests/test_known.py::test_known").to_json()
    assert extra["verdict"] == "PRE_EXISTING", extra["detail"]


WORKER_TEST = ("from app.greet import greet\n\n\n"
               "def test_greet(worker_id):\n    assert {first}\n"
               "    assert greet('a') == 'hello a!'\n")
GREET = "def greet(who):\n    return f'hello {who}'\n"


@pytest.mark.e2e
@pytest.mark.parametrize("config", [
    {},
    # The patch's own addopts giving -n settle nothing: the base's configuration is the
    # contract, and it runs one process.
    {"pytest.ini": "[pytest]\naddopts = -p xdist -n 2\n"},
], ids=["base-config", "patch-adds-n"])
def test_a_test_reading_its_xdist_worker_is_no_freeze_from_one_process(
    repo: GitRepo, config: dict[str, str],
) -> None:
    """Flake trial round 4 (r03): CI gives ``-n 2`` on its command line; the test's first
    assert needs a worker's id and the patch broke the code after it. Runs in one process
    fail it on both trees at the first assert: PRE_EXISTING, frozen."""
    patch_repo(repo, {"app/greet.py": GREET, "tests/test_greet.py": WORKER_TEST.replace(
        "{first}", "worker_id != 'master'").replace("'hello a!'", "'hello a'"),
        "tests/conftest.py": "import pytest\n\n\n@pytest.fixture\ndef worker_id():\n"
                             "    return 'master'  # xdist's own, where it is not loaded\n"},
        {"app/greet.py": "def greet(who):\n    return 'hi'\n", **config})
    extra = attribute(repo, "tests/test_greet.py::test_greet", context="file",
                      mode="both").to_json()
    assert (extra["verdict"], extra["freeze_allowed"]) == ("HARNESS_ENV", False), extra
    assert "which xdist worker runs it" in extra["detail"], extra["detail"]


@pytest.mark.e2e
def test_a_helper_reading_the_xdist_worker_is_no_freeze_from_one_process(repo: GitRepo) -> None:
    """Flake trial round 5 (r38): the worker's name is read in a helper the test calls, not
    in the test's file or a conftest above it."""
    helper = ("import os\n\n\ndef db_name():\n"
              "    return 'db_' + os.environ.get('PYTEST_XDIST_WORKER', 'master')\n")
    test = ("from app.greet import greet\nfrom tests.helpers import db_name\n\n\n"
            "def test_greet():\n    assert db_name() != 'db_master'\n"
            "    assert greet('a') == 'hello a'\n")
    patch_repo(repo, {"app/greet.py": GREET, "tests/__init__.py": "",
                      "tests/helpers.py": helper, "tests/test_greet.py": test},
               {"app/greet.py": "def greet(who):\n    return 'hi'\n"})
    extra = attribute(repo, "tests/test_greet.py::test_greet", context="file",
                      mode="both").to_json()
    assert (extra["verdict"], extra["freeze_allowed"]) == ("HARNESS_ENV", False), extra
    assert "which xdist worker runs it" in extra["detail"], extra["detail"]


@pytest.mark.e2e
def test_a_known_bug_in_a_test_taking_its_worker_freezes_where_the_config_spreads(
    repo: GitRepo,
) -> None:
    """The twin: the project's own ``addopts`` give ``-n 2``, so the confirming runs use
    workers as CI does; a known bug after a harmless use of the worker's id is frozen."""
    patch_repo(repo, {"app/greet.py": GREET, "pytest.ini": "[pytest]\naddopts = -p xdist -n 2\n",
                      "tests/test_greet.py": WORKER_TEST.replace("{first}", "worker_id")},
               {"README.md": "docs\n"})
    extra = attribute(repo, "tests/test_greet.py::test_greet", context="file",
                      mode="both").to_json()
    assert (extra["verdict"], extra["freeze_allowed"]) == ("PRE_EXISTING", True), extra["detail"]


CI_ZONE = {
    "app/clock.py": "def label():\n    return 'ok'\n",
    "tests/test_clock.py": "import os\n\nfrom app.clock import label\n\n\n"
                           "def test_label():\n    assert os.environ.get('TZ') == 'Europe/Berlin'\n"
                           "    assert label() == 'ok'\n",
}


WORKFLOW = (".github/workflows/ci.yml", "on: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n"
            "    env: {TZ: Europe/Berlin}\n    steps:\n      - run: pytest\n")


@pytest.mark.e2e
@pytest.mark.parametrize(("zone", "ci", "verdict", "allowed"), [
    ("Europe/Berlin", False, "HARNESS_ENV", False),  # the shell CI runs agentgate in
    (None, True, "HARNESS_ENV", False),  # the workflow's env, read from the base
    (None, False, "PRE_EXISTING", True),  # the twin: no other zone to try
], ids=["shell-zone-passes", "workflow-zone-passes", "no-other-zone"])
def test_a_failure_the_pinned_zone_alone_causes_is_no_freeze(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch, zone: str | None, ci: bool, verdict: str,
    allowed: bool,
) -> None:
    """Flake trial round 4 (r19): CI's workflow sets ``TZ=Europe/Berlin``; the test's first
    assert needs it, and the patch broke the code after it. Under the pinned UTC both trees
    failed at the first assert, and it was frozen."""
    if zone is None:
        monkeypatch.delenv("TZ", raising=False)
    else:
        monkeypatch.setenv("TZ", zone)
    patch_repo(repo, {**CI_ZONE, **dict([WORKFLOW] if ci else [])},
               {"app/clock.py": "def label():\n    return 'broken'\n"})
    extra = attribute(repo, "tests/test_clock.py::test_label", context="file",
                      mode="both").to_json()
    assert (extra["verdict"], extra["freeze_allowed"]) == (verdict, allowed), extra["detail"]


# Flake trial round 5 (r24, r23, r32): what the runs' environment lacks or the shell adds,
# read before the patched code: a CI variable other than TZ, a file in the user's home, a
# warnings switch only the developer's shell sets. Both trees failed alike: frozen.
SHOP = {
    "app/shop.py": "def label():\n    return 'ok'\n",
    "tests/test_shop.py": "import os\nimport pathlib\nimport warnings\n\n"
                          "from app.shop import label\n\n\n"
                          "def test_label():\n"
                          "    warnings.warn('old', DeprecationWarning)\n"
                          "    assert os.environ.get('SHOP_MODE', 'strict') == 'strict'\n"
                          "    assert (pathlib.Path.home() / '.shoprc').exists() or "
                          "'NO_RC' in os.environ\n"
                          "    assert label() == 'ok'\n",
}
SHOP_WORKFLOW = (".github/workflows/ci.yml", "on: [push]\njobs:\n  test:\n"
                 "    runs-on: ubuntu-latest\n    env:\n      NO_RC: '1'\n"
                 "    steps:\n      - run: pytest\n")


@pytest.mark.e2e
@pytest.mark.parametrize(("what", "verdict", "allowed"), [
    ("ci-variable", "HARNESS_ENV", False),
    ("home-file", "HARNESS_ENV", False),
    ("shell-warnings", "PATCH_INDUCED", False),
    ("nothing-to-try", "PRE_EXISTING", True),  # the twin: it fails wherever it runs
], ids=["ci-variable", "home-file", "shell-warnings", "nothing-to-try"])
def test_what_the_runs_environment_alone_fails_is_no_freeze(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, what: str, verdict: str,
    allowed: bool,
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    if what == "home-file":
        (home / ".shoprc").write_text("mode = strict\n", encoding="utf-8")
    monkeypatch.setenv("HOME", os.fspath(home))
    monkeypatch.delenv("NO_RC", raising=False)
    if what == "shell-warnings":
        monkeypatch.setenv("PYTHONWARNINGS", "error::DeprecationWarning")
        monkeypatch.setenv("NO_RC", "1")  # the shell gives it too: only the warning differs
    base = {**SHOP, **dict([SHOP_WORKFLOW] if what == "ci-variable" else [])}
    patch_repo(repo, base, {"app/shop.py": "def label():\n    return 'broken'\n"})
    extra = attribute(repo, "tests/test_shop.py::test_label", context="file",
                      mode="both").to_json()
    assert (extra["verdict"], extra["freeze_allowed"]) == (verdict, allowed), extra["detail"]


LOCAL_CONFIG = {
    ".gitignore": "config/local.json\n",
    "app/shop.py": "import json\n\n\ndef mode():\n"
                   "    with open('config/local.json') as fh:\n"
                   "        return json.load(fh)['mode']\n\n\n"
                   "def label():\n    return 'ok'\n",
    "tests/test_shop.py": "from app.shop import label, mode\n\n\n"
                          "def test_label():\n    assert mode() == 'strict'\n"
                          "    assert label() == 'ok'\n",
}


@pytest.mark.e2e
@pytest.mark.parametrize("here", [True, False], ids=["checkout-has-it", "nowhere"])
def test_a_file_git_ignores_that_the_checkout_has_is_no_freeze(
    repo: GitRepo, here: bool,
) -> None:
    """Flake trial round 5 (r20): a gitignored ``config/local.json`` the developer and CI
    create; the runs' trees, from git, lack it, both trees failed opening it before the
    patched code, and it was frozen. The twin: nobody has the file, the failure is real."""
    patch_repo(repo, LOCAL_CONFIG, {"app/shop.py": LOCAL_CONFIG["app/shop.py"].replace(
        "return 'ok'", "return 'broken'")})
    if here:
        (repo.path / "config").mkdir()
        (repo.path / "config" / "local.json").write_text('{"mode": "strict"}', encoding="utf-8")
    extra = attribute(repo, "tests/test_shop.py::test_label", context="file",
                      mode="both").to_json()
    if here:
        assert (extra["verdict"], extra["freeze_allowed"]) == ("HARNESS_ENV", False), extra
        assert "config/local.json" in extra["detail"], extra["detail"]
    else:
        assert (extra["verdict"], extra["freeze_allowed"]) == ("PRE_EXISTING", True), extra


HELPED = {
    "app/cart.py": "def total():\n    return 3\n\n\ndef legacy_total():\n    return 4\n",
    "tests/helpers.py": "from app.cart import legacy_total\n\n\ndef check(want):\n"
                        "    assert legacy_total() == want, 'totals disagree'\n",
    "tests/test_cart.py": "from tests.helpers import check\n\n\n"
                          "def test_total():\n    check(3)\n",
}


@pytest.mark.e2e
@pytest.mark.parametrize("helper", ["tests/helpers.py", "tests/other_helpers.py"],
                         ids=["the-tests-helper", "another-helper"])
def test_a_rewritten_helper_the_failing_test_calls_is_no_freeze(
    repo: GitRepo, helper: str,
) -> None:
    """Flake trial round 5 (r26): the base's helper checks ``legacy_total`` (a known bug);
    the agent rewrites it to check its new ``total``, which it broke. The test's source, its
    identity, is unchanged; both fail on the helper's line with its message: frozen. The
    twin changes a helper the test does not use: the known bug still freezes."""
    base = {**HELPED, "tests/other_helpers.py": "def unused():\n    return 1\n"}
    head = {"app/cart.py": HELPED["app/cart.py"].replace("return 3", "return 5")}
    if helper == "tests/helpers.py":
        head[helper] = HELPED[helper].replace("legacy_total", "total")
    else:
        head[helper] = "def unused():\n    return 2\n"
    patch_repo(repo, base, head)
    extra = attribute(repo, "tests/test_cart.py::test_total", context="file",
                      mode="both").to_json()
    if helper == "tests/helpers.py":
        assert (extra["verdict"], extra["freeze_allowed"]) == ("INCONCLUSIVE", False), extra
        assert "tests/helpers.py" in extra["detail"], extra["detail"]
    else:
        assert (extra["verdict"], extra["freeze_allowed"]) == ("PRE_EXISTING", True), extra


CURRENCY = {
    "app/money.py": "CURRENCY = ['EUR']\n\n\ndef use(code):\n    CURRENCY[0] = code\n\n\n"
                    "def price(x):\n    return f'{x} {CURRENCY[0]}'\n",
    "tests/test_target.py": "from app.money import price\n\n\n"
                            "def test_target():\n    assert price(3) == '3 EUR'\n",
}


@pytest.mark.e2e
@pytest.mark.parametrize(("head", "verdict"), [
    # The patch's new test file switches the currency and leaves it switched.
    ({"tests/test_aa_switch.py": "from app.money import use\n\n\n"
                                 "def test_switch():\n    use('USD')\n"}, "PATCH_INDUCED"),
    # The twin: a test file that leaves nothing behind.
    ({"tests/test_aa_plain.py": "def test_plain():\n    assert True\n"}, "NO_REPRO"),
], ids=["leaves-state", "leaves-nothing"])
def test_a_failure_only_in_heads_suite_is_no_no_repro(
    repo: GitRepo, head: dict[str, str], verdict: str,
) -> None:
    """Flake trial round 4 (r05): alone and in its file the test passes on both trees; in
    head's suite the patch's new test file runs first and fails it. That was NO_REPRO,
    exit 0."""
    patch_repo(repo, CURRENCY, head)
    extra = attribute(repo, "tests/test_target.py::test_target", context="file").to_json()
    assert (extra["verdict"], extra["freeze_allowed"]) == (verdict, False), extra["detail"]


# Flake trial round 4 (r06, r16): the confirming full run asked only "did it fail?".
SUITE_FAILS_OTHERWISE = {
    **CROSS_FILE,
    # In the whole suite another file leaves a wrong value: the base's suite fails test_b
    # with an AssertionError, where alone (and in its file) it fails with a KeyError.
    "tests/test_a2.py": "from app.state import STATE\n\n\ndef test_a2():\n"
                       "    STATE['ready'] = 0\n",
    "tests/test_b.py": "from app.state import STATE\n\n\n"
                       "def test_b():\n    assert STATE['ready']\n",
}


@pytest.mark.e2e
def test_a_base_suite_failing_the_test_for_another_reason_confirms_no_freeze(
    repo: GitRepo,
) -> None:
    """The patch broke test_a's set-up: alone, test_b fails with a KeyError on both trees.
    The base's own suite fails it too, but with an AssertionError another file causes: what
    fails it there is not what the runs saw, so it confirms nothing."""
    patch_repo(repo, SUITE_FAILS_OTHERWISE, {"app/state.py": CROSS_FILE["app/state.py"].replace(
        "    STATE['ready'] = True\n", "    pass\n")})
    extra = attribute(repo, "tests/test_b.py::test_b", context="file").to_json()
    assert (extra["verdict"], extra["freeze_allowed"]) == ("INCONCLUSIVE", False), extra
    assert "fails it otherwise" in extra["detail"], extra["detail"]


MODE = {
    "app/state.py": "STATE = {}\n\n\ndef prepare():\n    STATE['mode'] = 'slow'\n",
    "tests/test_a.py": "from app.state import prepare\n\n\ndef test_a():\n    prepare()\n",
    # Fails everywhere at the base, the same way: a known bug, rightly frozen.
    "tests/test_b.py": "from app.state import STATE\n\n\n"
                       "def test_b():\n    assert STATE.get('mode', 'slow').startswith('fast')\n",
}


@pytest.mark.e2e
@pytest.mark.parametrize(("head", "verdict", "allowed"), [
    # The patch changes how the suite fails it: an int has no startswith.
    ({"app/state.py": MODE["app/state.py"].replace("'slow'", "1")}, "PATCH_INDUCED", False),
    # The twin: the patch leaves it failing as it did.
    ({"README.md": "docs\n"}, "PRE_EXISTING", True),
], ids=["head-suite-fails-otherwise", "same-failure"])
def test_heads_own_suite_must_fail_the_test_as_the_bases_does(
    repo: GitRepo, head: dict[str, str], verdict: str, allowed: bool,
) -> None:
    patch_repo(repo, MODE, head)
    extra = attribute(repo, "tests/test_b.py::test_b", context="file").to_json()
    assert (extra["verdict"], extra["freeze_allowed"]) == (verdict, allowed), extra


ORDERED = ("STATE = {}\n\n\ndef test_a():\n    STATE['ready'] = True\n\n\n"
           "def test_b():\n    assert STATE.get('ready')\n")


@pytest.mark.e2e
def test_a_test_needing_another_tests_state_is_frozen_only_from_its_file(
    repo: GitRepo,
) -> None:
    """Flake trial: ``test_b`` needs what ``test_a`` sets up; the patch stops ``test_a``
    from setting it. Alone, ``test_b`` fails on both trees: PRE_EXISTING, and a freeze was
    allowed. Alone allows none now; inside its file the patch's doing shows."""
    patch_repo(repo, {"tests/test_order.py": ORDERED},
               {"tests/test_order.py": ORDERED.replace("    STATE['ready'] = True\n",
                                                       "    pass\n")})
    alone = attribute(repo, "tests/test_order.py::test_b").to_json()
    assert (alone["verdict"], alone["freeze_allowed"]) == ("PRE_EXISTING", False)
    assert "a freeze needs --context file" in alone["reasons"][0]["detail"] + str(alone)
    inside = attribute(repo, "tests/test_order.py::test_b", context="file").to_json()
    assert (inside["verdict"], inside["freeze_allowed"]) == ("PATCH_INDUCED", False), inside


@pytest.mark.e2e
def test_a_class_is_attributed_by_its_id(repo: GitRepo) -> None:
    """Flake trial: ``tests/test_core.py::TestPick`` exited 64, "pytest collects no test"."""
    in_class = TEST_PICK.replace("def test_pick():\n    assert",
                                 "class TestPick:\n    def test_pick(self):\n        assert")
    patch_repo(repo, {"app/core.py": BASE_CODE, "tests/test_core.py": in_class},
               {"app/core.py": SET_ORDER_CODE})
    failing = seeds_where(repo, SET_FIRST, "apple")
    extra = attribute(repo, "tests/test_core.py::TestPick").to_json()
    assert extra["verdict"] == "PATCH_INDUCED", extra["reasons"]
    assert extra["trees"]["head"]["failing_seeds"] == failing


RATE_TEST = ("import pytest\n\nfrom app.rates import RATES\n\n\n"
             "@pytest.mark.parametrize('rate', RATES)\ndef test_tax(rate):\n"
             "    assert rate['got'] == rate['want']\n")
RATES = "RATES = [{'got': 1, 'want': 1}, {'got': 2, 'want': 3}]\n"  # rate1 fails at the base


@pytest.mark.e2e
def test_one_case_id_naming_other_parameters_on_each_tree_is_no_pre_existing_failure(
    repo: GitRepo,
) -> None:
    """Flake trial round 4: the ids of parameters pytest cannot show are positional, so
    ``test_tax[rate1]`` at head was the broken rate the patch inserted, and at the base
    another rate that failed already: both failed on the same line with the same exception,
    and the patch's bug was frozen as pre-existing. The twin appends its rate: ``rate1`` is
    the same case on both trees, and still freezable."""
    inserted = "RATES = [{'got': 1, 'want': 1}, {'got': 5, 'want': 4}, {'got': 2, 'want': 3}]\n"
    patch_repo(repo, {"app/rates.py": RATES, "tests/test_tax.py": RATE_TEST},
               {"app/rates.py": inserted})
    node = "tests/test_tax.py::test_tax[rate1]"
    found = attribute(repo, node, runs=2, repeats=1, context="file").to_json()
    assert (found["verdict"], found["freeze_allowed"]) == ("PATCH_INDUCED", False), found
    repo.git("checkout", "-q", "-b", "appended", "main")
    repo.files({"app/rates.py": RATES.replace("]\n", ", {'got': 4, 'want': 4}]\n")})
    repo.commit("append a rate")
    twin = attribute(repo, node, runs=2, repeats=1, context="file").to_json()
    assert (twin["verdict"], twin["freeze_allowed"]) == ("PRE_EXISTING", True), twin


OBJECT_RATES = ("class Rate:\n    def __init__(self, name, ok):\n"
                "        self.name, self.ok = name, ok\n\n\n"
                "RATES = [Rate('zero', True), Rate('full', False)]\n")
OBJECT_RATE_TEST = RATE_TEST.replace("rate['got'] == rate['want']", "rate.ok")


@pytest.mark.e2e
def test_one_case_id_holding_another_object_of_one_class_is_no_pre_existing_failure(
    repo: GitRepo,
) -> None:
    """Flake trial round 5 (r33): parameters with the default repr were one identity for
    their class (the address stripped), so ``rate1`` was the base's failing rate and the
    patch's inserted one alike, and the messages too: frozen. Their state is the identity."""
    inserted = OBJECT_RATES.replace("Rate('zero', True), ", "Rate('zero', True), "
                                    "Rate('reduced', False), ")
    patch_repo(repo, {"app/rates.py": OBJECT_RATES, "tests/test_tax.py": OBJECT_RATE_TEST},
               {"app/rates.py": inserted})
    found = attribute(repo, "tests/test_tax.py::test_tax[rate1]", runs=2, repeats=1,
                      context="file").to_json()
    assert (found["verdict"], found["freeze_allowed"]) == ("PATCH_INDUCED", False), found


@pytest.mark.e2e
def test_patch_swallowing_the_exception_is_patch_masks(repo: GitRepo) -> None:
    raising = (
        f"ITEMS = {ITEMS}\n\ndef load(items):\n    first = next(iter(set(items)))\n"
        "    if first == 'apple':\n        raise ValueError('unexpected order')\n"
        "    return first\n"
    )
    swallowing = raising.replace(
        "def load(items):\n", "def load(items):\n    try:\n        return _load(items)\n"
        "    except ValueError:\n        return 'pear'\n\ndef _load(items):\n",
    )
    test = ("from app.core import ITEMS, load\n\n"
            "def test_load():\n    assert load(ITEMS) in ITEMS\n")
    patch_repo(repo, {"app/core.py": raising, "tests/test_core.py": test},
               {"app/core.py": swallowing})
    failing = seeds_where(repo, SET_FIRST, "apple")
    result = attribute(repo, "tests/test_core.py::test_load")
    assert (result.to_json()["verdict"], result.exit_code) == ("PATCH_MASKS", 2)
    assert result.to_json()["trees"]["base"]["failing_seeds"] == failing
    assert result.to_json()["trees"]["head"]["failing_seeds"] == []
    assert "unexpected order" in " ".join(result.to_json()["trees"]["base"]["problems"])


ALWAYS_WRONG_CODE = f"def pick(items):\n    return min(set(items))\n\nITEMS = {ITEMS}\n"


@pytest.mark.e2e
def test_a_deterministic_bug_on_three_swept_runs_is_inconclusive_and_says_run_four(
    repo: GitRepo,
) -> None:
    """Issue 13: ``--mode swept --runs 3`` on a patch that always fails (head 3/3, base 0/3)
    said HARNESS_ENV. Three runs a tree cannot make that significant (Fisher p = 0.1): the
    verdict is INCONCLUSIVE (exit 2), refuses a freeze, and names the runs that settle it;
    run that many and the patch is blamed."""
    patch_repo(repo, {"app/core.py": BASE_CODE, "tests/test_core.py": TEST_PICK},
               {"app/core.py": ALWAYS_WRONG_CODE})
    until = (datetime.now(UTC).date() + timedelta(days=14)).isoformat()
    proc = run_agentgate("attribute", NODE, "--base", "main", "--mode", "swept", "--runs", "3",
                         "--freeze", "--owner", "Test Human", "--until", until,
                         "--format", "json", cwd=repo.path)
    data = json.loads(proc.stdout)
    assert (data["verdict"], data["freeze_allowed"], proc.returncode) == (
        "INCONCLUSIVE", False, 4)  # the refused freeze blocks; the verdict alone promotes
    assert data["trees"]["head"]["failing_seeds"] == [0, 1, 2]
    assert data["trees"]["base"]["failing_seeds"] == []
    assert "the evidence is thin" in data["detail"] and "--runs 4 " in data["detail"]
    assert "attribute-freeze-refused" in [r["code"] for r in data["reasons"]]
    assert not (repo.path / ".agentgate/freezes").exists()
    alone = attribute(repo, mode="swept", runs=3)
    assert (alone.to_json()["verdict"], alone.exit_code) == ("INCONCLUSIVE", 2)
    settled = attribute(repo, mode="swept", runs=4)
    assert (settled.to_json()["verdict"], settled.exit_code) == ("PATCH_INDUCED", 1)


COUNTER_TEST = (
    "from pathlib import Path\n\n"
    "def test_counter():\n"
    "    # Shared state between runs: fails every other run, whatever the seed.\n"
    "    path = Path(__file__).with_name('.count')\n"
    "    count = int(path.read_text()) if path.exists() else 0\n"
    "    path.write_text(str(count + 1))\n"
    "    assert count % 2 == 0\n"
)


@pytest.mark.e2e
def test_a_seed_that_fails_only_sometimes_is_harness_env(repo: GitRepo) -> None:
    patch_repo(repo, {"tests/test_counter.py": COUNTER_TEST}, {"README.md": "docs\n"})
    # One run at a time, so "every other run" falls on the same seeds in both trees'
    # sweeps (1, 3, ...) and then splits each seed's re-runs.
    result = attribute(repo, "tests/test_counter.py::test_counter", runs=2, jobs=1)
    extra = result.to_json()
    assert (extra["verdict"], extra["freeze_allowed"], result.exit_code) == (
        "HARNESS_ENV", False, 2)
    assert extra["trees"]["base"]["per_seed"] == {"0": ["passed"], "1": ["failed", "passed",
                                                                           "failed"]}
    assert "only sometimes" in extra["detail"]


@pytest.mark.e2e
def test_a_test_added_by_the_patch_is_not_collected_and_revert_code_runs_it(
    repo: GitRepo,
) -> None:
    new_test = ("from app.core import ITEMS, pick\n\n"
                "def test_new():\n    assert pick(ITEMS) == 'pear'\n")
    patch_repo(repo, {"app/core.py": BASE_CODE},
               {"app/core.py": SET_ORDER_CODE, "tests/test_new.py": new_test})
    failing = seeds_where(repo, SET_FIRST, "apple")
    result = attribute(repo, "tests/test_new.py::test_new", revert_code=True)
    extra = result.to_json()
    assert (extra["verdict"], extra["freeze_allowed"], result.exit_code) == (
        "NOT_COLLECTED", False, 2)
    assert extra["trees"]["base"]["counts"]["not-collected"] == SEEDS
    assert extra["trees"]["head"]["failing_seeds"] == failing
    # The head's test on the base's code passes: the patch's code change makes it fail.
    assert extra["revert_code"]["failing_seeds"] == []
    assert extra["revert_code"]["executed"] == SEEDS
    assert "passes with the code change reverted" in extra["revert_code"]["answer"]
    assert no_worktree_left(repo) is False  # base and head are cached; the reverted tree is gone
    assert all("-tmp-" not in p.name for p in worktrees.worktrees_dir(repo.path).iterdir())


def test_a_base_whose_conftest_does_not_import_is_base_unavailable(repo: GitRepo) -> None:
    patch_repo(
        repo,
        {"tests/conftest.py": "def broken(:\n", "tests/test_ok.py": "def test_ok():\n    pass\n"},
        {"tests/conftest.py": ""},
    )
    result = attribute(repo, "tests/test_ok.py::test_ok", runs=2)
    extra = result.to_json()
    assert (extra["verdict"], extra["freeze_allowed"], result.exit_code) == (
        "BASE_UNAVAILABLE", False, 2)
    assert extra["trees"]["base"]["counts"]["harness-error"] == 2
    assert extra["trees"]["head"]["counts"]["passed"] == 2
    assert "SyntaxError" in extra["detail"]


def test_a_base_that_cannot_be_checked_out_is_base_unavailable(repo: GitRepo) -> None:
    repo.git("config", "filter.boom.clean", "cat")
    patch_repo(
        repo, {".gitattributes": "data.bin filter=boom\n", "data.bin": "x\n",
               "tests/test_ok.py": "def test_ok():\n    pass\n"},
        {}, remove=("data.bin",),
    )
    repo.git("config", "filter.boom.smudge", "false")
    repo.git("config", "filter.boom.required", "true")
    result = attribute(repo, "tests/test_ok.py::test_ok", runs=2)
    assert (result.to_json()["verdict"], result.exit_code) == ("BASE_UNAVAILABLE", 2)
    assert "smudge filter boom failed" in result.to_json()["detail"]
    assert result.to_json()["trees"]["base"] is None
    assert result.to_json()["trees"]["head"]["runs"] == 0  # no guess: nothing ran


ENV_TEST = (
    "import os, time\n\n"
    "def test_env():\n"
    "    assert os.environ['TZ'] == 'UTC' and time.strftime('%Z') == 'UTC'\n"
    "    assert os.environ['LC_ALL'] == 'C.UTF-8'\n"
    "    assert os.environ['PYTHONHASHSEED'].isdigit()\n"
    "    assert 'PYTEST_ADDOPTS' not in os.environ\n"
)


def test_nothing_failing_is_no_repro_with_the_rule_of_three_bound(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Ambient inputs that would break the run if they reached it.
    monkeypatch.setenv("TZ", "America/New_York")
    monkeypatch.setenv("PYTEST_ADDOPTS", "--no-such-option")
    patch_repo(repo, {"tests/test_env.py": ENV_TEST}, {"README.md": "docs\n"})
    result = attribute(repo, "tests/test_env.py::test_env")
    extra = result.to_json()
    assert (extra["verdict"], extra["freeze_allowed"], result.exit_code) == ("NO_REPRO", False, 0)
    assert extra["trees"]["head"]["counts"]["passed"] == SEEDS
    bound = extra["bound"]
    assert bound["head"]["runs"] == SEEDS
    assert bound["head"]["upper95"] == pytest.approx(1 - 0.05 ** (1 / SEEDS))
    assert bound["head"]["rule_of_three"] == pytest.approx(3 / SEEDS)
    assert bound["runs_for_1pct"] == 299
    assert bound["head"]["more_runs_for_1pct"] == 299 - SEEDS
    text = unwrap("\n".join(text_lines(result)))  # one line per item
    assert "rule of three" in text and "299 runs would bound it at 1%" in text


def test_freeze_is_refused_for_any_other_verdict(repo: GitRepo) -> None:
    patch_repo(repo, {"tests/test_ok.py": "def test_ok():\n    pass\n"}, {"README.md": "x\n"})
    until = (datetime.now(UTC).date() + timedelta(days=7)).isoformat()
    proc = run_agentgate(
        "attribute", "tests/test_ok.py::test_ok", "--base", "main", "--runs", "2",
        "--freeze", "--owner", "Test Human", "--until", until, cwd=repo.path,
    )
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert "attribute-freeze-refused" in proc.stdout
    assert "the verdict is NO_REPRO" in unwrap(proc.stdout)
    assert not (repo.path / ".agentgate" / "freezes").exists()


# --- the tree's own code and config are what run ---------------------------------------------

WHERE_TEST = (
    "from pathlib import Path\n\nimport app.core\n\n"
    "def test_where():\n"
    "    assert app.core.VERSION == 'committed'\n"
    "    assert Path(app.core.__file__).resolve().is_relative_to(Path.cwd().resolve())\n"
)


def test_editable_install_and_main_checkout_do_not_leak_into_the_trees(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A src layout: the code is not importable from the tree's root, so only the tree's
    # source roots on PYTHONPATH can make the tree's own copy win.
    repo.files({"src/app/__init__.py": "", "src/app/core.py": "VERSION = 'committed'\n",
                "tests/test_where.py": WHERE_TEST})
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "patch")
    repo.write("README.md", "docs\n")
    repo.commit("patch")
    # The main checkout's working copy differs from every commit, and is what an editable
    # install (a .pth path line), an ambient PYTHONPATH, a root conftest and a pytest.ini
    # there would bring in.
    repo.write("src/app/core.py", "VERSION = 'dirty working copy'\n")
    repo.write("conftest.py", "raise RuntimeError('the main checkout conftest leaked')\n")
    repo.write("pytest.ini", "[pytest]\naddopts = --no-such-option\n")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages",
                    str(venv)], check=True)
    site = subprocess.run([str(venv / "bin" / "python"), "-c",
                           "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "__editable__.app.pth").write_text(f"{repo.path / 'src'}\n", encoding="utf-8")
    monkeypatch.setenv("VIRTUAL_ENV", str(venv))
    monkeypatch.setenv("PYTHONPATH", str(repo.path / "src"))
    result = attribute(repo, "tests/test_where.py::test_where", runs=2)
    assert result.to_json()["python"] == str(venv / "bin" / "python")
    assert result.to_json()["trees"]["head"]["counts"]["passed"] == 2, result.to_json()["trees"]
    assert result.to_json()["verdict"] == "NO_REPRO"
    # Proof the leak path is real: the venv's interpreter imports the dirty copy through
    # the .pth line when nothing puts a tree first.
    leaked = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import app.core; print(app.core.VERSION)"],
        cwd=tmp_path, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": ""},
    )
    assert leaked.stdout.strip() == "dirty working copy"


ORDER_TESTS = (
    "STATE = []\n\n"
    "def test_fill():\n    STATE.append(1)\n\n"
    "def test_empty():\n    assert STATE == []\n"
)


@pytest.mark.e2e
def test_context_file_finds_order_dependence_running_alone_cannot(repo: GitRepo) -> None:
    import hashlib

    patch_repo(repo, {"tests/test_order.py": ORDER_TESTS}, {"README.md": "docs\n"})
    node = "tests/test_order.py::test_empty"

    def position(seed: int, name: str) -> bytes:  # the documented order: by (seed, node id)
        return hashlib.sha256(f"{seed}\0tests/test_order.py::{name}".encode()).digest()

    failing = [s for s in range(SEEDS) if position(s, "test_fill") < position(s, "test_empty")]
    assert 0 < len(failing) < SEEDS
    alone = attribute(repo, node, runs=2, mode="swept")
    # Alone it never fails; head's own full run, which a NO_REPRO is checked against, fails
    # it, and so does the base's: not NO_REPRO (exit 0), but "fails only in its suite".
    assert alone.to_json()["verdict"] == "INCONCLUSIVE"
    assert "it fails only in its suite" in alone.to_json()["detail"]
    in_file = attribute(repo, node, context="file")
    assert in_file.to_json()["verdict"] == "PRE_EXISTING"
    assert in_file.to_json()["trees"]["head"]["failing_seeds"] == failing
    assert in_file.to_json()["trees"]["base"]["failing_seeds"] == failing
    assert "--context file" in in_file.to_json()["recheck"]


def test_matched_mode_reruns_the_given_seed(repo: GitRepo) -> None:
    patch_repo(repo, {"app/core.py": BASE_CODE, "tests/test_core.py": TEST_PICK},
               {"app/core.py": SET_ORDER_CODE})
    seed = seeds_where(repo, SET_FIRST, "apple")[0]
    result = attribute(repo, mode="matched", seeds=(seed,), repeats=2, progress=True)
    extra = result.to_json()
    assert extra["verdict"] == "PATCH_INDUCED"
    assert extra["seeds"] == [seed]
    assert extra["trees"]["head"]["per_seed"] == {str(seed): ["failed", "failed"]}
    assert extra["trees"]["base"]["per_seed"] == {str(seed): ["passed", "passed"]}
    assert f"--seed {seed}" in extra["recheck"]


def test_a_run_over_the_timeout_is_killed_and_reported(repo: GitRepo) -> None:
    slow = "import time\n\ndef test_slow():\n    time.sleep(30)\n"
    patch_repo(repo, {"tests/test_slow.py": "def test_slow():\n    pass\n"},
               {"tests/test_slow.py": slow})
    # 8 s a run: the base's passing runs finish inside it on a loaded machine (at 3 s they
    # did not, and the verdict was HARNESS_ENV).
    result = attribute(repo, "tests/test_slow.py::test_slow", runs=1, repeats=3, timeout=8)
    # Flake trial round 3: every re-run of a seed that hung waited the whole limit again
    # (3 h at the default). Once is enough: the matched re-runs of that seed on that tree
    # count as timeouts without running (said per run, not timed here).
    head = result.to_json()["trees"]["head"]
    assert head["counts"]["timeout"] == 4  # swept, then matched
    assert "timeout: not run again: this seed ran into the time limit on this tree before" in (
        head["problems"])
    assert result.to_json()["verdict"] == "PATCH_INDUCED"


# --- usage errors (no runs) ----------------------------------------------------------------

@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["tests/test_ok.py"], "not a test node id"),
        (["tests/test_ok.py::test_ok", "--mode", "sideways"], "--mode must be one of"),
        (["tests/test_ok.py::test_ok", "--runs", "0"], "--runs must be at least 1"),
        (["tests/test_gone.py::test_x"], "does not exist at head"),
        (["tests/test_ok.py::test_ok", "--base", "patch"], "same commit"),
        (["tests/test_ok.py::test_ok", "--freeze", "--owner", "x"], "--freeze needs"),
        (["tests/test_ok.py::test_ok", "--freeze", "--owner", "x", "--until", "2999-01-01"],
         "the maximum is"),
        (["tests/test_ok.py::test_ok", "--freeze", "--owner", "x", "--until", "soon"],
         "not a date"),
    ],
)
def test_usage_errors_exit_64_with_one_line(repo: GitRepo, args: list[str], said: str) -> None:
    patch_repo(repo, {"tests/test_ok.py": "def test_ok():\n    pass\n"}, {"README.md": "x\n"})
    proc = run_agentgate("attribute", *args, "--base", "main", cwd=repo.path) if "--base" not in \
        args else run_agentgate("attribute", *args, cwd=repo.path)
    assert proc.returncode == 64, proc.stdout + proc.stderr
    assert said in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "Traceback" not in proc.stderr


def test_a_node_id_pytest_does_not_collect_on_head_is_a_usage_error(repo: GitRepo) -> None:
    patch_repo(repo, {"tests/test_ok.py": "def test_ok():\n    pass\n"}, {"README.md": "x\n"})
    with pytest.raises(AgentgateError, match="collects no test"):
        attribute(repo, "tests/test_ok.py::test_typo", runs=1)


# --- Ctrl-C and crashes ----------------------------------------------------------------------

SLEEPY_TEST = (
    "import os, time\nfrom pathlib import Path\n\n"
    "def test_sleepy():\n"
    "    where = os.environ.get('AG_SLEEP_DIR')\n"
    "    if where:\n"
    "        Path(where, str(os.getpid())).write_text('started')\n"
    "        time.sleep(60)\n"
)


def _start_sleeping_attribute(repo: GitRepo, sleep_dir: Path) -> tuple[subprocess.Popen[str], int]:
    patch_repo(repo, {"tests/test_sleepy.py": SLEEPY_TEST}, {"README.md": "x\n"})
    sleep_dir.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentgate", "attribute", "tests/test_sleepy.py::test_sleepy",
         "--base", "main", "--runs", "2", "--jobs", "2"],
        cwd=repo.path, env={**os.environ, "AG_SLEEP_DIR": str(sleep_dir)},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    deadline = time.monotonic() + 60
    while not list(sleep_dir.iterdir()):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no test run started"
        time.sleep(0.1)
    return proc, int(next(sleep_dir.iterdir()).name)


def _gone(pid: int, within: float = 10.0) -> bool:
    # A zombie is gone too: after an attribution in this process (a child subreaper since),
    # what a killed agentgate orphaned re-parents to us, and nothing here reaps it.
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.1)
    return False


@pytest.mark.e2e
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_mid_run_kills_the_runs_and_leaves_no_worktree(
    repo: GitRepo, tmp_path: Path, signum: int
) -> None:
    proc, test_pid = _start_sleeping_attribute(repo, tmp_path / "sleeping")
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "interrupted" in err
    assert _gone(test_pid), "the test process outlived agentgate"
    assert no_worktree_left(repo)
    assert repo.git("worktree", "list", "--porcelain").count("worktree ") == 1


@pytest.mark.e2e
def test_a_killed_run_does_not_stop_the_next_one(repo: GitRepo, tmp_path: Path) -> None:
    proc, test_pid = _start_sleeping_attribute(repo, tmp_path / "sleeping")
    proc.kill()  # SIGKILL: no cleanup at all
    proc.communicate(timeout=30)
    time.sleep(0.5)
    sleepers = {test_pid, *(int(p.name) for p in (tmp_path / "sleeping").iterdir())}
    for pid in sleepers:  # its orphaned test runs, which nothing else will stop
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    assert all(_gone(pid) for pid in sleepers)
    started = time.monotonic()
    again = run_agentgate("attribute", "tests/test_sleepy.py::test_sleepy", "--base", "main",
                          "--runs", "2", "--format", "json", cwd=repo.path)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["verdict"] == "NO_REPRO"
    assert time.monotonic() - started < 60
    # The killed run's scratch folder is swept; only the two cached trees remain.
    names = sorted(p.name for p in worktrees.worktrees_dir(repo.path).iterdir())
    assert all("-tmp-" not in n for n in names), names
    assert repo.git("worktree", "list", "--porcelain").count("worktree ") == 3


def test_a_project_with_strict_config_is_attributed(repo: GitRepo) -> None:
    """attrs runs with ``--strict-config`` (Jinja2 with ``filterwarnings = error``): an ini
    override that is no ini option stopped every run ('Unknown config option'), and each
    came back as not collected (exit 64, 'check the node id'; new-user trial)."""
    patch_repo(repo, {"tests/test_env.py": ENV_TEST,
                      # pytest 9.2 refuses an unknown -o under --strict-config; older ones
                      # warn, which filterwarnings = error refuses
                      "pyproject.toml": '[tool.pytest.ini_options]\naddopts = "--strict-config"\n'
                                        'filterwarnings = ["error"]\n'},
               {"README.md": "docs\n"})
    result = attribute(repo, "tests/test_env.py::test_env")
    assert (result.to_json()["verdict"], result.exit_code) == ("NO_REPRO", 0)
