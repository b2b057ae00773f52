"""pytest plugin: each test's outcome as agentgate itself saw it, not as the harness reports it.

A patch can make a red band look green without touching the code under test: a conftest
hookwrapper on ``pytest_runtest_makereport`` that turns a failure into a pass, a wrapper
around ``pytest_runtest_call`` that swallows the exception, ``__test__ = False``, a
``pytest_collection_modifyitems`` that deselects the test, or code that ends the process early
with status 0 (issue 11). JUnit XML and the exit status are what the harness chose to say.

This plugin records, per node id, what happened in setup, call and teardown from wrappers
registered ``trylast`` (the innermost wrappers: they see the exception before any wrapper
a conftest registers without ``trylast`` can swallow it), what pytest finally reported, which
tests were collected and deselected, and whether the session finished at all. agentgate reads
the file and accounts for every test it selected (``agentgate.run.accounting``).

Self-contained on purpose: stdlib and pytest only, no ``agentgate`` import, so the band can
load a copy of this file into the project's interpreter (``-p _agentgate_outcomes``) even when
agentgate is installed only in pre-commit's environment.

PYTEST_DONT_REWRITE: pytest would cache its rewrite of this file beside it, and a recording
that loads the cached copy sees code under the file name of the first run that wrote it, so
the recorder took this plugin for a library (mutation benchmark round 6: its reads of every
module's names were charged to every test). It holds no assertion to rewrite.
"""

from __future__ import annotations

import ast
import contextlib
import fnmatch
import importlib.util
import inspect
import json
import os
import sys
import time
import types
from collections.abc import Generator, Iterable, Iterator
from typing import Any

import pytest

OPTION = "--agentgate-outcomes"
FORMAT = 1
# One JSON line per event, appended and flushed as it happens, for a parent that tails the
# file to show progress (agentgate.run.progress): {"collected": N} once collection is done,
# then {"test": NODEID, "outcome": OUTCOME} as each test finishes (issue 13).
PROGRESS_OPTION = "--agentgate-progress"
# The state leaks alone, without the outcomes (``witness record``: the rest costs a recording
# 0.4 s on Markdown's 1,081 tests).
LEAKS_OPTION = "--agentgate-leaks"
# Run only the node ids listed in PATH (one a line) of what the arguments collect: an id the
# tree does not have is simply absent, where naming it as an argument would end the run.
ONLY_OPTION = "--agentgate-only"
# A folder given only for its conftest (``run.band``): pytest walks it, loading each
# conftest there as the whole suite's run does, and collects none of its files but those
# the arguments name.
HARNESS_OPTION = "--agentgate-harness-dir"
# A folder whose tests a conftest collects from files that are not Python (its
# ``pytest_collect_file``: JSON cases, Markdown examples; ``run.band``): pytest walks it and
# collects every such file there, and none of its Python files but those the arguments name.
ITEMS_OPTION = "--agentgate-items-dir"
# The selected files and node ids of a band run whose arguments are their top folders
# (``run.band``): pytest walks those folders as the whole suite's run does, collecting only
# these and loading each folder's conftests on the way.
SELECT_OPTION = "--agentgate-select"
# A JSON file of node ids: {"select": [...], "deselect": [...]} (``run.band``'s runner puts
# ``SELECT_OPTION``'s and ``--deselect``'s there: pytest parses thousands of repeated options
# in quadratic time). Deselected as ``--deselect`` does: a node id and what is under it.
NODES_OPTION = "--agentgate-nodes"
_KEY = pytest.StashKey["Outcomes"]()
WORKER_KEY = "agentgate_outcomes"  # in an xdist worker's workeroutput
_PHASES = ("setup", "call", "teardown")


# --- process state one test leaves for the next (``process_state``) -----------------------------
# Code under test that changes what every later test in the process sees -- the decimal
# context's precision, the locale, the working folder, an environment variable -- and does not
# put it back fails tests the band left out, in the full suite's order only (red-team: a patch
# set ``decimal.getcontext().prec = 4``; the band's tests passed and the full suite failed).
# The state is read around each test; what a test changed and left changed is its *leak*
# (``agentgate.run.leaks`` compares the head's leaks with those the witness saw at the base).
_VOLATILE_ENV = frozenset({b"PYTEST_CURRENT_TEST", "PYTEST_CURRENT_TEST"})
_LOCALE_CATEGORIES = ("LC_CTYPE", "LC_COLLATE", "LC_TIME", "LC_MONETARY", "LC_NUMERIC",
                      "LC_MESSAGES")
_SIGNALS = ("SIGINT", "SIGTERM", "SIGALRM", "SIGHUP", "SIGUSR1", "SIGUSR2", "SIGPIPE")
# The standard library's functions and classes that code patches in place of the real ones
# (``time.time = lambda: 0``, ``json.dumps = ...``, ``datetime.datetime = Frozen``): one
# left replaced changes them for every later test. Read by identity, only in modules
# already imported; pytest's ``monkeypatch`` and freezegun's context managers put them back.
_PATCHABLE = (
    ("builtins", ("open", "print", "input", "sorted", "round", "isinstance")),
    ("os", ("getcwd", "getenv", "listdir", "remove", "rename", "urandom", "walk", "stat")),
    ("os.path", ("exists", "isfile", "isdir", "join", "expanduser", "getmtime", "abspath")),
    ("time", ("time", "sleep", "monotonic", "perf_counter", "localtime", "gmtime",
              "strftime", "time_ns")),
    ("datetime", ("datetime", "date", "timedelta", "timezone")),
    ("random", ("random", "randint", "randrange", "choice", "choices", "shuffle", "sample",
                "uniform", "seed", "getrandbits")),
    ("json", ("dumps", "loads", "dump", "load", "JSONEncoder", "JSONDecoder")),
    ("subprocess", ("run", "Popen", "call", "check_call", "check_output")),
    ("socket", ("socket", "create_connection", "getaddrinfo", "gethostname")),
    ("uuid", ("uuid1", "uuid4")),
    ("shutil", ("rmtree", "copy", "copyfile", "move", "which")),
    ("tempfile", ("mkdtemp", "mkstemp", "gettempdir")),
    ("decimal", ("Decimal", "getcontext", "localcontext")),
    ("math", ("floor", "ceil", "isclose", "sqrt")),
    ("sys", ("exit", "excepthook", "displayhook")),
)
_PATCH_KEYS = tuple((name, tuple((f"{name}.{a}", a) for a in attributes))
                    for name, attributes in _PATCHABLE)


def process_state(*, imports: bool = True) -> dict[str, object]:
    """The process-wide state a library keeps for every caller, each value comparable with
    ``==``; the environment is one entry (``env``) until two readings differ, and so is
    ``sys.modules``. Cheap enough to read three times per test (about 7 us, and the copy of
    ``sys.modules``): modules nobody imported are not imported here, and the locale and
    signal queries are the C ones. ``imports``: also the import system's state (not around
    collection, where pytest puts the test folders on ``sys.path`` itself)."""
    state: dict[str, object] = {}
    if imports:
        # A module replaced or taken out (``sys.modules["app.tax"] = stub``), a folder put
        # on the path, a finder or a path hook added: later tests import something else.
        state["sys.modules"] = dict(sys.modules)
        # Less this plugin's own folder (``band.install_outcomes_plugin``): a scratch folder
        # whose place differs from run to run, so no two runs' values compared equal.
        state["sys.path"] = tuple(p for p in sys.path if p != _OWN_FOLDER)
        state["sys.meta_path"] = tuple(sys.meta_path)
        state["sys.path_hooks"] = tuple(sys.path_hooks)
    try:
        state["cwd"] = os.getcwd()
    except OSError:
        state["cwd"] = None
    mask = os.umask(0o022)
    os.umask(mask)
    state["umask"] = oct(mask)
    environ = getattr(os.environ, "_data", None)  # bytes to bytes: copied without decoding
    state["env"] = dict(environ) if isinstance(environ, dict) else dict(os.environ)
    state["sys.recursionlimit"] = sys.getrecursionlimit()
    state["sys.switchinterval"] = sys.getswitchinterval()
    digits = getattr(sys, "get_int_max_str_digits", None)
    if digits is not None:
        state["sys.int_max_str_digits"] = digits()
    state["time.tzname"] = tuple(time.tzname)
    modules = sys.modules
    decimal = modules.get("decimal")
    if decimal is not None:
        with contextlib.suppress(Exception):  # left out, never the test's error
            ctx = decimal.getcontext()
            for name in ("prec", "rounding", "Emin", "Emax", "capitals", "clamp"):
                state[f"decimal.{name}"] = getattr(ctx, name)
            state["decimal.traps"] = dict(ctx.traps)
    locale = modules.get("_locale") if "locale" in modules else None  # C: no wrapper frames
    if locale is not None:
        with contextlib.suppress(Exception):  # left out, never the test's error
            for name in _LOCALE_CATEGORIES:
                category = getattr(locale, name, None)
                if category is not None:
                    state["locale." + name] = locale.setlocale(category, None)
    socket = modules.get("socket")
    if socket is not None:
        state["socket.defaulttimeout"] = socket.getdefaulttimeout()
    logging = modules.get("logging")
    if logging is not None:
        root = logging.getLogger()
        state["logging.root.level"] = root.level
        state["logging.disable"] = getattr(root.manager, "disable", None)
    signal = modules.get("_signal")  # ``signal.getsignal`` less its enum wrapping: 10x cheaper
    if signal is not None:
        with contextlib.suppress(Exception):
            for name in _SIGNALS:
                number = getattr(signal, name, None)
                if number is not None:
                    state["signal." + name] = signal.getsignal(number)
    request = modules.get("urllib.request")
    if request is not None:
        state["urllib.request.opener"] = getattr(request, "_opener", None)
    for name, keys in _PATCH_KEYS:
        module = modules.get(name)
        if module is not None:
            namespace = _namespace(module)
            if type(namespace) is dict:  # a module's own: no attribute hook runs
                for key, attribute in keys:
                    state[key] = namespace.get(attribute)
    numpy = modules.get("numpy")
    if numpy is not None:
        with contextlib.suppress(Exception):  # left out, never the test's error
            state["numpy.errstate"] = tuple(sorted(numpy.geterr().items()))
            state["numpy.printoptions"] = repr(sorted(numpy.get_printoptions().items()))
    return state


