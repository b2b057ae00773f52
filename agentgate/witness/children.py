"""Python processes a recorded test starts, recorded too: their code counts for that test.

A test that runs the project's command line (``subprocess.run([sys.executable, "-m",
"app.cli"])``) ran repository code the recording process never saw, so it was
``escalate:incomplete-witness`` and ran for every patch (issue 12: such tests are often the
slowest). While recording, every process started gets, through its environment, a
``sitecustomize`` that starts a recorder of its own (``child``) before the child runs
anything; at its normal exit the child writes what it ran, read, listed and looked for, all
of it as one flat *fragment*, into a folder the recording owns. The recording process notes
each process it started (``Recorder.spawned``: pid, program, argv) and, at the end,
charges each child's fragment to the context that started it (``merge``): the test, its
fixture, or the import that did.

A child is trusted only when its fragment proves it is the process the test started: its
parent is this process, its pid is the one the start returned, it ran the interpreter file
that was started (no shell, no wrapper script, nothing in between whose reads no one saw),
with exactly the argv it was given. Otherwise the context stays incomplete, as before: a
program that is not Python, a child that cleared its environment or ran with ``-E``, ``-I``
or ``-S``, one still running at the end, one killed by a signal or ended by ``os._exit``
(no normal exit, no fragment), one that forked or exec'd (its own recorder flags that).
What a child started is followed the same way, by the child's recorder, into its fragment.

Stdlib and ``harvest`` only, Python 3.9 syntax: it runs in the project's
interpreter, and in every child of a recording.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import re
import shlex
import shutil
import sys
import tempfile
from collections.abc import Iterable
from typing import Any, NamedTuple, Protocol

from agentgate.witness import harvest

FOLDER = "AGENTGATE_WITNESS_CHILDREN"  # where children write their fragments
ROOT = "AGENTGATE_WITNESS_CHILD_ROOT"  # the repository they record
MARKER = "agentgate-witness-children"  # in the folder: its sitecustomize is this one
FRAGMENT_VERSION = 1
WHY = "ran a subprocess"
# Started in each child by the interpreter's ``site`` (on ``PYTHONPATH``), then the
# ``sitecustomize`` it hides, if the environment has one. It must never break the child.
_SITECUSTOMIZE = '''\
"""agentgate witness: record this process for the test that started it."""


def _agentgate_witness():
    try:
        from agentgate.witness import child
    except Exception:
        return
    child.start()


def _chain():
    import importlib.machinery
    import importlib.util
    import os
    import sys

    # Not this folder, nor another recording's (a recorded test that records in turn).
    path = [p for p in sys.path
            if not os.path.exists(os.path.join(p or ".", "agentgate-witness-children"))]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        sys.modules["sitecustomize"] = module
        spec.loader.exec_module(module)


_agentgate_witness()
_chain()
'''


class Spawn(NamedTuple):
    """A process a context started: its pid, the program files the start could have run
    (in the order it tried them), its argv, and its environment (``NAME=value`` items; None:
    this process's own, inherited)."""

    pid: int
    context: str
    programs: tuple[str, ...]
    argv: tuple[str, ...]
    environ: tuple[str, ...] | None = None


class Spawner(Protocol):
    """What ``merge`` reads from a recorder (``recorder.Recorder``), which imports this
    module: the dependency runs one way."""

    child_folder: str | None
    spawns: list[Spawn]
    settled: set[int]  # pids whose fragment was seen, or that exited without one

    def rel(self, path: object) -> str | None: ...


class Following:
    """The recording process's side: the folder, the ``sitecustomize`` that children load,
    and the environment that leads them there (restored at ``stop``)."""

    def __init__(self, root: str, scratch: str | None = None) -> None:
        self.folder = tempfile.mkdtemp(prefix="agentgate-children-", dir=scratch)
        with open(os.path.join(self.folder, "sitecustomize.py"), "w", encoding="utf-8") as fh:
            fh.write(_SITECUSTOMIZE)
        with open(os.path.join(self.folder, MARKER), "w", encoding="utf-8"):
            pass  # what ``sitecustomize`` chains past
        self._saved = {n: os.environ.get(n) for n in (FOLDER, ROOT, "PYTHONPATH")}
        old = os.environ.get("PYTHONPATH")
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (self.folder, old) if p)
        os.environ[FOLDER] = self.folder
        os.environ[ROOT] = root
        # Last on this process's own path too: a test that hands its child ``sys.path`` as
        # the child's PYTHONPATH (pyflakes' does) leads it here all the same. The folder
        # holds nothing else to import.
        sys.path.append(self.folder)
        atexit.register(self.remove)  # also when the recording never reaches its harvest

    def stop(self) -> None:
        for name, value in self._saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        with contextlib.suppress(ValueError):
            sys.path.remove(self.folder)

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def running(rec: Spawner) -> str | None:
    """As a test begins: a process an earlier test started that is still running (it wrote
    no fragment yet and has not exited) may serve this test -- a server fed through a pipe,
    left for the next test -- and what it runs for this test would be charged to the one
    that started it. Which one, if any (the test is then incomplete). A fixture's process
    serves the tests that ask for the fixture, which depend on what it recorded; one that
    reaches it without asking (through a module global) is not seen, as before children
    were followed."""
    pending = [s for s in rec.spawns if s.pid not in rec.settled]
    if rec.child_folder is None or not pending:
        return None
    with contextlib.suppress(OSError):
        rec.settled.update(int(n.partition("-")[0]) for n in os.listdir(rec.child_folder)
                           if n.endswith(".json") and n.partition("-")[0].isdigit())
    for spawn in pending:
        if spawn.pid in rec.settled:
            continue
        if not _alive(spawn.pid):
            rec.settled.add(spawn.pid)
        elif spawn.context.startswith("t:") and not _tracker(spawn) and not contained(
                spawn, rec):
            return f"{_what(spawn)} still running (pid {spawn.pid})"
    return None


