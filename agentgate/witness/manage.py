"""``agentgate witness export / import / show``: moving witnesses around and reading them.

The records of these commands and of ``witness record`` are here; ``report.store`` renders
them."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ClassVar

from agentgate.core.errors import AgentgateError
from agentgate.core.model import Result
from agentgate.git import gitio
from agentgate.witness import depgraph as graph
from agentgate.witness.store import Store, StoreError


def export(root: Path, target: Path, *, rev: str | None = None, every: bool = False) -> Result:
    """Write the witness for ``rev`` (default: the newest stored), or all, to one file."""
    store = Store.for_repo(root)
    entries = store.entries()
    if not entries:
        raise AgentgateError("no witness stored here; run agentgate witness record first")
    if every:
        shas = [e.sha for e in entries]
    elif rev is not None:
        sha = gitio.resolve(root, rev)
        if sha not in {e.sha for e in entries}:
            raise AgentgateError(f"no witness recorded at {sha[:12]}; record it or pick --rev")
        shas = [sha]
    else:
        shas = [entries[0].sha]
    copied, _kept = store.copy_to(Store(target), shas, replace=True)
    return Result(command="witness export", detail=Exported(tuple(shas), str(target), copied))


def import_(root: Path, source: Path, *, replace: bool = False) -> Result:
    """Add the witnesses in ``source`` to this repository's store; an existing witness for
    the same revision is kept unless ``replace`` (a witness is never silently discarded)."""
    if not source.is_file():
        raise AgentgateError(f"{source} does not exist; pass a file written by witness export")
    incoming = Store(source)
    shas = [e.sha for e in incoming.entries()]
    copied, kept = incoming.copy_to(Store.for_repo(root), shas, replace=replace)
    unknown = [s for s in shas if not gitio.ref_exists(root, s)]
    return Result(command="witness import",
                  detail=Imported(copied, kept, str(source), len(unknown)))


def show(root: Path, *, rev: str | None = None, test: str | None = None) -> Result:
    store = Store.for_repo(root)
    try:
        entries = store.entries()
    except StoreError as exc:
        raise AgentgateError(exc.message) from None
    rows = tuple(Stored(e.sha, e.recorded_at, e.tests, e.incomplete, e.python) for e in entries)
    shown = Shown(str(store.path), rows)
    if rev is not None or test is not None:
        shown = _detail(root, store, shown, rev, test)
    return Result(command="witness show", detail=shown)


def _detail(root: Path, store: Store, shown: Shown, rev: str | None, test: str | None) -> Shown:
    sha = gitio.resolve(root, rev) if rev else (
        shown.witnesses[0].revision if shown.witnesses else None)
    witness = store.load(sha) if sha else None
    if witness is None:
        raise AgentgateError(f"no witness recorded at {str(rev or sha)[:12]}")
    if test is None:
        views = {n: _view(witness, t) for n, t in witness.tests.items()}
        return Shown(shown.store, shown.witnesses, tests=views)
    entry = witness.tests.get(test)
    if entry is None:
        raise AgentgateError(f"{test} is not in the witness at {witness.sha[:12]}")
    return Shown(shown.store, shown.witnesses, test=(test, _view(witness, entry)))


def _grouped(witness: graph.Witness, test: graph.TestEntry) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = {}
    for path, name in sorted(graph.closure(witness, test)):
        grouped.setdefault(path, []).append(name)
    return grouped


def _view(witness: graph.Witness, test: graph.TestEntry) -> TestView:
    return TestView(
        file=test.file, complete=test.complete, reason=test.incomplete, outcome=test.outcome,
        duration=test.duration, fixtures=test.fixtures, ambient=test.ambient,
        depends_on=_grouped(witness, test),
    )


@dataclass(frozen=True)
class Exported:
    kind: ClassVar[str] = "store"
    exported: tuple[str, ...]
    file: str
    copied: int

    def to_json(self) -> dict[str, Any]:
        return {"exported": list(self.exported), "file": self.file}


@dataclass(frozen=True)
class Imported:
    kind: ClassVar[str] = "store"
    imported: int
    kept: int  # already stored, left as they were
    source: str
    unknown: int  # recorded at commits this clone does not have

    def to_json(self) -> dict[str, Any]:
        return {"imported": self.imported, "kept": self.kept}


@dataclass(frozen=True)
class Stored:
    """One stored witness."""

    revision: str
    recorded_at: float
    tests: int
    incomplete: int
    python: str


@dataclass(frozen=True)
class TestView:
    """One test of a witness, with what it was seen to depend on (path -> names)."""

    file: str
    complete: bool
    reason: str | None
    outcome: str
    duration: float
    fixtures: tuple[str, ...]
    ambient: str
    depends_on: dict[str, list[str]]

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "fixtures": list(self.fixtures)}


@dataclass(frozen=True)
class Shown:
    kind: ClassVar[str] = "store"
    store: str
    witnesses: tuple[Stored, ...]
    tests: dict[str, TestView] | None = None  # --rev: every test of that witness
    test: tuple[str, TestView] | None = None  # --test: that one

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"witnesses": [asdict(w) for w in self.witnesses]}
        if self.tests is not None:
            data["tests"] = {n: t.to_json() for n, t in self.tests.items()}
        if self.test is not None:
            data["test"] = self.test[1].to_json()
        return data


@dataclass(frozen=True)
class Recorded:
    """``witness record``: the witness stored, and its tests it cannot vouch for."""

    kind: ClassVar[str] = "store"
    witness: str
    tests: int
    incomplete: tuple[tuple[str, str | None], ...]  # node id, why; sorted
    replaced: bool  # an earlier recording of the same revision was replaced

    def to_json(self) -> dict[str, Any]:
        return {"witness": self.witness, "tests": self.tests,
                "incomplete": [n for n, _ in self.incomplete], "replaced": self.replaced}