def _shown(value: object) -> str:
    """A value as a report shows it: a handler or an opener by its name."""
    if isinstance(value, dict):  # the decimal traps: those that are on
        value = sorted(getattr(k, "__name__", str(k)) for k, on in value.items() if on)
    elif value is not None and (callable(value) or not isinstance(
            value, (int, float, str, tuple, list))):
        name = getattr(value, "__qualname__", None) or type(value).__qualname__
        value = f"{getattr(value, '__module__', None) or '?'}.{name}"
    text = repr(value)
    for place in _RUN_FOLDERS:
        text = text.replace(place, "<tree>")
    return text[:80]


# The folder the run took place in (its invocation folder, resolved and not), longest first:
# a value is cut to 80 characters, so the folder is named before the cut; cut after, a tree
# under ``.git/agentgate/worktrees`` showed as ``'/tmp/x/.git/agen…`` where the checkout
# itself showed ``'<tree>'``, and a leak the base shared read as head's own.
_RUN_FOLDERS: list[str] = []
_OWN_FOLDER = os.path.dirname(os.path.abspath(__file__))


def _reading(*, imports: bool = True) -> dict[str, object]:
    """``process_state``, never an error of the test's: a reading that fails is one value,
    the same each time it fails the same way."""
    try:
        return process_state(imports=imports)
    except Exception as exc:  # whatever the state holds
        return {"process-state": f"unreadable ({type(exc).__name__})"}


def changed(before: dict[str, object], after: dict[str, object]) -> dict[str, str]:
    """What differs between two readings: key -> the later value, as text (an environment
    variable is ``env:NAME``; one that went is ``<unset>``)."""
    found: dict[str, str] = {}
    for key in [*after, *(k for k in before if k not in after)]:
        old, new = before.get(key), after.get(key)
        if old is new:  # most values are the very objects the last reading held
            continue
        if key == "sys.modules" and isinstance(old, dict) and isinstance(new, dict):
            # A module imported is no change; one replaced or taken out is, and so is an
            # entry no import made (``sys.modules["app.rates"] = stub``: a later test's
            # ``import app.rates`` gets the stub).
            replaced = _replaced(old, new)
            if replaced or len(new) != len(old):  # else the very same entries
                for name in replaced + _stubs(old, new):
                    found[f"sys.modules:{name}"] = (_shown(new[name]) if name in new
                                                    else "<removed>")
            continue
        if old == new:
            continue
        if key == "env" and isinstance(old, dict) and isinstance(new, dict):
            for name in old.keys() | new.keys():
                if name in _VOLATILE_ENV or old.get(name) == new.get(name):
                    continue
                text = name.decode("utf-8", "replace") if isinstance(name, bytes) else name
                value = new.get(name)
                shown = (value.decode("utf-8", "replace") if isinstance(value, bytes)
                         else value)
                found[f"env:{text}"] = "<unset>" if shown is None else str(shown)[:80]
            continue
        found[key] = _shown(new)
    return found


def _replaced(before: dict[Any, object], after: dict[Any, object]) -> list[str]:
    """The ``sys.modules`` entries of ``before`` that ``after`` holds another object for, or
    none: by identity, after a comparison in C that says nothing changed (almost always)."""
    with contextlib.suppress(Exception):  # an entry's own ``__eq__``
        if before.items() <= after.items():
            return []
    return sorted(str(n) for n, m in before.items() if after.get(n) is not m)


def _stubs(before: dict[Any, object], after: dict[Any, object]) -> list[str]:
    """The entries ``after`` adds that the import system did not make: no module spec of
    that name (a stub module, a mock, an alias)."""
    found = []
    for name in after.keys() - before.keys():
        spec: object = None
        with contextlib.suppress(Exception):  # a mock's or a proxy's own attribute hook
            spec = getattr(after[name], "__spec__", None)
        if getattr(spec, "name", None) != name:
            found.append(str(name))
    return sorted(found)


# Start-up, before the session's own plugin exists: pytest's parts as this plugin found them
# when it was registered (``-p``, before any conftest or what it imports), and the plugins
# registered since, each with the frames that registered it (``_registrar``).
_EARLY: dict[str, Any] = {}


# Profile and trace hooks set before the tests run (``_hook_setter``): (event, frame files).
_HOOKS_SET: list[tuple[str, list[str]]] = []
_COLLECTED = {"done": False}


def _hook_setter(event: str, _args: tuple[object, ...]) -> None:
    """An audit hook: who sets a profile or trace function while conftests and test modules
    import (red-team round 7: code under test set a profile hook at its import that fired
    as the importing test module's top level returned, and rebound an ``import ... as``
    alias, a method of a test class, the module's case list). Judged once collection ends
    (``Outcomes._hooks_set``): a test that sets one while it runs is its own business."""
    if event not in _HOOK_EVENTS or _COLLECTED["done"] or len(_HOOKS_SET) > 50:
        return
    _HOOKS_SET.append((event, list(_frame_files(sys._getframe(1)))))


_HOOK_EVENTS = frozenset(("sys.setprofile", "sys.settrace"))


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    if not _EARLY:  # once a process: an audit hook is never removed
        sys.addaudithook(_hook_setter)
    _EARLY.clear()
    _EARLY.update(manager=pluginmanager, pins=_pins(pluginmanager), registered=[])
    parser.getgroup("agentgate").addoption(
        OPTION, dest="agentgate_outcomes", default=None, metavar="PATH",
        help="agentgate: write each test's raw and reported outcome to PATH (JSON)",
    )
    parser.getgroup("agentgate").addoption(
        LEAKS_OPTION, dest="agentgate_leaks", default=None, metavar="PATH",
        help="agentgate: write the process state each test left changed to PATH (JSON)",
    )
    parser.getgroup("agentgate").addoption(
        ONLY_OPTION, dest="agentgate_only", default=None, metavar="PATH",
        help="agentgate: of the collected tests, run only the node ids listed in PATH",
    )
    parser.getgroup("agentgate").addoption(
        HARNESS_OPTION, dest="agentgate_harness_dirs", action="append", default=[],
        metavar="DIR", help="agentgate: load DIR's conftests, collect none of its files "
        "but those given as arguments",
    )
    parser.getgroup("agentgate").addoption(
        SELECT_OPTION, dest="agentgate_select", action="append", default=[],
        metavar="NODEID", help="agentgate: in the folders given as arguments, collect only "
        "NODEID (a file or a node id) and what other files this option names",
    )
    parser.getgroup("agentgate").addoption(
        NODES_OPTION, dest="agentgate_nodes", default=None, metavar="PATH",
        help="agentgate: node ids to select and to deselect, as JSON in PATH",
    )
    parser.getgroup("agentgate").addoption(
        ITEMS_OPTION, dest="agentgate_items_dirs", action="append", default=[],
        metavar="DIR", help="agentgate: collect DIR's files that are not Python, and none of "
        "its Python files but those given as arguments",
    )
    parser.getgroup("agentgate").addoption(
        PROGRESS_OPTION, dest="agentgate_progress", default=None, metavar="PATH",
        help="agentgate: append one JSON line to PATH as each test finishes (progress)",
    )