def _tracker(spawn: Spawn) -> bool:
    """multiprocessing's own long-lived processes, started once and living until this
    process ends: the resource tracker runs the standard library's code alone, for whoever
    uses shared resources; the forkserver forks workers for whoever asks, and a test asks
    through a Unix socket this process bound before starting it, which marks that test
    (``Recorder._in_process``). Known by the text multiprocessing gives ``-c``, whole, with
    no call in its arguments: a test's own program that merely names them is not exempt."""
    argv = list(spawn.argv)
    text = argv[argv.index("-c") + 1] if "-c" in argv[:-1] else ""
    return any(p.fullmatch(text) for p in _MULTIPROCESSING)


_MULTIPROCESSING = (
    re.compile(r"from multiprocessing\.resource_tracker import main;main\(\d+\)"),
    re.compile(r"from multiprocessing\.forkserver import main; main\(\d+, \d+, [^()]*\)"),
)


# --- programs of the base system that read no file ------------------------------------------

# Where the base system's programs live: no test writes there, a PATH it sets aside.
_SYSTEM = ("/bin/", "/usr/bin/", "/sbin/", "/usr/sbin/")
_SHELLS = frozenset({"sh", "dash", "bash", "busybox"})
# Filters that read their standard input alone when given no operand (``PAGER=cat``).
_STDIN_ONLY = frozenset({"cat", "tac", "head", "tail", "wc", "sort", "uniq", "cut", "rev",
                         "nl", "fold", "od", "base64", "md5sum", "sha256sum"})
# Programs that never read a file, whatever their operands.
_NO_FILES = frozenset({"echo", "printf", "true", "false", "yes", "sleep", "tr"})
_SHORT_FLAGS = re.compile(r"-[A-Za-z0-9]*")
# What of its environment decides what such a process reads: where its program is found,
# the shell's start-up files.
CONTAINED_ENV = ("PATH", "ENV", "BASH_ENV")
# What a shell would expand, substitute, redirect or chain: the command is not one plain one.
_SHELL_SYNTAX = re.compile(r"[$`\\\n*?\[\]~{}!#;|&<>()=]")


