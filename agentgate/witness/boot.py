"""``python -m agentgate.witness.boot PYTEST_ARGS``: record from before pytest is imported.

A pytest plugin starts too late to see everything: pytest imports itself, its plugins and
whatever they import (on pluggy's own repository, the repository's ``src/pluggy``) before any
plugin hook runs, so a recording started by the plugin charges such a module whole to every
test (``depgraph``: preloaded). ``agentgate witness record`` runs pytest through this module
instead: it starts a recorder in context "c", then runs pytest as ``python -m pytest`` would;
the plugin (``-p agentgate.witness --agentgate-witness``) adopts the running recorder, and
what pytest's start-up imported is charged to every test as seen, not whole. The recorder's
tracer itself starts with the first code of the repository (``Recorder.start(lazy=True)``):
on a repository pytest's start-up does not touch, recording costs what it did before.

Stdlib and coverage only until pytest is imported, Python 3.9 syntax: it runs in the
project's interpreter, and nothing of the project may be imported before recording starts.
"""

from __future__ import annotations

import os
import sys


def main(args: list[str]) -> int:
    from agentgate.witness import recorder

    rec = recorder.Recorder(root=_rootdir(args))
    # The children's folder beside the recording (``witness record``'s scratch folder, which
    # agentgate removes even when it kills this process on an interrupt), not in the system
    # temp folder, where a killed recording left one behind per run.
    rec.start(lazy=True, scratch=_scratch(args))  # traced from the first repository code on
    try:
        return _pytest(args)
    finally:
        rec.abandon()  # pytest never adopted it, or stopped before the session finished


def _pytest(args: list[str]) -> int:
    """pytest as ``python -m pytest ARGS`` runs it: the same ``sys.argv``, the same entry."""
    import pytest

    from agentgate.witness import plugin

    # The package may have been imported before pytest (``-m`` imports it to run this
    # module), so it lacks the hooks ``-p agentgate.witness`` registers it for.
    package = sys.modules["agentgate.witness"]
    for name in plugin.HOOKS:
        setattr(package, name, getattr(plugin, name))
    sys.argv = [os.path.join(os.path.dirname(pytest.__file__), "__main__.py"), *args]
    # What ``pytest.console_main`` does, which pytest 9.2 deprecates: main, then a stdout that
    # went away (``| head``) is no error of the suite's.
    try:
        code = int(pytest.main())
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return code


def _scratch(args: list[str]) -> str | None:
    """The folder of ``--agentgate-witness-out=PATH`` (the form ``witness record`` gives),
    if it exists."""
    found = [a.split("=", 1)[1] for a in args if a.startswith("--agentgate-witness-out=")]
    folder = os.path.dirname(os.path.abspath(found[-1])) if found else None
    return folder if folder and os.path.isdir(folder) else None


def _rootdir(args: list[str]) -> str:
    """The rootdir pytest is given (the last ``--rootdir``), else the working directory;
    the plugin refuses to adopt a recording whose root is not pytest's rootdir."""
    found = os.getcwd()
    for i, arg in enumerate(args):
        if arg.startswith("--rootdir="):
            found = arg.split("=", 1)[1]
        elif arg == "--rootdir" and i + 1 < len(args):
            found = args[i + 1]
    return os.path.abspath(os.path.expandvars(found))  # as pytest reads it


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
