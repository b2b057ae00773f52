"""Following a pytest run as it goes: agentgate's own outcome plugin appends one JSON line per
finished test to a feed file (``run.outcomes``, ``--agentgate-progress``); a thread here reads
the new lines while the run lasts and hands the counts to a ``Display`` (issue 13: ``check``
and the pre-push hook printed nothing until they finished).

The counts are the plugin's, never parsed from pytest's terminal output, which a conftest can
rewrite. Reading stops when the run has ended and the last complete line is read.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import threading
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

PROGRESS_OPTION = "--agentgate-progress"  # as run/outcomes.py defines it (not imported: pytest)
_POLL = 0.1  # seconds between reads of the feed while the run lasts
_BAD = frozenset({"failed", "error"})


# What a report calls each run, by label (run/band.py's labels and the witness recording).
RUN_NAMES = {"band": "band", "full": "full suite", "property": "property band",
             "property-marked": "property band (marked)", "shadow": "shadow full suite",
             "patch-tests": "the patch's test files, run apart",
             "witness": "full suite, recording the witness"}


def run_name(label: str) -> str:
    """A run's label as a report names it ("full:" and "failed in the full" missed a word)."""
    return RUN_NAMES.get(label, label)


@dataclass(frozen=True)
class Counts:
    label: str  # the run's label: "band", "full", "property", "shadow", "witness"
    done: int = 0
    total: int | None = None  # None until pytest has collected
    failed: int = 0  # failures and errors


class Display(Protocol):
    """Where the counts go: ``update`` as they change, ``finish`` once the run has ended."""

    def update(self, counts: Counts) -> None: ...

    def finish(self, counts: Counts) -> None: ...


def count(counts: Counts, line: str) -> Counts:
    """``counts`` after one feed line; a line that is not one of the plugin's changes nothing."""
    try:
        event = json.loads(line)
    except ValueError:
        return counts
    if not isinstance(event, dict):
        return counts
    if isinstance(event.get("collected"), int):
        return replace(counts, total=event["collected"])
    if isinstance(event.get("test"), str):
        bad = event.get("outcome") in _BAD
        return replace(counts, done=counts.done + 1, failed=counts.failed + bad)
    return counts


class _Tail(threading.Thread):
    def __init__(self, path: Path, label: str, display: Display) -> None:
        super().__init__(name=f"agentgate-progress-{label}", daemon=True)
        self.path, self.display = path, display
        self.counts = Counts(label)
        self.stopped = threading.Event()
        self._offset = 0
        self._partial = ""

    def run(self) -> None:
        while not self.stopped.wait(_POLL):
            self.read()
        self.read()  # what the run wrote after the last read

    def read(self) -> None:
        try:
            with self.path.open("r", encoding="utf-8", errors="replace") as feed:
                feed.seek(self._offset)
                text = feed.read()
                self._offset = feed.tell()
        except OSError:
            return
        *lines, self._partial = (self._partial + text).split("\n")
        before = self.counts
        for line in lines:
            self.counts = count(self.counts, line)
        if self.counts != before:
            self.display.update(self.counts)


@contextlib.contextmanager
def following(path: Path, label: str, display: Display) -> Iterator[None]:
    """Tail ``path`` (the feed of one run, labelled ``label``) while the block runs."""
    path.write_text("", encoding="utf-8")
    tail = _Tail(path, label, display)
    display.update(tail.counts)
    tail.start()
    try:
        yield
    finally:
        tail.stopped.set()
        tail.join()
        display.finish(tail.counts)


# --- the live feed through a pipe --------------------------------------------------------------

class Piped(threading.Thread):
    """The feed of one run read from a pipe the run inherits (``PROGRESS_OPTION=fd:N``): what
    the run said as each test finished, kept by this process where the run cannot take it
    back. A file the run writes at its end (JUnit, the outcome plugin's) can be rewritten by
    code under test once the tests are done (red-team: an ``atexit`` handler wrote "passed"
    over both); what came through the pipe cannot."""

    def __init__(self, label: str, display: Display | None) -> None:
        super().__init__(name=f"agentgate-feed-{label}", daemon=True)
        self.read_fd, self.write_fd = os.pipe()
        self.display = display
        self.counts = Counts(label)
        self.outcomes: dict[str, str] = {}  # node id -> the worst outcome the feed said
        self.stopped = threading.Event()
        self._partial = b""

    @property
    def option(self) -> str:
        return f"{PROGRESS_OPTION}=fd:{self.write_fd}"

    def run(self) -> None:
        while True:
            ready, _, _ = select.select([self.read_fd], [], [], _POLL)
            if ready:
                data = os.read(self.read_fd, 1 << 16)
                if data:
                    self._take(data)
                    continue
                return  # every writer closed it
            if self.stopped.is_set():
                return  # the run ended and nothing more is waiting

    def _take(self, data: bytes) -> None:
        *lines, self._partial = (self._partial + data).split(b"\n")
        before = self.counts
        for raw in lines:
            line = raw.decode("utf-8", "replace")
            self.counts = count(self.counts, line)
            self._note(line)
        if self.display is not None and self.counts != before:
            self.display.update(self.counts)

    def _note(self, line: str) -> None:
        with contextlib.suppress(ValueError):
            event = json.loads(line)
            if isinstance(event, dict) and isinstance(event.get("test"), str):
                test, said = event["test"], str(event.get("outcome"))
                if self.outcomes.get(test) not in _BAD:
                    self.outcomes[test] = said

    def failed(self) -> frozenset[str]:
        """The tests the feed said failed or errored."""
        return frozenset(t for t, o in self.outcomes.items() if o in _BAD)


@contextlib.contextmanager
def piped(label: str, display: Display | None) -> Iterator[Piped]:
    """A pipe feed for one run: pass ``feed.option`` and ``feed.write_fd`` to the run; once
    the block ends (the run and its process group are gone), what is left is read."""
    feed = Piped(label, display)
    if display is not None:
        display.update(feed.counts)
    feed.start()
    try:
        yield feed
    finally:
        os.close(feed.write_fd)
        feed.stopped.set()
        feed.join(timeout=5)
        os.close(feed.read_fd)
        if display is not None:
            display.finish(feed.counts)
