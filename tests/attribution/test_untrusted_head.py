"""The head tree is the patch's code, written by whoever wants its failure frozen: nothing it
starts outlives its run, and none of it runs while a base run runs or is read (flake trial
f10 and f11). Real repositories, real ``agentgate attribute`` processes, real pytest."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import agentgate
from tests.attribution.test_attribute import patch_repo
from tests.run.test_process import DETACHER, alive, kill
from tests.support.git_repo import GitRepo, run_agentgate

NODE = "tests/test_t.py::test_t"
CODE = "def f():\n    return 1\n"
BROKEN = "def f():\n    return 2   # the patch's bug\n"
TEST = "from app.m import f\n\n\ndef test_t():\n    assert f() == 1\n"
UNTIL = (datetime.now(UTC).date() + timedelta(days=14)).isoformat()
FREEZE = ("--freeze", "--owner", "Test Human", "--until", UNTIL)  # --context file with it

# Head's test leaves a sleeper in a new session and a double-forked daemon with no
# environment (DETACHER), and records "<its pid> <sleeper pid>" for each in $AG_PIDS.
LEAVER = (
    "import os, subprocess, sys\n\n"
    f"DETACHER = {DETACHER!r}\n\n\n"
    "def test_t():\n"
    "    for how in ('session', 'daemon'):\n"
    "        out = os.path.join(os.environ['AG_PIDS'], f'{how}-{os.getpid()}')\n"
    "        subprocess.run([sys.executable, '-c', DETACHER, out, how], check=True)\n"
)

# Head's code, at import, watches for the base's JUnit reports -- near its own, which its
# --junitxml argument names, and the control run's -- and rewrites each passing one, the
# moment it is complete, with head's own failure (FORGED): in a thread of the head run, or
# in a double-forked daemon that records its pid in $AG_PIDS and outlives the run unless
# something kills it.
WATCHER = '''
import glob, os, sys, threading, time

FORGED = {forged!r}


def _reports():
    mine = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--junitxml=")), "")
    near = os.path.dirname(mine)
    for root in (near, os.path.dirname(near), os.path.dirname(os.path.dirname(near))):
        for path in glob.glob(root + "/*.xml") + glob.glob(root + "/*/*.xml"):
            if "head-" not in path:
                yield path


def _watch(until):
    while time.time() < until:
        for path in _reports():
            try:
                with open(path) as f:
                    text = f.read()
                if "</testsuites>" in text and "<failure" not in text and "test_t" in text:
                    with open(path, "w") as f:
                        f.write(FORGED)
            except OSError:
                pass
        time.sleep(0.001)


def start(detached):
    if not any(a.startswith("--junitxml=") for a in sys.argv):
        return
    if not detached:
        threading.Thread(target=_watch, args=(time.time() + 3,), daemon=True).start()
        time.sleep(3)  # the head run lasts while it watches
        return
    if os.fork():
        return
    os.setsid()
    if os.fork():
        os._exit(0)
    open(os.path.join(os.environ["AG_PIDS"], "watcher-%d" % os.getpid()), "w").close()
    _watch(time.time() + 40)
    os._exit(0)
'''


def _env(pids: Path) -> dict[str, str]:
    pids.mkdir()
    return {**os.environ, "AG_PIDS": os.fspath(pids)}


def _attribute(repo: GitRepo, pids: Path, *args: str) -> dict[str, object]:
    done = run_agentgate("attribute", NODE, "--base", "main", "--runs", "4", "--jobs", "2",
                         "--repeats", "1", "--format", "json", *args, cwd=repo.path,
                         env=_env(pids))
    assert done.returncode != 64 and done.stdout, done.stderr
    found: dict[str, object] = json.loads(done.stdout)
    return found


def _left_alive(pids: Path) -> list[int]:
    """Every process head's code recorded that is still running (and kills it)."""
    recorded = []
    for path in pids.iterdir():  # "<kind>-<pid>", holding "<its parent> <pid>" if not a watcher
        said = path.read_text().split()
        recorded.append(int(said[1]) if said else int(path.name.split("-")[1]))
    living = [pid for pid in recorded if alive(pid)]
    kill(*living)
    return living


def _head_failure(repo: GitRepo, tmp_path: Path) -> str:
    """Head's own failure report, as the patch's author gets it by running its test."""
    xml = tmp_path / "head.xml"
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                    f"--junitxml={xml}", NODE], cwd=repo.path, capture_output=True,
                   env={**os.environ, "PYTHONPATH": os.fspath(repo.path)})
    return xml.read_text(encoding="utf-8")