def pytest_ignore_collect(collection_path: Any, config: pytest.Config) -> bool | None:
    """A file inside a folder given only for its conftests, and not named by an argument,
    is not collected (``HARNESS_OPTION``); folders are walked, so their conftests load. In
    a folder given for its non-Python items (``ITEMS_OPTION``) a file that is not Python is
    left to the collectors."""
    harness = config.stash.get(_HARNESS_KEY, None)
    if harness is None:
        harness = config.stash[_HARNESS_KEY] = _walk_rules(config)
    walked, items, named, ways = harness
    path = os.path.normpath(str(collection_path))
    if ways is not None:  # a walk of selected files (``SELECT_OPTION``)
        if os.path.isdir(path):
            on_way = path in ways or any(os.path.join(path, "").startswith(f) for f in walked)
            return None if on_way else True
        if path in named or (not path.endswith(".py") and any(path.startswith(f)
                                                              for f in items)):
            return None
        return True
    if not walked and not items:
        return None
    if path in named or os.path.isdir(path):
        return None
    if not path.endswith(".py") and any(path.startswith(f) for f in items):
        return None  # the collectors' to take
    return True if any(path.startswith(f) for f in (*walked, *items)) else None


def _walk_rules(config: pytest.Config) -> tuple[list[str], list[str], set[str], set[str] | None]:
    """(folders walked for their conftests, folders of non-Python items, the files named,
    the folders on the way to a selected file or a walked folder: None without a
    selection), as absolute paths; folders end with a separator."""
    base = str(config.invocation_params.dir)

    def folders(dest: str) -> list[str]:
        dirs = config.getoption(dest, None) or []
        return [os.path.join(os.path.normpath(os.path.join(base, d)), "") for d in dirs]

    def files(values: Iterable[object]) -> set[str]:
        return {os.path.normpath(os.path.join(base, str(a).split("::", 1)[0])) for a in values}

    selected = files(_node_list(config, "select"))
    walked = folders("agentgate_harness_dirs")
    ways: set[str] | None = None
    if selected:
        ways = set()
        top = os.path.normpath(base)
        for start in (*(os.path.dirname(f) for f in selected), *(w.rstrip(os.sep) for w in walked)):
            folder = start
            while folder not in ways and len(folder) >= len(top):
                ways.add(folder)
                folder = os.path.dirname(folder)
    return walked, folders("agentgate_items_dirs"), files(config.args) | selected, ways


_HARNESS_KEY = pytest.StashKey[tuple[list[str], list[str], set[str], set[str] | None]]()


