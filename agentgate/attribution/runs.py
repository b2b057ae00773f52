"""Running one test in one tree under one seed, many times and in parallel.

Each run is ``python -m pytest`` in the tree's worktree with ordering and rerun plugins off
(a rerun-to-green hides exactly what attribution looks for), pinned ``TZ``/``LC_ALL``/
``PYTHONHASHSEED``, and the tree's own source roots first on ``PYTHONPATH`` so the tree's code
is what gets imported: ``PYTHONPATH`` precedes site-packages and every path an editable
install's ``.pth`` adds, and ``PYTHONNOUSERSITE`` keeps the user's site out. ``--rootdir``,
``--confcutdir`` and an explicit ``-c`` stop pytest from walking up out of the worktree (it
lives inside the main checkout's git dir) into the main checkout's config and conftest.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from agentgate.core.config import option_words, pytest_option
from agentgate.core.errors import ConfigError
from agentgate.run import inifile, interp, process
from agentgate.run.junit import Outcome, read_outcome

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from agentgate.core.config import Config

PLUGINS_OFF = ("randomly", "rerunfailures", "flaky", "xdist")
# pytest's cache stays loaded (its ``cache`` fixture is a test's input: flake trial round 3,
# "fixture 'cache' not found" on both trees was PRE_EXISTING), in each run's own home:
# pytest expands the variable with the run's environment.
CACHE_DIR = ("-o", "cache_dir=$HOME/.pytest_cache")
# With pytest-xdist installed the runs keep it loaded and say ``-n 0`` instead: a project's
# ``addopts = -n 2`` is then one process, where ``-p no:xdist`` made ``-n`` an unknown
# option and every run a usage error (flake trial).
XDIST_OFF = ("-n", "0")
RANDOMLY_KEEP_ORDER = "--randomly-dont-reorganize"
ORDER_PLUGIN = "_agentgate_order"
ORDER_SEED_ENV = "AGENTGATE_ORDER_SEED"
# --context file: each test's place depends only on (seed, its own id), so the tests both
# trees share run in the same relative order even when the patch adds or removes tests.
_ORDER_PLUGIN_SOURCE = '''\
"""Written by agentgate attribute --context file: a seeded order for the file's tests."""
import hashlib
import os

import pytest


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items):
    seed = os.environ.get("AGENTGATE_ORDER_SEED")
    if seed is not None:
        items.sort(key=lambda item: hashlib.sha256(f"{seed}\\0{item.nodeid}".encode()).digest())
'''


IDENTITY_PLUGIN = "_agentgate_identity"
_IDENTITY_PLUGIN_SOURCE = '''\
"""Written by agentgate attribute: what each test is beside its id, its parameters' values
and its function's source, so the two trees' runs of one id are known to be one test."""
import hashlib
import inspect
import re

import pytest

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_LINE = re.compile(r", line [0-9]+")


def _stable(value, depth=0):
    if depth > 4:
        return "..."
    if isinstance(value, (set, frozenset)):
        return "{" + ", ".join(sorted(_stable(v, depth + 1) for v in value)) + "}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_stable(k, depth + 1)}: {_stable(v, depth + 1)}"
                               for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_stable(v, depth + 1) for v in value) + "]"
    code = getattr(value, "__code__", None)
    if hasattr(code, "co_code"):  # a function: what it does, not where it sits
        body = _LINE.sub("", _ADDRESS.sub("", repr((code.co_code, code.co_names,
                                                     code.co_consts))))
        body_digest = hashlib.sha256(body.encode("utf-8", "replace")).hexdigest()[:12]
        return f"<function {getattr(value, '__qualname__', '?')} {body_digest}>"
    try:
        text = repr(value)
    except Exception:
        return type(value).__qualname__
    if _ADDRESS.search(text):
        # The default repr says its type alone: two objects of one class were one identity
        # (flake trial round 5: a parameter's 20% rate at the base, the patch's 7% at head).
        state = getattr(value, "__dict__", None)
        if not isinstance(state, dict):
            state = {n: getattr(value, n, None) for c in type(value).__mro__
                     for n in getattr(c, "__slots__", ()) if isinstance(n, str)}
        if state:
            ordered = dict(sorted(state.items(), key=lambda kv: str(kv[0])))
            return f"{type(value).__qualname__}({_stable(ordered, depth + 1)})"
    return _ADDRESS.sub("", text)


