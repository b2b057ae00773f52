"""Which lines ran in each context, from coverage.py's C tracer (before Python 3.12).

coverage gives lines a context with ``switch_context``, which flushes what its tracer
gathered into coverage's SQLite data at every switch; the harvest then read it all back
out. On Jinja2's suite (about 2,000 switches) that was most of what recording cost over
coverage itself (issue 12 item 6, bench/README.md). Here the contexts stay in memory: at a
switch, what the tracer gathered since the last one is moved to the context that just
ended, and the tracer's per-file line sets are emptied *in place* -- frames still running
hold those very set objects and keep writing into them, as they do across coverage's own
flush. That reaches into coverage's collector (``Coverage._collector.data``, the dict of
per-file line sets every tracer writes into), so ``_live_sets`` checks at start that the
internals are what this module expects, down to a line traced through them, and otherwise
every switch is coverage's own ``switch_context`` and the harvest reads coverage's data.

Stdlib and coverage only, Python 3.9 syntax: it runs in the project's interpreter.
"""

from __future__ import annotations

import contextlib
import os
import threading
from typing import Any

Lines = dict[str, set[int]]  # coverage's file name -> line numbers
CANARY = "__agentgate_coverage_canary__.py"  # never on disk: coverage traces it by name
_CANARY_SOURCE = "def canary():\n    return 1\n"


NO_CONTEXTS = ("--agentgate-witness needs coverage's ctrace or pytrace core (per-test "
               "contexts); unset COVERAGE_CORE or set it to ctrace")


class NoContexts(Exception):
    """coverage's core cannot tell contexts apart (``COVERAGE_CORE=sysmon``): every line
    would count for the wrong test, so recording is refused (``NO_CONTEXTS``)."""


class LineTracer:
    """coverage's line tracer, its lines kept per context label."""

    def __init__(self, root: str) -> None:
        import coverage  # only when recording: the plugin must cost nothing otherwise

        self.root = root
        self.cov = coverage.Coverage(
            data_file=None, config_file=False, branch=False, source=[root],
            omit=["*/site-packages/*", "*/dist-packages/*", "*/.venv/*", "*/.tox/*"],
        )
        # The sysmon core has no dynamic contexts; coverage without the option has no sysmon.
        with contextlib.suppress(Exception):
            self.cov.set_option("run:core", "ctrace")
        self.cov.set_option("run:disable_warnings", ["no-data-collected", "module-not-measured"])
        # In memory: {label: {file: lines}}; None when coverage's own contexts hold them.
        self.by_context: dict[str, Lines] | None = None
        self.label = ""
        self._live: Lines | None = None
        # What coverage has every new thread install (``threading.settrace``): a thread
        # started while it is there is traced like the main one. The files whose code
        # installs it in the new thread (threading's bootstrap, coverage's collector).
        self.thread_trace: Any = None
        self.installers: frozenset[str] = frozenset()

    def start(self, label: str) -> None:
        self.cov.start()
        self.thread_trace = getattr(threading, "_trace_hook", None)
        installer = getattr(getattr(self.thread_trace, "__func__", None), "__code__", None)
        self.installers = frozenset(
            f for f in (threading.__file__, getattr(installer, "co_filename", None)) if f)
        core = getattr(self.cov, "_core", None)
        if core is not None and not getattr(core, "supports_dynamic_contexts", True):
            self.cov.stop()
            raise NoContexts(getattr(core, "tracer_class", core))
        self._live = _live_sets(self.cov, self.root)
        if self._live is None:
            self.cov.switch_context(label)
        else:
            self.by_context = {}
        self.label = label

    def switch(self, label: str) -> None:
        if self._live is None:
            self.cov.switch_context(label)
        else:
            self._take()
        self.label = label

    def stop(self) -> None:
        self.cov.stop()
        if self._live is not None:
            self._take()

    def _take(self) -> None:
        """Move what the tracer gathered to the current label. ``copy`` then
        ``difference_update`` (both atomic under the GIL, as in coverage's own flush): a
        line another thread adds in between stays for the next context."""
        assert self._live is not None and self.by_context is not None
        found: Lines | None = None
        for name, live in list(self._live.items()):
            if live:
                lines = live.copy()
                live.difference_update(lines)
                if found is None:
                    found = self.by_context.setdefault(self.label, {})
                have = found.get(name)
                if have is None:
                    found[name] = lines
                else:
                    have |= lines

    def file_name(self, name: str) -> str:
        """The name coverage's own data would give the file (its file mapper)."""
        mapper = getattr(getattr(self.cov, "_collector", None), "file_mapper", None)
        return str(mapper(name)) if callable(mapper) else name


def _live_sets(cov: Any, root: str) -> Lines | None:
    """coverage's dict of per-file line sets that every tracer writes into, or None when
    the internals differ from what ``LineTracer`` expects: then it uses ``switch_context``.

    The canary: one dict of sets shared by every tracer, lines not arcs, and a line run in a
    file under the root arriving there as a line number."""
    collector = getattr(cov, "_collector", None)
    live = getattr(collector, "data", None)
    tracers = getattr(collector, "tracers", None)
    if type(live) is not dict or not tracers or getattr(collector, "branch", True):
        return None
    if any(getattr(t, "data", None) is not live for t in tracers):
        return None
    path = os.path.join(root, CANARY)
    namespace: dict[str, Any] = {}
    exec(compile(_CANARY_SOURCE, path, "exec"), namespace)
    namespace["canary"]()
    names = [n for n in list(live) if os.path.basename(n) == CANARY]
    seen = [live.pop(n) for n in names]
    if len(seen) != 1 or type(seen[0]) is not set or not {1, 2} <= seen[0]:
        return None
    return live