@pytest.hookimpl(wrapper=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> Generator[None, None, None]:
    """A band's run loads at start-up the conftests the whole suite's run loads at start-up
    (those of ``testpaths``, else of the root), not those of its arguments: pytest loads an
    argument's conftests before any test module is imported, where the whole suite loads a
    folder's when its walk reaches it, after the modules before it have imported the code
    (red-team round 7: a later folder's conftest set a mode the code reads at import, and
    the band tested another mode). The arguments' folders then load theirs as they are
    collected, in the order the band gives: pytest's walk order (pytest 8 and later load a
    collected folder's conftests; earlier ones do not, and keep their way)."""
    space = early_config.known_args_namespace
    given = list(getattr(space, "file_or_dir", None) or ())
    if not given or not getattr(space, "agentgate_outcomes", None) or int(
            pytest.__version__.split(".", 1)[0]) < 8:
        return (yield)
    space.file_or_dir = []
    try:
        return (yield)
    finally:
        space.file_or_dir = given


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    _selected_nodes(config, items)
    _deselected_nodes(config, items)
    path = config.getoption("agentgate_only", None)
    if not path:
        return
    with open(path, encoding="utf-8") as fh:
        wanted = set(fh.read().splitlines())
    drop = [item for item in items if item.nodeid not in wanted]
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = [item for item in items if item.nodeid in wanted]


def _node_list(config: pytest.Config, which: str) -> list[str]:
    """``SELECT_OPTION``'s node ids (``which`` "select") or none, and the ``NODES_OPTION``
    file's list of that name."""
    found = [str(s) for s in config.getoption("agentgate_select", None) or ()
             ] if which == "select" else []
    lists = config.stash.get(_NODES_KEY, None)
    if lists is None:
        path = config.getoption("agentgate_nodes", None)
        lists = {}
        if path:
            with open(path, encoding="utf-8", errors="surrogateescape") as fh:
                loaded = json.load(fh)
            lists = {k: [str(n) for n in v] for k, v in loaded.items() if isinstance(v, list)}
        config.stash[_NODES_KEY] = lists
    return [*found, *lists.get(which, ())]


_NODES_KEY = pytest.StashKey[dict[str, list[str]]]()


def _deselected_nodes(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The ``NODES_OPTION`` file's ``deselect`` node ids, as ``--deselect`` takes them: an
    item whose id is one, or lies under one (``::`` or ``[`` after it), does not run."""
    gone = set(_node_list(config, "deselect"))
    if not gone:
        return

    def under(nodeid: str) -> bool:
        return nodeid in gone or any(
            char in ":[" and nodeid[:cut] in gone for cut, char in enumerate(nodeid))

    drop = [item for item in items if under(item.nodeid)]
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = [item for item in items if not under(item.nodeid)]


def _selected_nodes(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Of a file selected by node ids (``SELECT_OPTION``), only those nodes' items run, as
    naming them on the command line ran them: the node itself, a class's or a function's
    items under it (``::``), a function's cases (``[``)."""
    chosen = _node_list(config, "select")
    whole = {s for s in chosen if "::" not in s}
    nodes: dict[str, list[str]] = {}
    for node in chosen:
        file = node.split("::", 1)[0]
        if "::" in node and file not in whole:
            nodes.setdefault(file, []).append(node)
    if not nodes:
        return

    def kept(nodeid: str) -> bool:
        wanted = nodes.get(nodeid.split("::", 1)[0])
        return wanted is None or any(
            nodeid == n or nodeid.startswith((f"{n}::", f"{n}[")) for n in wanted)

    drop = [item for item in items if not kept(item.nodeid)]
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = [item for item in items if kept(item.nodeid)]


def pytest_configure(config: pytest.Config) -> None:
    path = config.getoption("agentgate_outcomes")
    if path or config.getoption("agentgate_leaks"):
        here = str(config.invocation_params.dir)
        _RUN_FOLDERS[:] = sorted({p for p in (here, os.path.realpath(here)) if len(p) > 1},
                                 key=len, reverse=True)
    if path and hasattr(config, "workerinput"):  # an xdist worker: see WorkerOutcomes
        worker = WorkerOutcomes(config)
        config.pluginmanager.register(worker, "agentgate-outcomes-worker")
        config.pluginmanager.register(worker.state, "agentgate-state-leaks")
    elif path:
        outcomes = Outcomes(str(path))
        config.stash[_KEY] = outcomes
        config.pluginmanager.register(outcomes, "agentgate-outcomes")
        config.pluginmanager.register(outcomes.state, "agentgate-state-leaks")
    leaks = config.getoption("agentgate_leaks")
    if leaks and not path and not hasattr(config, "workerinput"):
        config.pluginmanager.register(LeaksFile(str(leaks)), "agentgate-state-leaks")
    feed = config.getoption("agentgate_progress")
    if feed and not hasattr(config, "workerinput"):
        config.pluginmanager.register(Feed(str(feed)), "agentgate-progress")


def phase_outcome(exc: BaseException | None) -> str:
    """What one phase ended with, from the exception itself (never from a report). A skip
    or an xfail the code under test raised is not the test's (``decided_by``): ``_phase``
    records that phase as failed."""
    if exc is None:
        return "passed"
    if _skip(exc):
        return "skipped"
    if isinstance(exc, pytest.xfail.Exception):
        return "xfailed"
    if isinstance(exc, pytest.exit.Exception | KeyboardInterrupt | SystemExit):
        return "exit"
    return "failed"


def _skip(exc: BaseException) -> bool:
    unittest = sys.modules.get("unittest")
    return isinstance(exc, pytest.skip.Exception) or (
        unittest is not None and isinstance(exc, unittest.SkipTest))  # pytest skips it too


# Where test-side code lives: the test's own file, files named as pytest collects tests
# (``python_files``, and pytest's defaults), conftests, and the folders of pytest's own
# layouts. Everything else of the tree is code under test.
_TEST_FOLDERS = frozenset({"test", "tests", "testing"})
# Not the project's code though inside the tree: installed libraries, and git's folder, where
# agentgate's own copy of this plugin runs when the band runs in the work tree itself.
_NOT_THE_TREE = frozenset({"site-packages", "dist-packages", ".venv", "venv", ".tox", ".nox",
                           ".git"})


def decided_by(exc: BaseException, item: pytest.Item) -> str | None:
    """The file of the tree, not test-side code, that was on the stack between the phase and
    the raise of a skip or an xfail, else None."""
    root = os.path.join(os.path.realpath(item.config.rootpath), "")
    own = os.path.realpath(item.path)
    plugin = os.path.realpath(__file__)
    patterns = ["test_*.py", "*_test.py", "conftest.py", *_python_files(item.config)]
    tb = exc.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if not name.startswith("<"):
            path = os.path.realpath(name)
            rel = path[len(root):]
            if (path.startswith(root) and path not in (own, plugin)
                    and not _test_side(rel, patterns)):
                return rel.replace(os.sep, "/")
        tb = tb.tb_next
    return None


def _test_code(item: pytest.Item) -> Any:
    """The code object of a test function item's function, or None (not a function)."""
    obj = item.__dict__.get("_obj") if isinstance(item, pytest.Function) else None
    func = getattr(obj, "__func__", obj)
    return getattr(func, "__code__", None)


def binds_pytestmark(path: str) -> bool:
    """Whether a module's source binds ``pytestmark`` at its top level (an assignment, an
    import, a ``for`` or ``with`` target, inside ``if``/``try`` too); a file that cannot be
    read or parsed is given the benefit of the doubt: pytest reported its own error."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
        if b"pytestmark" not in data:
            return False
        tree = ast.parse(data, path)
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return True
    return _binds(tree.body, "pytestmark")


def _binds(body: list[ast.stmt], name: str) -> bool:
    for stmt in body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            if any((a.asname or a.name) in (name, "*") for a in stmt.names):
                return True  # a star import may bring it (``from .marks import *``)
            continue
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if stmt.name == name:
                return True
            continue  # a function's or a class's own names are not the module's
        targets: list[ast.AST] = []
        if isinstance(stmt, ast.Assign):
            targets = list(stmt.targets)
        elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor)):
            targets = [stmt.target]
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            targets = [i.optional_vars for i in stmt.items if i.optional_vars is not None]
        if any(isinstance(n, ast.Name) and n.id == name for t in targets for n in ast.walk(t)):
            return True
        nested = [getattr(stmt, f, None) for f in ("body", "orelse", "finalbody")]
        nested += [h.body for h in getattr(stmt, "handlers", ())]
        if any(isinstance(b, list) and _binds(b, name) for b in nested):
            return True
    return False


def _python_files(config: pytest.Config) -> list[str]:
    try:
        return [str(p) for p in config.getini("python_files")]
    except (ValueError, TypeError):
        return []


def _side_patterns(config: pytest.Config) -> list[str]:
    """The file names of test-side code: pytest's test modules and conftests."""
    return ["test_*.py", "*_test.py", "conftest.py", *_python_files(config)]


# ``flows.test_side``'s words for a path that serves the tests (this plugin imports nothing
# of agentgate's; tests/run/test_state_leaks.py keeps the two the same). A fixture a test
# module star-imports from ``app/testing.py`` is the tests' own: if the patch loosens it,
# the base contract's helper rule lays the base's over it.
TEST_WORDS = frozenset(("fixture", "fixtures", "fake", "fakes", "mock", "mocks", "stub",
                        "stubs", "factories", "cases", "expected", "golden", "snapshots"))


def _named_for_tests(rel: str) -> bool:
    words = [w for part in rel.replace(os.sep, "/").removesuffix(".py").split("/")
             for w in part.replace("-", "_").replace(".", "_").split("_") if w]
    return any(w.lower().startswith("test") or w.lower() in TEST_WORDS for w in words)


def _test_side(rel: str, patterns: list[str]) -> bool:
    parts = rel.split(os.sep)
    if _NOT_THE_TREE.intersection(parts[:-1]) or _TEST_FOLDERS.intersection(parts[:-1]):
        return True  # a test folder, or an installed library inside the tree
    return any(fnmatch.fnmatch(parts[-1], p) for p in patterns)


# What runs a test and says how it ended, in pytest and pluggy: code under test that replaces
# one of them (``Function.runtest = lambda self: None`` at import) makes every test pass
# without running it. ``module:attribute`` or ``module:Class.attribute``, each as the
# module's or the class's own namespace holds it; a name this pytest lacks is skipped.
_PINNED = (
    "_pytest.python:Function.runtest", "_pytest.python:pytest_pyfunc_call",
    "_pytest.python:Function._getobj", "_pytest.python:PyobjMixin.obj",
    # Not ``TestCaseFunction.runtest``: pytest-django's class fixture replaces it for the
    # class's tests (``non_debugging_runtest``); ``TestCase.run``, which it calls, is pinned.
    "_pytest.doctest:DoctestItem.runtest",
    "_pytest.runner:call_and_report", "_pytest.runner:call_runtest_hook",
    "_pytest.runner:runtestprotocol", "_pytest.runner:CallInfo.from_call",
    "_pytest.reports:TestReport.from_item_and_call", "_pytest.outcomes:fail",
    "_pytest.outcomes:skip", "_pytest.outcomes:xfail", "pytest:fail", "pytest:skip",
    "pytest:xfail", "pytest:raises", "pytest:approx", "pluggy._callers:_multicall",
    "pluggy._execution:_multicall",  # pluggy 1.6
    "pluggy._hooks:HookCaller.__call__", "pluggy._manager:PluginManager._hookexec",
    # unittest-style tests: how they run, fail and assert
    "unittest.case:TestCase.run", "unittest.case:TestCase.fail",
    "unittest.case:TestCase.assertEqual", "unittest.case:TestCase._baseAssertEqual",
    "unittest.case:TestCase.assertTrue", "unittest.case:TestCase.assertFalse",
    "unittest.case:TestCase.assertRaises", "unittest.case:TestCase.assertIn",
    "unittest.case:TestCase._getAssertEqualityFunc",
    # How tests are collected, which marks skip or xfail them, how a failed assert is told,
    # and what a failed assert raises (red-team: a wrapped collector swapping each test's
    # code for a no-op; ``evaluate_skip_marks`` skipping it; ``AssertionError`` replaced by
    # a skip).
    "_pytest.python:PyCollector.collect", "_pytest.python:PyCollector._genfunctions",
    "_pytest.python:Module.collect", "_pytest.python:Class.collect",
    "_pytest.skipping:evaluate_skip_marks", "_pytest.skipping:evaluate_xfail_marks",
    "_pytest.assertion.util:format_explanation",
    "_pytest.assertion.rewrite:_format_explanation", "builtins:AssertionError",
)
# The hooks that run a test and report it: their callers and implementations are pinned too.
_PINNED_HOOKS = (
    "pytest_runtest_protocol", "pytest_runtest_setup", "pytest_runtest_call",
    "pytest_runtest_teardown", "pytest_runtest_makereport", "pytest_pyfunc_call",
    "pytest_runtest_logreport", "pytest_report_teststatus",
)
# Modules whose frames register plugins on pytest's behalf (conftests, ``-p``, entry points).
_MACHINERY = ("_pytest", "pytest", "pluggy")


def _pins(manager: Any) -> dict[str, object]:
    found: dict[str, object] = {}
    for spec in _PINNED:
        module_name, _, dotted = spec.partition(":")
        owner: Any = sys.modules.get(module_name)
        *path, name = dotted.split(".")
        for part in path:
            owner = getattr(owner, part, None)
        space = getattr(owner, "__dict__", None)
        if space is not None and name in space:
            found[spec] = space[name]
    for name in _PINNED_HOOKS:
        caller = getattr(manager.hook, name, None)
        if caller is not None:
            found[f"hook {name}"] = caller
    # What every hook call goes through (``add_hookcall_monitoring`` replaces it).
    found["the plugin manager's hook executor"] = getattr(manager, "_inner_hookexec", None)
    return found


def pytest_plugin_registered(plugin: object, manager: object) -> None:
    """A plugin registered at start-up (the session's ``Outcomes`` judges the rest): the
    frames that registered it, judged once the root is known (``Outcomes._startup``)."""
    if manager is _EARLY.get("manager") and not _EARLY.get("started"):
        _EARLY["registered"].append(_registrar(sys._getframe(1)))


def _registrar(frame: Any) -> tuple[list[str], bool]:
    """Who registered a plugin: the files of the frames between pytest's machinery that
    registers it and the machinery that ran them, and whether an import ran in between
    (code run by importing a module, not by a hook of a registered plugin)."""
    while frame is not None and _machinery(frame):
        frame = frame.f_back  # pluggy's register, pytest's, this hook's caller
    files: list[str] = []
    imported = False
    while frame is not None and not _machinery(frame):
        name = frame.f_code.co_filename
        if name.startswith("<"):
            imported = imported or "importlib" in name
        else:
            files.append(name)
        frame = frame.f_back
    return files, imported


def _frame_files(frame: Any) -> Iterator[str]:
    """The files of the frames from ``frame`` outwards, pytest's machinery and text that is
    no file (``<frozen ...>``, ``<string>``) left out."""
    while frame is not None:
        name = frame.f_code.co_filename
        if not name.startswith("<") and not _machinery(frame):
            yield name
        frame = frame.f_back


def _code_file(value: object) -> str | None:
    """The file a function (a method, a property's getter) was written in; None for
    anything with no code of its own (a builtin, a ``partial``) or text no file holds."""
    for attribute in ("__func__", "fget"):
        value = getattr(value, attribute, None) or value
    file = getattr(getattr(value, "__code__", None), "co_filename", None)
    return file if isinstance(file, str) and not file.startswith("<") else None


def _machinery(frame: Any) -> bool:
    name = str(frame.f_globals.get("__name__", ""))
    return name.split(".")[0] in _MACHINERY or name.startswith("_agentgate_outcomes")


class Outcomes:
    """Registered only when ``--agentgate-outcomes`` is given."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.tests: dict[str, dict[str, str]] = {}
        self.collected: list[str] = []
        self.deselected: list[str] = []
        self.finished = False
        self.exitstatus: int | None = None
        # How the code under test changed pytest in process, once the session began: a
        # plugin it registered, a part of pytest it replaced (``_check``).
        self.altered: list[str] = []
        self.manager: Any = None
        self._root = ""
        self._patterns: list[str] = []
        self._pins: dict[str, object] = {}
        self._codes: dict[str, Any] = {}  # node id -> its function's code, as collected
        self.state = StateLeaks()  # registered beside it (``pytest_configure``)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        config = session.config
        self.manager = config.pluginmanager
        self._root = os.path.join(os.path.realpath(config.rootpath), "")
        self._patterns = _side_patterns(config)
        self._pins = _pins(self.manager)
        self._startup()
        self._write()  # a file that says "not finished" until the session really ends

    def _startup(self) -> None:
        """What start-up changed, judged now that the root is known: a plugin registered by
        code under test run at its import (a root conftest imports ``app``, whose import
        finds the config through ``gc``), and pytest's parts replaced since this plugin was
        registered by code under test, or by something with no code of its own (``print``).
        A plugin project's hook that registers its own plugins, a conftest's, and an
        installed plugin's replacement are start-up's business."""
        _EARLY["started"] = True
        if _EARLY.get("manager") is not self.manager:
            return  # this module was registered in another session (pytester, in process)
        for files, imported in _EARLY.get("registered", ()):
            tree = self._in_tree(files)
            # Code under test that registered at its import, or called by test-side code (a
            # root conftest's ``pytest_configure`` calling ``app.setup(config)``); a plugin
            # project's own hook, called by pytest alone, registers its plugins.
            if tree and not tree[0][1] and (imported or any(side for _, side in tree[1:])):
                self._alter(f"{tree[0][0]} registered a pytest plugin at start-up")
        before: dict[str, object] = _EARLY.get("pins") or {}
        for spec, value in self._pins.items():
            if spec in before and before[spec] is not value and self._under_test(value):
                self._alter(f"{spec} was replaced at start-up")

    def _in_tree(self, files: Iterable[str]) -> list[tuple[str, bool]]:
        """Those of these files that are the tree's own (not an installed library inside
        it, nor git's folder), in order: (path relative to the root, whether test-side)."""
        found = []
        for name in files:
            rel = _tree_rel(name, self._root)
            if rel is not None:
                found.append((rel.replace(os.sep, "/"), _test_side(rel, self._patterns)))
        return found

    def _first_in_tree(self, files: Iterable[str]) -> str | None:
        """The first of these files in the tree, when it is code under test."""
        tree = self._in_tree(files)
        return tree[0][0] if tree and not tree[0][1] else None

    def _under_test(self, value: object) -> bool:
        """Whether a replacement made at start-up may be code under test's: anything but a
        function of an installed library (a plugin's) or of test-side code of the tree --
        code under test, the standard library's (``logging.debug``), text someone exec'd, or
        something with no code of its own to tell (``print``)."""
        file = _code_file(value)
        if file is None:
            return True
        parts = os.path.realpath(file).split(os.sep)
        if "site-packages" in parts or "dist-packages" in parts:
            return False
        return not self._test_side_code(value)

    def pytest_plugin_registered(self, plugin: object, manager: object) -> None:
        """A plugin registered once the session began, by code of the tree that is not
        test-side (``app/__init__.py`` finding pytest's config through ``gc`` at import and
        registering a wrapper that swallows failures): the tests' outcomes are that code's
        to say. A conftest registers through pytest, its own plugins from the conftest."""
        if manager is not self.manager or not self._root:
            return  # start-up (a plugin project's own plugins), or another session's
        who = self._first_in_tree(_frame_files(sys._getframe(1)))
        if who is not None:
            self._alter(f"{who} registered a pytest plugin")

    def _check(self, where: str) -> None:
        """Whether pytest's parts that run and report tests are still the ones the session
        began with, and every implementation of those hooks belongs to a registered plugin."""
        if self.altered or not self._pins:
            return
        if not self.manager.is_registered(self.state):
            # The state readings went (``StateLeaks``): a leak would go unseen.
            self._alter(f"agentgate's state readings were unregistered ({where})")
            return
        now = _pins(self.manager)
        for spec, value in self._pins.items():
            if now.get(spec) is value:
                continue
            if self._test_side_code(now.get(spec)):
                self._pins[spec] = now.get(spec)  # a conftest's own helper, say
                continue
            self._alter(f"{spec} was replaced ({where})")
            return
        registered = {id(p) for p in self.manager.get_plugins()}
        for name in _PINNED_HOOKS:
            caller = getattr(self.manager.hook, name, None)
            for impl in caller.get_hookimpls() if caller is not None else ():
                if id(impl.plugin) not in registered:
                    self._alter(f"{name} has an implementation no plugin registered ({where})")
                    return

    def _test_side_code(self, value: object) -> bool:
        """Whether a replacement is a function written in test-side code of the tree (a
        conftest's wrapper of ``pytest.approx``). Anything else -- code under test, a
        builtin, a ``partial``, a function of the standard library or a library -- is not:
        it may do nothing at all."""
        file = _code_file(value)
        tree = self._in_tree([file]) if file is not None else []
        return bool(tree) and tree[0][1]

    def _alter(self, what: str) -> None:
        if len(self.altered) < 5:
            self.altered.append(what)

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, None, None]:
        return (yield from self._phase(item, "setup"))

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        return (yield from self._phase(item, "call"))

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> Generator[None, None, None]:
        return (yield from self._phase(item, "teardown"))

    def _phase(self, item: pytest.Item, when: str) -> Generator[None, None, None]:
        entry = self.tests.setdefault(item.nodeid, {})
        entry[when] = "started"
        if when == "call":
            self._same_code(item)
        try:
            result = yield
        except BaseException as exc:
            if when == "teardown":
                self._check(item.nodeid)
            outcome = phase_outcome(exc)
            # Code under test that skips or xfails the tests reaching it (``if
            # "PYTEST_CURRENT_TEST" in os.environ: pytest.skip()``) hid a failure: the phase
            # failed, whatever the report says.
            by = decided_by(exc, item) if outcome in ("skipped", "xfailed") else None
            entry[when] = outcome if by is None else "failed"
            if by is not None:
                entry["hidden_by"] = f"{when}: {outcome} by {by}"
            raise
        if when == "teardown":
            self._check(item.nodeid)
        entry[when] = "passed"
        return result

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        entry = self.tests.setdefault(report.nodeid, {})
        entry["reported"] = _reported(report, entry.get("reported"))

    @pytest.hookimpl(trylast=True)
    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        self.deselected.extend(item.nodeid for item in items)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.collected = [item.nodeid for item in session.items]
        self._marked(session.items)
        self._codes = {item.nodeid: _test_code(item) for item in session.items}
        self._hooks_set()

    def _hooks_set(self) -> None:
        """A profile or trace function set by code under test (not test-side, not a
        library's: coverage's tracer, a debugger) before the tests ran: it sees every frame
        of the test modules as they import, and may rebind what they hold."""
        _COLLECTED["done"] = True
        for event, files in _HOOKS_SET:
            who = self._first_in_tree(files)
            if who is not None:
                kind = "profile" if event.endswith("profile") else "trace"
                self._alter(f"{who} set a {kind} function while the tests were collected")
                return

    def _same_code(self, item: pytest.Item) -> None:
        """The test's function about to run is the code collection found (red-team: code
        under test set ``item._obj`` to a no-op from a replaced ``Function.setup`` or a
        fixture's machinery, or swapped the test's ``__code__`` from a thread)."""
        before = self._codes.get(item.nodeid)
        if before is not None and _test_code(item) is not before:
            self._alter(f"the code of {item.nodeid} changed between its collection and its "
                        "call")

    def _marked(self, items: Iterable[pytest.Item]) -> None:
        """A test module of the tree holding a ``pytestmark`` its source never binds: code
        under test put it there as the module imported it, and every test of the module is
        skipped or xfailed by a marker no test file declares (red-team, helper-15: an app
        module walked ``sys._getframe`` up to its importer and set a skip). Only modules
        holding one are read, once each."""
        seen: set[int] = set()
        for item in items:
            module = getattr(item, "module", None)
            if module is None or id(module) in seen:
                continue
            seen.add(id(module))
            space = _namespace(module)
            path = getattr(module, "__file__", None)
            if not isinstance(space, dict) or "pytestmark" not in space or not isinstance(
                    path, str):
                continue
            tree = self._in_tree([path])
            if tree and not binds_pytestmark(path):
                self._alter(f"{tree[0][0]} holds a pytestmark its source does not set")

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, exitstatus: int) -> None:
        self._check("at the session's end")
        self.finished, self.exitstatus = True, int(exitstatus)
        self._write()

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        """An xdist worker ended: take what it saw run. A worker that crashed sends nothing,
        so the tests it ran keep no phase, and accounting fails them (issue 13)."""
        output = getattr(node, "workeroutput", None) or {}
        seen = output.get(WORKER_KEY)
        if isinstance(seen, dict):
            self._merge_worker(seen)

    def _merge_worker(self, seen: dict[str, Any]) -> None:
        for nodeid, phases in seen.get("tests", {}).items():
            entry = self.tests.setdefault(nodeid, {})
            entry.update({p: v for p, v in phases.items() if p in (*_PHASES, "hidden_by")})
        known = set(self.collected)
        self.collected += [n for n in seen.get("collected", ()) if n not in known]
        known = set(self.deselected)
        self.deselected += [n for n in seen.get("deselected", ()) if n not in known]
        self.altered += [str(a) for a in seen.get("altered", ()) if a not in self.altered]
        for field, held in (("leaks", self.state.leaks),
                            ("fixture_leaks", self.state.fixture_leaks)):
            found = seen.get(field)
            if isinstance(found, dict):
                held.update(found)
        collection = seen.get("collection_leaks")
        if isinstance(collection, dict):
            self.state.collection_leaks.update(collection)

    def _write(self) -> None:
        data: dict[str, Any] = {
            "format": FORMAT, "finished": self.finished, "exitstatus": self.exitstatus,
            "collected": self.collected, "deselected": self.deselected, "tests": self.tests,
            "altered": self.altered, **self.state.data(),
        }
        tmp = f"{self.path}.tmp"
        with open(tmp, "w", encoding="utf-8") as out:
            json.dump(data, out)
        os.replace(tmp, self.path)


class WorkerOutcomes(Outcomes):
    """On an xdist worker: the same phase wrappers, collection and deselection, handed to
    the controller in ``workeroutput`` when the worker's session ends (xdist sends it after
    every ``pytest_sessionfinish``). Workers never write the file: the controller's plugin
    records what pytest reported (``pytest_runtest_logreport`` reaches it from every worker)
    and writes once."""

    def __init__(self, config: pytest.Config) -> None:
        super().__init__("")
        self.config = config

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        return None  # the controller records what was reported

    def _write(self) -> None:
        if self.finished:
            output: dict[str, Any] = self.config.workeroutput  # type: ignore[attr-defined]
            output[WORKER_KEY] = {"tests": self.tests, "collected": self.collected,
                                  "deselected": self.deselected, "altered": self.altered,
                                  **self.state.data()}


SWAP = "swap:"  # the key of a library attribute that holds code under test


def library_swaps(rootpath: object, patterns: list[str]) -> dict[str, str]:
    """The attributes of library modules (the standard library's, installed ones; ``builtins``
    included), and of the classes they define, that hold code of the tree that is not
    test-side: ``swap:math.isclose`` -> what holds it now. Code under test that replaces a
    check the tests assert with (``math.isclose = lambda *a, **k: True``, or
    ``numpy.testing.assert_allclose``, ``Mock.assert_called_once_with``, ``builtins.round``)
    makes those tests pass whatever the code does (red-team round 5). Read as it is, not as
    a change since start-up: a conftest's import may have made it before the session."""
    root = os.path.join(os.path.realpath(str(rootpath)), "")
    judged: dict[str, bool] = {}

    def ours(file: object) -> bool:  # code of the tree, not test-side
        if not isinstance(file, str) or file.startswith("<"):
            return False  # never kept: such code is judged by its module (``holds``)
        hit = judged.get(file)
        if hit is None:
            rel = _tree_rel(file, root)
            hit = judged[file] = rel is not None and not _test_side(rel, patterns)
        return hit

    modules = dict(sys.modules)

    def holds(value: object) -> bool:
        kind = type(value)
        if kind in _WRAPPERS:
            value = value.__func__  # type: ignore[attr-defined]
            kind = type(value)
        if kind is _FUNCTION:
            file = value.__code__.co_filename  # type: ignore[attr-defined]
            if isinstance(file, str) and file.startswith("<"):
                # Compiled from a string (``eval("lambda *a: True")``): its code names no
                # file, so the module whose globals it runs in says whose it is (red-team
                # round 7: ``math.isclose`` swapped so, unseen).
                module = modules.get(getattr(value, "__module__", None) or "")
                return ours(getattr(module, "__file__", None))
            return ours(file)
        if isinstance(kind, type) and issubclass(kind, type):  # a class
            module = modules.get(getattr(value, "__module__", None) or "")
            return ours(getattr(module, "__file__", None))
        return False

    # The tree's own packages, by name: a stub put in ``sys.modules`` under one of their names
    # (``app.report``) is the tree's business (a state leak), not a library's.
    ours_by_name = {str(n).partition(".")[0] for n, m in modules.items()
                    if isinstance(f := getattr(m, "__file__", None), str)
                    and _tree_rel(f, root) is not None}
    found: dict[str, str] = {}
    for name, module in modules.items():
        space = _namespace(module)
        file = space.get("__file__") if type(space) is dict else None
        if type(space) is not dict or (isinstance(file, str) and _tree_rel(
                file, root) is not None) or str(name).partition(".")[0] in ours_by_name:
            continue  # the tree's own modules, tests included
        for attribute, value in list(space.items()):
            kind = type(value)
            # Most of a module's names hold neither a function nor a class: passed over
            # without a call (this runs for every name of every module loaded).
            if kind is not _FUNCTION and kind not in _WRAPPERS and not issubclass(kind, type):
                continue
            if kind is _FUNCTION and judged.get(value.__code__.co_filename) is False:
                continue
            try:  # an object's own attribute hooks
                if holds(value):
                    found[f"{SWAP}{name}.{attribute}"] = _shown(value)
                elif isinstance(value, type) and value.__module__ == name:
                    for key, member in list(vars(value).items()):
                        # A library's own method, by its file already judged: no call.
                        if type(member) is _FUNCTION and judged.get(
                                member.__code__.co_filename) is False:
                            continue
                        if holds(member):
                            found[f"{SWAP}{name}.{value.__qualname__}.{key}"] = _shown(member)
            except Exception:
                continue
    return found


_FUNCTION = type(library_swaps)
_WRAPPERS = (staticmethod, classmethod)
# Real paths of module files and of their folders, kept for the session: the swap readings
# look up every loaded module's file twice a run, and each ``os.path.realpath`` is a ``stat``
# per folder on the way, which a recording watches (on wcwidth's suite the two readings
# were a third of the recording's time).
_REAL_FOLDERS: dict[str, str] = {}
_REAL_FILES: dict[str, str] = {}


def _real(file: str) -> str:
    """``os.path.realpath(file)``, with each folder resolved once: a file that is itself a
    link is resolved whole."""
    found = _REAL_FILES.get(file)
    if found is None:
        full = os.path.abspath(file)
        folder, name = os.path.split(full)
        real_folder = _REAL_FOLDERS.get(folder)
        if real_folder is None:
            real_folder = _REAL_FOLDERS[folder] = os.path.realpath(folder)
        found = os.path.realpath(full) if os.path.islink(full) else os.path.join(
            real_folder, name)
        _REAL_FILES[file] = found
    return found
HYPOTHESIS = "hypothesis.settings"
_HYPOTHESIS_FIELDS = ("max_examples", "phases", "derandomize", "stateful_step_count")


def hypothesis_profile() -> dict[str, str]:
    """``swap:hypothesis.settings`` -> what every test's Hypothesis settings are, when they
    are not Hypothesis's defaults: code that loads a profile at import asks every property
    test for less (red-team round 5: ``max_examples=1`` let the broken code pass). None
    where Hypothesis is not imported."""
    settings = getattr(sys.modules.get("hypothesis"), "settings", None)
    if settings is None:
        return {}
    current, default = settings.default, settings.get_profile("default")
    said = {f: getattr(current, f, None) for f in _HYPOTHESIS_FIELDS}
    if said == {f: getattr(default, f, None) for f in _HYPOTHESIS_FIELDS}:
        return {}
    profile = getattr(settings, "_current_profile", "?")
    return {f"{SWAP}{HYPOTHESIS}": f"{profile}: " + ", ".join(
        f"{k}={v!r}" for k, v in said.items())}


# What pytest takes from a test module's own namespace and runs around or for its tests.
_XUNIT = ("setup_module", "teardown_module", "setUpModule", "tearDownModule", "setup_function",
          "teardown_function", "pytest_generate_tests")


def module_swaps(rootpath: object, patterns: list[str], items: Iterable[pytest.Item]
                 ) -> dict[str, str]:
    """The fixtures and the xunit set-up functions that test modules hold in their own
    namespace but that code of the tree that is not test-side wrote: ``swap:tests/x.py::tol``
    -> the function. pytest looks a fixture up in the test module first, so one that a
    ``from app.calc import *`` brings (or app code writes into its importer) overrides the
    conftest's the test was written against, and ``setup_module`` runs with the module to
    rebind what the tests call (red-team round 5)."""
    from _pytest.fixtures import getfixturemarker

    root = os.path.join(os.path.realpath(str(rootpath)), "")
    found: dict[str, str] = {}
    seen: set[int] = set()
    for item in items:
        module = getattr(item, "module", None)
        space = _namespace(module)
        file = getattr(module, "__file__", None)
        if id(module) in seen or type(space) is not dict or not isinstance(file, str):
            continue
        seen.add(id(module))
        where = _real(file)[len(root):].replace(os.sep, "/")
        with contextlib.suppress(Exception):  # what a module holds: never the tests' error
            found.update(_rebound_names(module, space, file, where, root, patterns))
        for name, value in list(space.items()):
            with contextlib.suppress(Exception):  # an object's own attribute hooks
                if name not in _XUNIT and getfixturemarker(value) is None:
                    continue
                unwrap = getattr(value, "_get_wrapped_function", None)
                code = _code_file(unwrap() if callable(unwrap) else value)
                if code is None:
                    continue
                rel = _tree_rel(code, root)
                if (rel is not None and _real(code) != _real(file)
                        and not _test_side(rel, patterns) and not _named_for_tests(rel)):
                    found[f"{SWAP}{where}::{name}"] = _shown(value)
    return found


def doctest_swaps(rootpath: object, items: Iterable[pytest.Item]) -> dict[str, str]:
    """Docstring examples the doctest run does not take from the source, in the modules of
    the tree whose examples run: an object whose ``__doc__`` at run time is not the
    docstring its source writes (a decorator "keeping the examples in sync" with a broken
    function), and an example docstring of a function or class the module defines that
    doctest's finder no longer finds (the function wrapped in a callable object):
    ``swap:app/calc.py::mul.__doc__``. The examples are judged from the source (red-team
    round 6); the run must be running those."""
    import doctest

    root = os.path.join(os.path.realpath(str(rootpath)), "")
    modules: dict[str, str] = {}  # module name -> its file, for each module run for examples
    for item in items:
        test = getattr(item, "dtest", None)
        file = getattr(test, "filename", None)
        name = (getattr(test, "globs", None) or {}).get("__name__")
        if isinstance(file, str) and file.endswith(".py") and isinstance(name, str):
            modules.setdefault(name, file)
    found: dict[str, str] = {}
    for name, file in modules.items():
        rel = _tree_rel(file, root)
        module = sys.modules.get(name)
        written = _source_docstrings(file) if rel is not None and module is not None else None
        if not written:
            continue
        try:
            ran = {t.name: t.docstring or "" for t in doctest.DocTestFinder().find(module)}
        except Exception:  # whatever the module holds: never the tests' error
            continue
        where = str(rel).replace(os.sep, "/")
        for qualname, text in written.items():
            key = f"{SWAP}{where}::{qualname}.__doc__"
            runs = ran.get(f"{name}.{qualname}")
            if runs is None and ">>>" in text:
                found[key] = "its examples no longer run"
            elif runs is not None and inspect.cleandoc(runs) != inspect.cleandoc(text):
                found[key] = "rewritten at run time"
    return found


def _parsed(file: str) -> ast.Module | None:
    try:
        with open(file, "rb") as fh:
            return ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _source_docstrings(file: str) -> dict[str, str] | None:
    """The docstrings of the functions and classes a module's top level (and its classes')
    defines once, by qualified name; None when the file does not read or parse."""
    tree = _parsed(file)
    if tree is None:
        return None
    found: dict[str, str] = {}

    def walk(body: list[ast.stmt], prefix: str) -> None:
        defs = [n for n in body
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
        counts: dict[str, int] = {}
        for node in body:
            for name in _bound_here(node):
                counts[name] = counts.get(name, 0) + 1
        for node in defs:
            if counts.get(node.name) != 1:
                continue
            text = ast.get_docstring(node, clean=False)
            if text is not None:
                found[prefix + node.name] = text
            if isinstance(node, ast.ClassDef):
                walk(node.body, f"{prefix}{node.name}.")

    walk(tree.body, "")
    return found


def _rebound_names(module: object, space: dict[str, Any], file: str, where: str, root: str,
                   patterns: list[str]) -> dict[str, str]:
    """The names a test module's own source binds that hold something else once it is
    imported: a name ``from app.calc import mul`` bound that is not ``app.calc.mul``, a
    test function or class it defines whose code another file of the tree (not test-side)
    wrote. Code under test that rebinds them as the module finishes importing (a profile
    hook, a ``__code__`` swapped in) makes the tests check its own stand-in (red-team
    round 6). Names the module binds twice, or declares ``global`` anywhere, are its own
    business."""
    bindings = _source_bindings(file)
    if bindings is None:
        return {}
    imported, defined = bindings
    package = space.get("__package__")
    found: dict[str, str] = {}
    for bound, source, attribute, level in imported:
        try:
            name = importlib.util.resolve_name("." * level + source, package) if level else (
                source)
        except (ImportError, ValueError, TypeError):
            continue
        origin = sys.modules.get(name)
        origin_space = _namespace(origin) if origin is not None else None
        if type(origin_space) is not dict:
            continue
        if attribute in origin_space:
            expected = origin_space[attribute]
        elif f"{name}.{attribute}" in sys.modules:
            expected = sys.modules[f"{name}.{attribute}"]
        else:
            continue  # a module ``__getattr__``'s: nothing to compare
        actual = space.get(bound, _MISSING)
        if actual is not expected and actual is not _MISSING:
            found[f"{SWAP}{where}::{bound}"] = _shown(actual)
    for name, decorated, defaults in defined:
        value: Any = space.get(name)
        if (defaults is not None and not decorated and isinstance(value, types.FunctionType)
                and (value.__defaults__, value.__kwdefaults__) != defaults):
            # The test's data, as its source gives it, replaced (red-team round 6).
            found[f"{SWAP}{where}::{name}.__defaults__"] = repr(value.__defaults__)[:80]
            continue
        code = _code_file(value)
        # A decorator the source applies returns its wrapper: the test under it (its
        # ``__wrapped__``) is still the file's. An undecorated test's stand-in with a
        # ``functools.wraps`` of the test is not.
        for _ in range(8 if decorated else 0):
            if code is None or _real(code) == _real(file) or not hasattr(value, "__wrapped__"):
                break
            value = value.__wrapped__
            code = _code_file(value)
        if code is None or _real(code) == _real(file):
            continue
        rel = _tree_rel(code, root)
        if rel is not None and not _test_side(rel, patterns) and not _named_for_tests(rel):
            found[f"{SWAP}{where}::{name}"] = _shown(space.get(name))
    return found


_MISSING = object()


_Defaults = tuple[tuple[Any, ...] | None, dict[str, Any] | None]


def _source_bindings(file: str) -> tuple[list[tuple[str, str, str, int]],
                                         list[tuple[str, bool, _Defaults | None]]] | None:
    """A module's top-level ``from X import a as b`` (b, X, a, level) and its functions and
    classes (name, whether decorated, literal defaults: ``_literal_defaults``), leaving out
    every name its source binds more than once or declares ``global``; None when the file
    does not read or parse."""
    tree = _parsed(file)
    if tree is None:
        return None
    counts: dict[str, int] = {}
    globals_named: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            globals_named.update(node.names)
    imported: list[tuple[str, str, str, int]] = []
    defined: list[tuple[str, bool, _Defaults | None]] = []
    for node in tree.body:
        for target in _bound_here(node):
            counts[target] = counts.get(target, 0) + 1
        if isinstance(node, ast.ImportFrom):
            imported += [(a.asname or a.name, node.module or "", a.name, node.level)
                         for a in node.names if a.name != "*"]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.append((node.name, bool(node.decorator_list), _literal_defaults(node)))
    once = {n for n, c in counts.items() if c == 1 and n not in globals_named}
    return ([i for i in imported if i[0] in once], [d for d in defined if d[0] in once])


def _literal_defaults(node: ast.stmt) -> _Defaults | None:
    """A function's ``__defaults__`` and ``__kwdefaults__`` as its source writes them, when
    every default is an immutable literal (numbers, strings, tuples of them: nothing a test
    can change in place); else None."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    try:
        positional = tuple(ast.literal_eval(d) for d in node.args.defaults)
        keywords = {a.arg: ast.literal_eval(d) for a, d in zip(
            node.args.kwonlyargs, node.args.kw_defaults, strict=True) if d is not None}
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if not all(_immutable(v) for v in (*positional, *keywords.values())):
        return None
    return positional or None, keywords or None


def _immutable(value: object) -> bool:
    if isinstance(value, tuple | frozenset):
        return all(_immutable(v) for v in value)
    return value is None or isinstance(value, bool | int | float | complex | str | bytes)


def _bound_here(node: ast.stmt) -> list[str]:
    """The names one top-level statement binds (a compound statement: all it holds, which
    may count a name too often, and then it is not compared: never a false finding)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    found: list[str] = []
    for inner in ast.walk(node):
        if isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Store):
            found.append(inner.id)
        elif isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.append(inner.name)
        elif isinstance(inner, ast.alias):
            found.append((inner.asname or inner.name).split(".")[0])
    return found


def _namespace(module: object) -> object:
    """A module's ``__dict__``, read past its class: a recording's watched module class
    (``agentgate.witness.watch``) reports every other read of it as the reader's."""
    if isinstance(module, types.ModuleType):
        return types.ModuleType.__getattribute__(module, "__dict__")
    return getattr(module, "__dict__", None)


def _tree_rel(file: str, root: str) -> str | None:
    """A file of the tree itself (inside ``root``, a folder path ending in the separator; not
    an installed library there, nor git's folder), as a path relative to it; else None."""
    path = _real(file)
    if not path.startswith(root):
        return None
    rel = path[len(root):]
    return None if _NOT_THE_TREE.intersection(rel.split(os.sep)[:-1]) else rel


class StateLeaks:
    """The process state each test changed and left changed, by node id, and what collection
    changed (``process_state``). Readings of the test now running: before its setup, after
    its call; the keys its own code changed (``_touched``); keys a fixture of a wider scope
    changed in its setup are the harness's (``_harness``), and are kept apart, under the
    test whose setup set it up (``fixture_leaks``): a shared fixture calling code under test
    that leaves state changed is judged against the base as a test is. Its wrappers are the
    innermost (``trylast``), inside pytest's own per-phase set-up."""

    def __init__(self) -> None:
        self.leaks: dict[str, dict[str, str]] = {}
        self.collection_leaks: dict[str, str] = {}
        self.fixture_leaks: dict[str, dict[str, str]] = {}
        self._item = ""  # the test whose setup runs now
        self._collected: pytest.Config | None = None  # set once collection has finished
        self._session_state: dict[str, object] = {}
        self._states: list[dict[str, object]] = []
        self._touched: set[str] = set()
        self._harness: set[str] = set()

    def data(self) -> dict[str, Any]:
        if self._collected is not None:  # what the tests' own code swapped in, by the end
            self.collection_leaks.update(self._swaps(self._collected))
        return {"leaks": self.leaks, "collection_leaks": self.collection_leaks,
                "fixture_leaks": self.fixture_leaks}

    @staticmethod
    def _swaps(config: pytest.Config, items: Iterable[pytest.Item] = ()) -> dict[str, str]:
        try:
            found = library_swaps(config.rootpath, _side_patterns(config))
            found.update(module_swaps(config.rootpath, _side_patterns(config), items))
            found.update(doctest_swaps(config.rootpath, items))
            found.update(hypothesis_profile())
            return found
        except Exception as exc:  # whatever a module holds: one value, never the tests' error
            return {f"{SWAP}?": f"unreadable ({type(exc).__name__})"}

    @pytest.hookimpl(trylast=True)
    def pytest_sessionstart(self) -> None:
        self._session_state = _reading(imports=False)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if self._session_state:
            self.collection_leaks = changed(self._session_state, _reading(imports=False))
            self.collection_leaks.update(self._swaps(session.config, session.items))
            self._collected = session.config

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, None, None]:
        self._states, self._touched, self._harness = [_reading()], set(), set()
        self._item = item.nodeid
        return (yield)

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        try:
            return (yield)
        finally:
            self._after(item, "call")

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> Generator[None, None, None]:
        try:
            return (yield)
        finally:
            self._after(item, "teardown")

    @pytest.hookimpl(wrapper=True)
    def pytest_fixture_setup(self, fixturedef: Any) -> Generator[None, None, object]:
        """What a fixture of a wider scope than the test sets up (a session's environment
        variable) is the harness's state, not a leak of the test that first asked for it. It
        stays for the tests after it all the same: kept as the fixture's, under that test,
        and judged against the base (a session fixture calling changed code that sets
        ``decimal.getcontext().prec``)."""
        if getattr(fixturedef, "scope", "function") == "function":
            return (yield)
        before = _reading()
        try:
            return (yield)
        finally:
            made = changed(before, _reading())
            self._harness.update(made)
            if made and self._item:
                name = getattr(fixturedef, "argname", "?")
                self.fixture_leaks.setdefault(self._item, {}).update(
                    {f"{key} (fixture {name})": value for key, value in made.items()})

    def _after(self, item: pytest.Item, when: str) -> None:
        """After the call and after the teardown: a key the test's setup (less a wider
        fixture's) or its call changed, and its teardown left changed from before the setup,
        is the test's leak."""
        if not self._states:
            return
        now = _reading()
        if when == "call" or len(self._states) == 1:  # a setup that failed has no call
            self._touched.update(k for k in changed(self._states[0], now)
                                 if k not in self._harness)
            self._states.append(now)
        if when == "teardown":
            left = {k: v for k, v in changed(self._states[0], now).items() if k in self._touched}
            if left:
                self.leaks[item.nodeid] = left
            self._states = []