# The options and markers of the plugins the runs turn off (``-p no:NAME``), so a project
# configuration naming them still parses: ``addopts = --reruns 2``, ``@pytest.mark.flaky``
# or ``xdist_group`` under ``--strict-markers`` (flake trial round 4: every run a usage or
# collection error, a real pre-existing failure "fix the harness"). They do nothing here.
_STUBS = {
    "rerunfailures": ((("--reruns",), {"type": int}), (("--reruns-delay",), {"type": float}),
                      (("--only-rerun",), {"action": "append"}),
                      (("--rerun-except",), {"action": "append"}),
                      (("--fail-on-flaky",), {"action": "store_true"})),
    "flaky": ((("--force-flaky",), {"action": "store_true"}), (("--max-runs",), {"type": int}),
              (("--min-passes",), {"type": int}),
              (("--no-flaky-report",), {"action": "store_true"}),
              (("--no-success-flaky-report",), {"action": "store_true"})),
    "xdist": ((("-n", "--numprocesses"), {}), (("--maxprocesses",), {}), (("--dist",), {}),
              (("--max-worker-restart",), {}), (("--tx",), {"action": "append"}),
              (("-d", "--distload"), {"action": "store_true"})),
}
_MARKERS = {"rerunfailures": ("flaky",), "flaky": ("flaky",), "xdist": ("xdist_group",)}


def _off(pluginmanager):
    return [name for name in _STUBS if pluginmanager.is_blocked(name)]


def pytest_addoption(parser, pluginmanager):
    group = parser.getgroup("agentgate-off", "options of plugins agentgate attribute turns off")
    for name in _off(pluginmanager):
        for names, kwargs in _STUBS[name]:
            try:
                group._addoption(*names, dest=f"agentgate_off_{name}_{names[-1].strip('-')}",
                                 **kwargs)
            except Exception:  # a plugin of the same option name is loaded after all
                pass


def pytest_configure(config):
    for name in _off(config.pluginmanager):
        for marker in _MARKERS.get(name, ()):
            config.addinivalue_line("markers", f"{marker}: turned off by agentgate attribute")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items):
    for item in items:
        parts = []
        callspec = getattr(item, "callspec", None)
        if callspec is not None:
            parts.append(_stable(dict(sorted(callspec.params.items()))))
        try:
            parts.append(inspect.getsource(getattr(item, "function")))
        except Exception:
            pass
        if parts:
            digest = hashlib.sha256("\\0".join(parts).encode("utf-8", "replace")).hexdigest()
            item.user_properties.append(("agentgate-identity", digest[:12]))