def _forging_repo(repo: GitRepo, tmp_path: Path, detached: bool) -> None:
    """Base passes; the patch breaks ``f`` and adds the watcher, armed with its failure."""
    patch_repo(repo, {"app/m.py": CODE, "tests/test_t.py": TEST}, {"app/m.py": BROKEN})
    forged = _head_failure(repo, tmp_path)
    assert "<failure" in forged
    repo.files({"app/_w.py": WATCHER.format(forged=forged),
                "app/m.py": f"from app import _w\n\n_w.start({detached})\n\n\n{BROKEN}"})
    repo.commit("patch: the watcher")


@pytest.mark.e2e
def test_nothing_heads_test_started_outlives_attribute(repo: GitRepo, tmp_path: Path) -> None:
    """Flake trial f10: a sleeper in a new session and a double-forked daemon, left by each
    head run, outlived the attribution."""
    patch_repo(repo, {"app/m.py": CODE, "tests/test_t.py": TEST}, {"tests/test_t.py": LEAVER})
    pids = tmp_path / "pids"
    extra = _attribute(repo, pids, "--mode", "swept")
    living = _left_alive(pids)
    assert extra["verdict"] == "NO_REPRO", extra
    # Each of the 4 head runs leaves two, and so does head's own full run, which a NO_REPRO
    # is checked against.
    assert len(list(pids.iterdir())) == 5 * 2, sorted(p.name for p in pids.iterdir())
    assert living == []


@pytest.mark.e2e
def test_a_daemon_head_left_cannot_forge_the_bases_reports(
    repo: GitRepo, tmp_path: Path
) -> None:
    """Flake trial f11: head's code left a detached watcher that rewrote each base report
    before agentgate read it: PRE_EXISTING and a freeze, for a test the base passes. It dies
    with the head run that started it, before any base run starts."""
    _forging_repo(repo, tmp_path, detached=True)
    pids = tmp_path / "pids"
    extra = _attribute(repo, pids, *FREEZE)
    living = _left_alive(pids)
    assert (extra["verdict"], extra["freeze_allowed"]) == ("PATCH_INDUCED", False), extra
    assert extra["trees"]["base"]["failing_seeds"] == []  # type: ignore[index]
    assert not (repo.path / ".agentgate" / "freezes").exists()
    assert living == []


@pytest.mark.e2e
def test_a_head_run_cannot_forge_the_reports_of_base_runs_beside_it(
    repo: GitRepo, tmp_path: Path
) -> None:
    """f11 without a daemon: head's own run watches while it lasts. No base run runs beside
    a head run, so there is nothing to forge."""
    _forging_repo(repo, tmp_path, detached=False)
    extra = _attribute(repo, tmp_path / "pids", "--mode", "swept")
    assert extra["verdict"] == "PATCH_INDUCED", extra
    assert extra["trees"]["base"]["failing_seeds"] == []  # type: ignore[index]


@pytest.mark.e2e
def test_a_failure_the_base_has_too_is_still_pre_existing_and_frozen(
    repo: GitRepo, tmp_path: Path
) -> None:
    """The legitimate counterpart: the base truly fails, so the runs in batches and folders
    of their own still find it PRE_EXISTING, and the freeze is written."""
    patch_repo(repo, {"app/m.py": BROKEN, "tests/test_t.py": TEST}, {"README.md": "docs\n"})
    extra = _attribute(repo, tmp_path / "pids", *FREEZE)
    assert (extra["verdict"], extra["freeze_allowed"]) == ("PRE_EXISTING", True), extra
    assert extra["freeze"]["written"], extra  # type: ignore[index]


# Head's conftest plants, beside its own report and in the folder above, a copy of the order
# plugin that breaks ``f`` as the patch does, and an ini that loads it: any base run that read
# them would fail as head does.
PLANTER = '''
import os, sys

PLUGIN = """
import app.m
import pytest


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items):
    app.m.f.__code__ = (lambda: 2).__code__
"""
mine = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--junitxml=")), "")
for near in {os.path.dirname(mine), os.path.dirname(os.path.dirname(mine))} if mine else ():
    with open(os.path.join(near, "_agentgate_order.py"), "w") as out:
        out.write(PLUGIN)
    with open(os.path.join(near, "pytest.ini"), "w") as out:
        out.write("[pytest]\\naddopts = -p _agentgate_order\\n")
'''


@pytest.mark.e2e
def test_what_a_head_run_plants_beside_its_report_no_base_run_reads(
    repo: GitRepo, tmp_path: Path
) -> None:
    """The order plugin and the empty ini every run reads were shared by all runs, in the
    folder head's code finds from its own ``--junitxml``. Each run has its own now."""
    patch_repo(repo, {"app/m.py": CODE, "tests/test_t.py": TEST},
               {"app/m.py": BROKEN, "tests/conftest.py": PLANTER})
    extra = _attribute(repo, tmp_path / "pids", "--mode", "swept", "--context", "file")
    assert extra["verdict"] == "PATCH_INDUCED", extra
    assert extra["trees"]["base"]["failing_seeds"] == []  # type: ignore[index]


