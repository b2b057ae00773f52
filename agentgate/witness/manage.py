"""``agentgate witness export / import / show``: moving witnesses around and reading them."""

from __future__ import annotations

import time
from pathlib import Path

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
    result = Result(command="witness export")
    result.extra.update(exported=shas, file=str(target),
                        text=[f"exported {copied} witness(es) to {target}"])
    return result


def import_(root: Path, source: Path, *, replace: bool = False) -> Result:
    """Add the witnesses in ``source`` to this repository's store; an existing witness for
    the same revision is kept unless ``replace`` (a witness is never silently discarded)."""
    if not source.is_file():
        raise AgentgateError(f"{source} does not exist; pass a file written by witness export")
    incoming = Store(source)
    shas = [e.sha for e in incoming.entries()]
    copied, kept = incoming.copy_to(Store.for_repo(root), shas, replace=replace)
    text = [f"imported {copied} witness(es) from {source}"]
    if kept:
        text.append(f"kept {kept} already stored (pass --replace to overwrite them)")
    unknown = [s for s in shas if not gitio.ref_exists(root, s)]
    if unknown:
        text.append(f"{len(unknown)} recorded at commits not in this clone (git fetch)")
    result = Result(command="witness import")
    result.extra.update(imported=copied, kept=kept, text=text)
    return result


def show(root: Path, *, rev: str | None = None, test: str | None = None) -> Result:
    store = Store.for_repo(root)
    result = Result(command="witness show")
    try:
        entries = store.entries()
    except StoreError as exc:
        raise AgentgateError(exc.message) from None
    rows = [
        {"revision": e.sha, "recorded_at": e.recorded_at, "tests": e.tests,
         "incomplete": e.incomplete, "python": e.python}
        for e in entries
    ]
    text = [f"{len(rows)} witness(es) in {store.path}"] if rows else ["no witness stored"]
    text += [f"  {e.sha[:12]}  {_when(e.recorded_at)}  {e.tests} tests, {e.incomplete} "
             f"incomplete" for e in entries]
    result.extra.update(witnesses=rows, text=text)
    if rev is not None or test is not None:
        _detail(root, store, result, rev, test)
    return result


def _detail(root: Path, store: Store, result: Result, rev: str | None, test: str | None) -> None:
    sha = gitio.resolve(root, rev) if rev else (result.extra["witnesses"] or [{}])[0].get(
        "revision")
    witness = store.load(sha) if sha else None
    if witness is None:
        raise AgentgateError(f"no witness recorded at {str(rev or sha)[:12]}")
    if test is None:
        result.extra["tests"] = {n: _test_json(witness, t) for n, t in witness.tests.items()}
        return
    entry = witness.tests.get(test)
    if entry is None:
        raise AgentgateError(f"{test} is not in the witness at {witness.sha[:12]}")
    result.extra["test"] = _test_json(witness, entry)
    result.extra["text"] += [f"{test}: {'complete' if entry.complete else entry.incomplete}"]
    result.extra["text"] += [
        f"  {path}: {', '.join(names)}" for path, names in _grouped(witness, entry).items()
    ]


def _grouped(witness: graph.Witness, test: graph.TestEntry) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = {}
    for path, name in sorted(graph.closure(witness, test)):
        grouped.setdefault(path, []).append(name)
    return grouped


def _test_json(witness: graph.Witness, test: graph.TestEntry) -> dict[str, object]:
    grouped = _grouped(witness, test)
    return {
        "file": test.file, "complete": test.complete, "reason": test.incomplete,
        "outcome": test.outcome, "duration": test.duration, "fixtures": list(test.fixtures),
        "ambient": test.ambient, "depends_on": grouped,
    }


def _when(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(stamp))