'''


@dataclass(frozen=True)
class Tree:
    """One checked-out revision the test runs in."""

    name: str  # "base", "head" or "reverted"
    sha: str
    path: Path
    inifile: Path  # the pytest config file pytest would find in the tree, or an empty one


@dataclass(frozen=True)
class Harness:
    """Everything every run shares."""

    config: Config  # sources and pinned TZ / LC_ALL
    python: str
    nodeid: str
    scratch: Path  # each run's folder (``RunFolder``)
    timeout: float
    context: str = "alone"  # or "file": run the whole file in a seeded order
    xdist: bool = False  # the project's interpreter has pytest-xdist (``XDIST_OFF``)


@dataclass(frozen=True)
class Run:
    tree: str
    seed: int
    stage: str  # "swept", "matched" or "reverted"
    attempt: int = 0

    @property
    def label(self) -> str:
        return f"{self.tree}-{self.stage}-{self.seed}-{self.attempt}"


@dataclass(frozen=True)
class RunRecord:
    run: Run
    outcome: Outcome
    detail: str
    seconds: float


# --- the command line and environment of one run ------------------------------------------

def pytest_args(harness: Harness, tree: Tree, xml: Path) -> list[str]:
    """Arguments after ``python``: the same for every seed, so a shell loop can repeat them."""
    args = ["-m", "pytest"]
    words = _addopts(tree.inifile)
    spread = harness.xdist and distributes(words)
    # The project's addopts naming pytest-randomly's options need it loaded (flake trial
    # round 3: ``--randomly-seed=1234`` with ``-p no:randomly`` was a usage error in every
    # run); it keeps the order then, which is ours to decide.
    randomly = any(w.startswith("--randomly-") for w in words)
    for name in PLUGINS_OFF:
        if not (name == "xdist" and spread) and not (name == "randomly" and randomly):
            args += ["-p", f"no:{name}"]
    if spread:
        args += XDIST_OFF
    if randomly:
        args += [RANDOMLY_KEEP_ORDER]
    args += ["-p", IDENTITY_PLUGIN]
    if harness.context == "file":
        args += ["-p", ORDER_PLUGIN]
    args += [*CACHE_DIR,
        "-c", os.fspath(tree.inifile),
        "--rootdir", os.fspath(tree.path),
        "--confcutdir", os.fspath(tree.path),
        f"--junitxml={os.fspath(xml)}",
        "-q",
        target(harness),
    ]
    return args


def target(harness: Harness) -> str:
    return harness.nodeid.split("::")[0] if harness.context == "file" else harness.nodeid


_XDIST_OPTIONS = ("-n", "--numprocesses", "--dist", "-d", "--tx", "--maxprocesses")


def _addopts(inifile: Path) -> list[str]:
    """The tree's pytest ``addopts``, as words; none for a file that cannot be read."""
    try:
        texts: dict[str, str | None] = {inifile.name: inifile.read_text(encoding="utf-8")}
        return option_words(pytest_option(texts, "addopts"))
    except (OSError, UnicodeDecodeError, ConfigError):
        return []


def distributes(words: list[str]) -> bool:
    """Whether the tree's ``addopts`` give xdist's options (then ``-p no:xdist`` would make
    them unknown)."""
    return any(w in _XDIST_OPTIONS or w.startswith(tuple(f"{o}=" for o in _XDIST_OPTIONS))
               or (w.startswith("-n") and w[2:].isdigit()) for w in words)


# Each run's own home and temporary folder, as Bazel gives each test: what one run (or the
# developer's own earlier run at head) leaves under ``~`` or in ``$TMPDIR`` -- a cache, a
# config -- is no input to another. Shown with the pinned variables in reports and evidence.
FRESH = "(fresh per run)"
ISOLATED_ENV = {"HOME": FRESH, "TMPDIR": FRESH, "PYTHONPYCACHEPREFIX": FRESH}
_HOME_DERIVED = ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME",
                 "TEMP", "TMP", "PYTEST_DEBUG_TEMPROOT")
# The interpreter's switches a developer's shell may set and CI does not: they change what a
# run fails at on both trees alike (flake trial round 5: ``PYTHONWARNINGS=error::...`` failed
# both at a deprecated call before the patched code, and it was frozen).
_SHELL_ONLY = ("PYTHONWARNINGS", "PYTHONOPTIMIZE", "PYTHONDEVMODE", "PYTHONBREAKPOINT",
               "PYTHONFAULTHANDLER", "PYTHONTRACEMALLOC", "PYTHONASYNCIODEBUG")


def run_env(harness: Harness, tree: Tree, seed: int, folder: RunFolder) -> dict[str, str]:
    """``interp.test_env`` (pinned TZ/LC_ALL, the tree's sources first, no user site, git
    and pytest variables stripped) with this run's seed, isolated in the run's own home
    (``isolated``)."""
    env = isolated(interp.test_env(harness.config, tree.path, seed=seed), folder.home,
                   harness.config.root)
    # Last on the path: agentgate's plugins (the identity plugin, the order plugin) must
    # shadow nothing of the project's. Their folder holds nothing else: any module there (a
    # ``sitecustomize``) would be run.
    env["PYTHONPATH"] = os.pathsep.join([env["PYTHONPATH"], os.fspath(folder.plugins)])
    if harness.context == "file":
        env[ORDER_SEED_ENV] = str(seed)
    return env


# Run at start-up before anything of the project's (``isolated``): a run sees its own tree's
# code, never the developer's checkout, which an editable install puts on every run's path
# (flake trial round 5, r34: the patch's ``sitecustomize.py`` at the checkout's root ran in
# every base run). Then the interpreter's own ``sitecustomize``, if it has one, runs.
CHECKOUT_ENV = "AGENTGATE_CHECKOUT"
_BOOT_SOURCE = '''\
"""Written by agentgate attribute: the run's path holds its own tree, not the checkout."""
import importlib.util
import os
import sys