class LeaksFile(StateLeaks):
    """``--agentgate-leaks=PATH`` alone: the leaks written when the session ends."""

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self) -> None:
        tmp = f"{self.path}.tmp"
        with open(tmp, "w", encoding="utf-8") as out:
            json.dump({"format": FORMAT, "finished": True, **self.data()}, out)
        os.replace(tmp, self.path)


class Feed:
    """Registered only when ``--agentgate-progress`` is given: what finished, as it does."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.reported: dict[str, str] = {}
        self.total_sent = False

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self._line({"collected": len(session.items)})

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """Under xdist the controller collects nothing: the first worker's count is the
        run's (every worker collects the same items)."""
        if not self.total_sent:
            self.total_sent = True
            self._line({"collected": len(ids)})

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.reported[report.nodeid] = _reported(report, self.reported.get(report.nodeid))

    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        self._line({"test": nodeid, "outcome": self.reported.pop(nodeid, "unknown")})

    def _line(self, event: dict[str, Any]) -> None:
        data = json.dumps(event) + "\n"
        if self.path.startswith("fd:"):  # a pipe agentgate reads as the run goes
            with contextlib.suppress(OSError, ValueError):
                os.write(int(self.path[3:]), data.encode("utf-8"))
            return
        with open(self.path, "a", encoding="utf-8") as out:  # whole lines, one write each
            out.write(data)


def _reported(report: pytest.TestReport, before: str | None) -> str:
    """The outcome pytest reported for the test, the worst of its phases."""
    if report.when != "call" and report.outcome == "failed":
        return "error"
    if hasattr(report, "wasxfail"):
        now = "xfailed" if report.skipped else "xpassed"
    else:
        now = report.outcome
    if before is not None and (now == "passed" or before in ("error", "failed")):
        return before  # a passing teardown never hides what setup or call reported
    return now