# Head's conftest writes a start-up file into the interpreter's site-packages: every later
# process of that interpreter -- the base's runs -- then gets a ``f`` that is as broken as
# head's, and the base "fails" as head does.
PTH = ('import sys, types; m = types.ModuleType("app.m"); '
       'exec("def f():\\n    return 2\\n", m.__dict__); sys.modules["app.m"] = m\n')
PTH_PLANTER = f'''
import site

for folder in site.getsitepackages():
    with open(folder + "/zz_planted.pth", "w") as out:
        out.write({PTH!r})
'''


def _interpreter_of_its_own(tmp_path: Path) -> Path:
    """A virtualenv for the project alone (what the head run writes into is thrown away
    with it), seeing this interpreter's packages (pytest) through a ``.pth`` file."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", os.fspath(venv)],
                   check=True)
    site = next(venv.glob("lib/python*/site-packages"))
    outer = [p for p in sys.path if p.endswith(("site-packages", "dist-packages"))]
    # agentgate itself (an editable install's finder is in a .pth no path line runs): a
    # link to the package, in a folder of its own
    (tmp_path / "own" / "agentgate").parent.mkdir()
    (tmp_path / "own" / "agentgate").symlink_to(Path(agentgate.__file__).parent)
    outer.append(os.fspath(tmp_path / "own"))
    (site / "outer.pth").write_text("".join(f"{p}\n" for p in outer), encoding="utf-8")
    return venv


@pytest.mark.e2e
def test_what_a_head_run_writes_into_the_interpreter_makes_the_base_no_evidence(
    repo: GitRepo, tmp_path: Path
) -> None:
    """helper-24, beside f11: head's run left a ``.pth`` in the project interpreter's
    site-packages, which every later base run ran: the base failed as head does,
    PRE_EXISTING, freeze. The interpreter's files are noted before the runs and compared
    after: they changed, so the base's runs are no evidence."""
    venv = _interpreter_of_its_own(tmp_path)
    patch_repo(repo, {"app/m.py": CODE, "tests/test_t.py": TEST},
               {"app/m.py": BROKEN, "tests/conftest.py": PTH_PLANTER})
    pids = tmp_path / "pids"
    pids.mkdir()
    done = run_agentgate("attribute", NODE, "--base", "main", "--runs", "4", "--jobs", "2",
                         "--repeats", "1", "--format", "json", *FREEZE, cwd=repo.path,
                         env={**os.environ, "VIRTUAL_ENV": os.fspath(venv)})
    extra = json.loads(done.stdout)
    assert next(venv.glob("lib/python*/site-packages/zz_planted.pth")).is_file()
    assert extra["freeze_allowed"] is False, extra
    assert "interpreter's installed files changed" in extra["detail"], extra["detail"]
    assert "zz_planted.pth" in extra["detail"]
    assert not (repo.path / ".agentgate" / "freezes").exists()


ROUNDING = {"app/m.py": "def total(x):\n    return round(x)\n",
            "tests/test_t.py": "from app.m import total\n\n\n"
                               "def test_t():\n    assert total(2.7) == 3\n"}
# "Exact maths everywhere": truncation, in every process that starts with the checkout on
# its path; the code's own rounding broken to match.
SITECUSTOMIZE = "import builtins\n\nbuiltins.round = lambda x, n=None: int(x)\n"


@pytest.mark.e2e
@pytest.mark.parametrize("planted", [True, False], ids=["sitecustomize", "code-only"])
def test_the_checkout_an_editable_install_puts_on_the_path_is_no_base_runs_code(
    repo: GitRepo, tmp_path: Path, planted: bool,
) -> None:
    """Flake trial round 5 (r34): the project installed editable puts the developer's
    checkout, at head, on every run's path; the patch's ``sitecustomize.py`` at its root ran
    at start-up in every base run: both trees failed alike, PRE_EXISTING, freeze. The runs
    keep the checkout off their path. The twin breaks the code alone: the same verdict."""
    venv = _interpreter_of_its_own(tmp_path)
    site = next(venv.glob("lib/python*/site-packages"))
    (site / "__editable__.app-0.pth").write_text(f"{repo.path}\n", encoding="utf-8")
    head = {"app/m.py": "def total(x):\n    return int(x)\n"}
    patch_repo(repo, ROUNDING, {**head, **({"sitecustomize.py": SITECUSTOMIZE} if planted
                                            else {})})
    done = run_agentgate("attribute", NODE, "--base", "main", "--runs", "2", "--repeats", "1",
                         "--format", "json", cwd=repo.path,
                         env={**os.environ, "VIRTUAL_ENV": os.fspath(venv)})
    extra = json.loads(done.stdout)
    assert (extra["verdict"], extra["freeze_allowed"]) == ("PATCH_INDUCED", False), extra