def _inside(path, folder):
    try:
        real = os.path.realpath(path or os.curdir)
    except (OSError, ValueError):
        return False
    return real == folder or real.startswith(folder + os.sep)


_here = os.path.dirname(os.path.realpath(__file__))
_checkout = os.environ.get("AGENTGATE_CHECKOUT")
if _checkout:
    _checkout = os.path.realpath(_checkout)
    # Kept: the runs' trees and folders (in the git folder), and the interpreter's own
    # (a virtualenv inside the checkout: ``.venv``).
    _kept = [os.path.join(_checkout, ".git"),
             *{os.path.realpath(p) for p in (sys.prefix, sys.exec_prefix, sys.base_prefix)}]
    sys.path[:] = [p for p in sys.path if not _inside(p, _checkout)
                   or any(_inside(p, k) for k in _kept)]
    def _into_checkout(hook):
        """An editable install's import hook mapping names into the checkout (setuptools
        keeps them in its finder module's MAPPING and NAMESPACES); another project's stays."""
        name = str(getattr(hook, "__module__", ""))
        if "editable" not in name.lower():
            return False
        module = sys.modules.get(name)
        paths = []
        for table in ("MAPPING", "NAMESPACES"):
            found = getattr(module, table, None)
            if isinstance(found, dict):
                for value in found.values():
                    paths.extend(value if isinstance(value, (list, tuple)) else [value])
        return any(isinstance(p, str) and _inside(p, _checkout) for p in paths)

    sys.meta_path[:] = [f for f in sys.meta_path if not _into_checkout(f)]
    sys.path_hooks[:] = [h for h in sys.path_hooks if not _into_checkout(h)]
    sys.path_importer_cache.clear()
for _entry in list(sys.path):
    _found = os.path.join(_entry or os.curdir, "sitecustomize.py")
    if not _inside(_entry, _here) and os.path.isfile(_found):
        _spec = importlib.util.spec_from_file_location("sitecustomize", _found)
        if _spec is not None and _spec.loader is not None:
            _module = importlib.util.module_from_spec(_spec)
            sys.modules["sitecustomize"] = _module
            _spec.loader.exec_module(_module)
        break