def contained(spawn: Spawn, rec: Spawner) -> bool:
    """Whether a process the recording cannot follow (no Python, no fragment) reads no file
    of the repository: a filter of the base system given no operand (``cat``, ``head -5``),
    or a program that reads none (``echo``, ``true``), started itself or as one plain
    command of ``sh -c`` (click's pager tests run ``sh -c cat``). What it reads is its
    standard input, which the test wrote and the recording saw. The program must be the
    system's (``/bin``, ``/usr/bin``: a test's PATH may put its own ``cat`` first) and the
    shell must read no start-up file (``ENV``, ``BASH_ENV``); anything else -- another
    program, an operand that may name a file, a redirection, an expansion -- stays
    incomplete."""
    program = _program(spawn)
    env = _environ(spawn)
    words = list(spawn.argv)
    if program is None or not words:
        return False
    if _named(program, rec) in _SHELLS:
        if len(words) != 3 or words[1] != "-c" or env.get("ENV") or env.get("BASH_ENV"):
            return False
        inner = _plain_command(words[2])
        if inner is None:
            return False
        found = shutil.which(inner[0], path=env.get("PATH", os.defpath))
        if found is None:
            return False
        program, words = found, inner
    name = _named(program, rec)
    if name in _NO_FILES:
        return True
    return name in _STDIN_ONLY and all(_SHORT_FLAGS.fullmatch(w) for w in words[1:])


def _named(program: str, rec: Spawner) -> str | None:
    """The name a system program answers to, or None for one outside the system's folders
    (or inside the repository)."""
    real = os.path.realpath(program)
    if not real.startswith(_SYSTEM) or rec.rel(real) is not None:
        return None
    return os.path.basename(program)


def _plain_command(text: str) -> list[str] | None:
    """The words of a shell command that is one plain command: no expansion, substitution,
    redirection, assignment, chaining or globbing."""
    if _SHELL_SYNTAX.search(text):
        return None
    try:
        words = shlex.split(text)
    except ValueError:
        return None
    return words or None


def _environ(spawn: Spawn) -> dict[str, str]:
    if spawn.environ is None:
        return dict(os.environ)
    return dict(item.partition("=")[::2] for item in spawn.environ)


