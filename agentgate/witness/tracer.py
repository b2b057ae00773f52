"""Which code objects ran in each context, from ``sys.monitoring`` (Python 3.12+).

A witness needs to know which *blocks* (function bodies, module code) each context ran, not
which lines, and a block ran exactly when one of its code objects was entered. Python 3.12's
``sys.monitoring`` reports ``PY_START``/``PY_RESUME`` per code object; each is disabled at
its code object after the first event and re-armed (``restart_events``) when the context
switches, so every code object costs one event per context. On click's suite recording drops
from 2.6x to 1.8x the plain suite against coverage's line tracing with dynamic contexts
(bench/witness.md). Before 3.12 no hook is cheaper than coverage's C tracer (a Python-level
``sys.settrace`` function, even one that only sees ``call`` events, costs more), so the
recorder keeps coverage there.

Stdlib only, Python 3.9 syntax: it runs in the project's interpreter.
"""

from __future__ import annotations

import sys
from types import CodeType
from typing import Any

_CODES: set[CodeType] = set()
_TOOL_IDS = (4, 3)  # free by convention: 0 debugger, 1 coverage, 2 profiler, 5 optimizer
_monitoring: Any = getattr(sys, "monitoring", None)


def _entered(code: CodeType, offset: int) -> Any:
    _CODES.add(code)
    return _monitoring.DISABLE  # until the next context's restart_events


def _thrown(code: CodeType, offset: int, exc: BaseException) -> None:
    _CODES.add(code)  # not a local event: it cannot be disabled


def free_tool() -> int | None:
    """A ``sys.monitoring`` tool id nobody holds, or None (before 3.12, or all taken)."""
    if _monitoring is None:
        return None
    return next((t for t in _TOOL_IDS if _monitoring.get_tool(t) is None), None)


class Tracer:
    def __init__(self, tool: int) -> None:
        self.by_context: dict[str, set[CodeType]] = {}
        self.tool = tool

    def _events(self) -> list[tuple[int, Any]]:
        ev = _monitoring.events
        return [(ev.PY_START, _entered), (ev.PY_RESUME, _entered), (ev.PY_THROW, _thrown)]

    def start(self, label: str) -> None:
        self.switch(label)
        _monitoring.use_tool_id(self.tool, "agentgate-witness")
        mask = 0
        for event, callback in self._events():
            _monitoring.register_callback(self.tool, event, callback)
            mask |= event
        _monitoring.set_events(self.tool, mask)

    def switch(self, label: str) -> None:
        global _CODES
        _CODES = self.by_context.setdefault(label, set())
        _monitoring.restart_events()

    def stop(self) -> None:
        global _CODES
        _CODES = set()
        _monitoring.set_events(self.tool, 0)
        for event, _callback in self._events():
            _monitoring.register_callback(self.tool, event, None)
        _monitoring.free_tool_id(self.tool)