'''


def isolated(env: dict[str, str], home: Path, checkout: Path | None = None) -> dict[str, str]:
    """``env`` with ``home`` (empty, the run's own) as ``HOME`` and, in it, ``TMPDIR``; the
    XDG folders follow ``HOME``. Git's global configuration stays the user's (a test that
    commits needs an identity). ``checkout``: the developer's checkout, kept off the run's
    path by a start-up module in the run's home (``_BOOT_SOURCE``), last on ``PYTHONPATH``
    so a tree's own ``sitecustomize`` still wins. The one way every attribution run is
    isolated."""
    env = dict(env)
    if checkout is not None:
        boot = home / "boot"
        boot.mkdir(parents=True, exist_ok=True)
        (boot / "sitecustomize.py").write_text(_BOOT_SOURCE, encoding="utf-8")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, (env.get("PYTHONPATH"), os.fspath(boot))))
        env[CHECKOUT_ENV] = os.fspath(checkout)
    user_git = _user_git_config(env)
    for name in (*_HOME_DERIVED, *_SHELL_ONLY):
        env.pop(name, None)
    env["HOME"] = os.fspath(home)
    env["TMPDIR"] = os.fspath(home / "tmp")
    # Bytecode is read and written only there too: a ``.pyc`` planted in a tree's
    # ``__pycache__`` (flake trial round 3: head's code wrote one into the base's, stamped
    # to be trusted over the source) is never read.
    env["PYTHONPYCACHEPREFIX"] = os.fspath(home / "pycache")
    if user_git is not None:
        env["GIT_CONFIG_GLOBAL"] = user_git
    return env


def _user_git_config(env: Mapping[str, str]) -> str | None:
    """The global git configuration the user's git reads, if there is one."""
    home = env.get("HOME")
    if not home:
        return None
    xdg = env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    for candidate in (os.path.join(home, ".gitconfig"), os.path.join(xdg, "git", "config")):
        if os.path.isfile(candidate):
            return candidate
    return None


EMPTY_INI = "pytest.ini"


@dataclass(frozen=True)
class RunFolder:
    """One run's own files, in a folder made for it under a fresh random name and removed
    once its outcome is read: its home, JUnit XML and stderr, the empty ini and the order
    plugin it runs with. Nothing a run reads was left by an earlier run (flake trial f11:
    head's code learnt the shared scratch folder from its own ``--junitxml`` and rewrote the
    base's reports there; a planted plugin or ini would be run by the base the same way)."""

    path: Path

    @property
    def home(self) -> Path:
        return self.path / "home"

    @property
    def xml(self) -> Path:
        return self.path / "junit.xml"

    @property
    def err(self) -> Path:
        return self.path / "stderr"

    @property
    def plugins(self) -> Path:
        return self.path / "plugins"

    @property
    def ini(self) -> Path:
        return self.path / EMPTY_INI


def run_folder(harness: Harness, label: str) -> RunFolder:
    """A new folder for one run, written before it starts."""
    folder = RunFolder(Path(tempfile.mkdtemp(prefix=f"{label}-", dir=harness.scratch)))
    (folder.home / "tmp").mkdir(parents=True)
    folder.plugins.mkdir()
    (folder.plugins / f"{ORDER_PLUGIN}.py").write_text(_ORDER_PLUGIN_SOURCE, encoding="utf-8")
    (folder.plugins / f"{IDENTITY_PLUGIN}.py").write_text(_IDENTITY_PLUGIN_SOURCE,
                                                          encoding="utf-8")
    folder.ini.write_text("", encoding="utf-8")
    return folder


def prepare_scratch(harness: Harness) -> Path:
    """The path that stands for "no pytest config in the tree": each run is given an empty
    ini of its own in its place (``RunFolder.ini``)."""
    empty = harness.scratch / EMPTY_INI
    empty.write_text("", encoding="utf-8")
    return empty


def find_inifile(tree_path: Path, nodeid: str, empty: Path) -> Path:
    """The config file pytest would pick for the node, searching up to the tree root only."""
    return inifile.find_inifile(tree_path, (tree_path / nodeid.split("::")[0]).parent, empty)


# --- running many ------------------------------------------------------------------------

class Runner:
    """Runs pytest subprocesses from a thread pool; ``cancel`` kills every one still alive.

    Each run is a run of the caller's ``process.Session``: a process group of its own, so a
    timeout, or Ctrl-C in agentgate, kills the test's children too, and nothing a test
    started outlives the run, even outside its group.
    """

    def __init__(
        self, harness: Harness, trees: Mapping[str, Tree], session: process.Session
    ) -> None:
        self.harness = harness
        self.trees = dict(trees)
        self._session = session
        # (tree, seed) pairs a run of which hit the time limit: their other runs would wait
        # it out again (flake trial round 3: a hang cost every run the full limit, 3 h).
        self._timed_out: set[tuple[str, int]] = set()

    def run_one(self, run: Run) -> RunRecord:
        if (run.tree, run.seed) in self._timed_out:
            return RunRecord(run, Outcome.TIMEOUT, "not run again: this seed ran into the "
                             "time limit on this tree before", 0.0)
        folder = run_folder(self.harness, run.label)
        try:
            return self._run_in(run, folder)
        finally:
            shutil.rmtree(folder.path, ignore_errors=True)

    def _run_in(self, run: Run, folder: RunFolder) -> RunRecord:
        tree = self.trees[run.tree]
        if tree.inifile == self.harness.scratch / EMPTY_INI:
            tree = replace(tree, inifile=folder.ini)
        argv = [self.harness.python, *pytest_args(self.harness, tree, folder.xml)]
        env = run_env(self.harness, tree, run.seed, folder)
        # stderr goes to a file, not a pipe: a process the test left behind holding the pipe
        # open would otherwise make a finished run look hung.
        with folder.err.open("wb") as err:
            done = self._session.run(argv, cwd=tree.path, env=env,
                                     timeout=self.harness.timeout, stderr=err)
        if done.timed_out:
            self._timed_out.add((run.tree, run.seed))
            return RunRecord(run, Outcome.TIMEOUT, f"killed after {done.seconds:.0f} s",
                             done.seconds)
        stderr = folder.err.read_bytes()[-4000:].decode("utf-8", "replace")
        result = read_outcome(folder.xml, self.harness.nodeid, done.returncode, stderr)
        return RunRecord(run, result.outcome, result.detail, done.seconds)

    def cancel(self) -> None:
        self._session.cancel()

    def run_all(
        self,
        runs: Iterable[Run],
        *,
        jobs: int,
        on_done: Callable[[RunRecord], None] | None = None,
    ) -> list[RunRecord]:
        """Every run, a batch at a time (``batches``); records come back in the order of
        ``runs``. A batch is finished -- its runs ended, what they left killed
        (``process``), their outcomes read -- before the next starts."""
        records: list[RunRecord] = []
        pool = ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="attribute")
        try:
            for batch in batches(list(runs), jobs):
                records += self._run_batch(pool, batch, on_done)
        except BaseException:
            self.cancel()
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        return records

    def _run_batch(
        self, pool: ThreadPoolExecutor, batch: list[Run],
        on_done: Callable[[RunRecord], None] | None,
    ) -> list[RunRecord]:
        futures = [pool.submit(self.run_one, run) for run in batch]
        pending: set[Future[RunRecord]] = set(futures)
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                record = future.result()
                if on_done is not None:
                    on_done(record)
        return [future.result() for future in futures]


def batches(runs: list[Run], jobs: int) -> list[list[Run]]:
    """Consecutive runs of one tree, up to ``jobs`` of them: never two trees in a batch.

    Every tree but the base is the patch's code, written by whoever wants its failure
    frozen, and it knows where the base's runs are (flake trial f11: a head run, or a process
    it left, rewrote the base's reports while the base ran, and the patch's failure was
    PRE_EXISTING). So no code of the patch runs while a base run runs or while a base
    outcome is read: with batches run one after the other, a base run shares the machine
    only with base runs, and what a head run left is dead before the next batch starts.
    The callers still order the runs so that batches of the trees alternate, a few seeds
    at a time, so a slow spell of the machine still hits both trees alike."""
    found: list[list[Run]] = []
    for run in runs:
        last = found[-1] if found else None
        if last is not None and last[0].tree == run.tree and len(last) < max(1, jobs):
            last.append(run)
        else:
            found.append([run])
    return found