def _alive(pid: int) -> bool:
    """Whether a process is running: not gone, and not a zombie its parent has not waited
    for (Linux says so in ``/proc``; elsewhere it counts as running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    with contextlib.suppress(OSError, IndexError), open(f"/proc/{pid}/stat",
                                                         encoding="utf-8") as fh:
        return fh.read().rpartition(")")[2].split()[0] not in ("Z", "X")
    return True


def exec_record(folder: str | None) -> None:
    """This child is about to replace itself (``os.exec*``): what it ran so far is in no
    fragment, and the new program's may prove the same pid, interpreter and argv (a program
    that re-executes itself). A record that says so keeps the start untrusted."""
    if folder is None:
        return
    name = os.path.join(folder, f"{os.getpid()}-{os.urandom(6).hex()}.json")
    with contextlib.suppress(OSError), open(name, "w", encoding="utf-8") as fh:
        fh.write(json.dumps({"version": FRAGMENT_VERSION, "pid": os.getpid(),
                             "ppid": os.getppid(), "exec": True}))


def merge(rec: Spawner, out: dict[str, Any]) -> None:
    """Charge each process ``rec`` started to the context that started it (``out``: the
    raw recording's ``contexts`` and ``top_names``), or mark that context
    incomplete where the child left no fragment that proves it is that process."""
    if rec.child_folder is None or not rec.spawns:
        return
    fragments = _fragments(rec.child_folder)
    by_pid: dict[int, list[Spawn]] = {}
    for spawn in rec.spawns:
        by_pid.setdefault(spawn.pid, []).append(spawn)
    top_names: set[str] = set(out.get("top_names", ()))
    for pid, spawns in by_pid.items():
        found = fragments.get(pid, [])
        # A pid used twice needs a fragment for each start, and each start gets them all.
        trusted = len(found) >= len(spawns) and all(
            _proves(f, s) for f in found for s in spawns)
        for spawn in spawns:
            entry = out["contexts"].setdefault(spawn.context, harvest.empty_entry())
            if not trusted and not found and contained(spawn, rec):
                continue  # reads its standard input alone, which the test wrote
            if not trusted:
                entry["flags"].setdefault(WHY, _unfollowed(spawn))
                continue
            # The program started, where it is the repository's (a tracked link to the
            # interpreter): a patch may point it elsewhere.
            program = _program(spawn)
            where = rec.rel(program) if program is not None else None
            if where is not None:
                entry["opened"] = sorted({*entry["opened"], where})
            for fragment in found:
                _add(entry, fragment.get("context", {}))
                if not fragment.get("context", {}).get("flags"):
                    # Modules whose reads the child did not see (a script run by its path,
                    # a module class of its own) count whole for this test alone: only
                    # the child read them there, and the child is this test's. A flagged
                    # child's test runs anyway.
                    entry["opened"] = sorted({*entry["opened"], *fragment.get("unwatched", ())})
                top_names.update(fragment.get("top_names", ()))
    out["top_names"] = sorted(top_names)


def _fragments(folder: str) -> dict[int, list[dict[str, Any]]]:
    """The fragments of this process's children, by pid."""
    found: dict[int, list[dict[str, Any]]] = {}
    me = os.getpid()
    with contextlib.suppress(OSError):
        for name in os.listdir(folder):
            if not name.endswith(".json"):
                continue
            try:
                with open(os.path.join(folder, name), encoding="utf-8") as fh:
                    fragment = json.load(fh)
            except (OSError, ValueError):
                continue
            if (isinstance(fragment, dict) and fragment.get("version") == FRAGMENT_VERSION
                    and fragment.get("ppid") == me and isinstance(fragment.get("pid"), int)):
                found.setdefault(fragment["pid"], []).append(fragment)
    return found


def _proves(fragment: dict[str, Any], spawn: Spawn) -> bool:
    """Whether the child that wrote ``fragment`` is the interpreter ``spawn`` started
    itself, with its argv: nothing ran in between that its recorder could not see."""
    program = _program(spawn)
    return (program is not None and not fragment.get("exec")
            and os.path.realpath(program) == fragment.get("executable")
            and fragment.get("argv") == list(spawn.argv))


def _program(spawn: Spawn) -> str | None:
    """The file the start ran: the first of its candidates that is an executable file."""
    return next((p for p in spawn.programs if os.path.isfile(p) and os.access(p, os.X_OK)),
                None)


def _what(spawn: Spawn) -> str:
    what = " ".join(spawn.argv[:3]) or (spawn.programs[0] if spawn.programs else "?")
    return what[:80]


def _unfollowed(spawn: Spawn) -> str:
    return f"{_what(spawn)} (not a recorded Python child)"


def flatten(entries: Iterable[dict[str, Any]]) -> dict[str, Any]:
    flat = harvest.empty_entry()
    for entry in entries:
        _add(flat, entry)
    return flat


def _add(into: dict[str, Any], entry: dict[str, Any]) -> None:
    """One context's record added to another's (imports are not carried: a child's import
    contexts are flattened into it, every module code it ran counted as its own)."""
    for path, names in entry.get("units", {}).items():
        into["units"][path] = sorted(set(into["units"].get(path, ())) | set(names))
    for key in ("opened", "listed", "missing"):
        into[key] = sorted(set(into[key]) | set(entry.get(key, ())))
    for path, names in entry.get("reads", {}).items():
        into["reads"][path] = sorted(set(into["reads"].get(path, ())) | set(names))
    for why, what in entry.get("flags", {}).items():
        into["flags"].setdefault(why, what)


def decoded(values: Iterable[Any]) -> tuple[str, ...]:
    """An argv or a list of programs as the child will see them (bytes decoded as the file
    system does)."""
    return tuple(os.fsdecode(v) if isinstance(v, (bytes, os.PathLike)) else str(v)
                 for v in values)
