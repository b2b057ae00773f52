"""Process state a test leaves changed for the tests after it, at head against the base.

A band runs the tests that can reach a change; the full suite also runs the others *after*
them, in one process. Code under test that changes what every later caller sees -- the
decimal context's precision, the locale, the working folder, an environment variable, the
socket timeout -- and does not put it back fails tests the band left out, and only in the
full suite's order (red-team: ``decimal.getcontext().prec = 4`` in a changed function; the
band's tests passed, the full suite failed). Neither the import closure nor a witness sees
it: the tests that fail never ran the changed code.

The outcome plugin reads that state around each test and around collection
(``outcomes.process_state``); what a test's own setup or call changed and its teardown left
changed is its leak. The witness keeps the leaks it saw at the base (``depgraph.STATE_LEAKS``).
Without a witness, and for a leak the witness does not explain (what a library sets up at its
first import leaks in whichever test imports it first, which moves with the band), the
leaking tests' files are run at the merge-base to see what they leave changed there
(``flows.check._base_leaks``). A leak at head the base did not have -- a
key a test, or collection, did not leave changed there, or any leak when nothing can say --
means the band cannot stand for the tests it left out: the check promotes and runs the whole
suite, in one process (``flows.check``). Only keys are compared, not values: a temporary
folder's name differs on every run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

COLLECTION = ""  # the "node id" of what collection left changed
PROMOTE_CODE = "state-leak"


def found(seen: Iterable[Mapping[str, Any] | None]) -> dict[str, dict[str, str]]:
    """Node id (``COLLECTION`` for collection) -> key -> the value it was left at, from
    what the outcome plugin wrote for each run."""
    leaks: dict[str, dict[str, str]] = {}
    for data in seen:
        if not isinstance(data, Mapping):
            continue
        # A test's own leaks, and what a shared fixture its setup set up left changed
        # (``outcomes.StateLeaks.fixture_leaks``, keys naming the fixture).
        for field in ("leaks", "fixture_leaks"):
            tests = data.get(field)
            for nodeid, keys in (tests.items() if isinstance(tests, Mapping) else ()):
                if isinstance(keys, Mapping) and keys:
                    leaks.setdefault(str(nodeid), {}).update(
                        {str(k): str(v) for k, v in keys.items()})
        collection = data.get("collection_leaks")
        if isinstance(collection, Mapping) and collection:
            leaks.setdefault(COLLECTION, {}).update(
                {str(k): str(v) for k, v in collection.items()})
    return leaks


def entries(leaks: Mapping[str, Mapping[str, str]]) -> list[str]:
    """What the witness keeps: one ``NODEID\\tKEY`` per leak, sorted."""
    return sorted(f"{nodeid}\t{key}" for nodeid, keys in leaks.items() for key in keys)


def fresh(leaks: Mapping[str, Mapping[str, str]],
          base: frozenset[str] | None) -> dict[str, dict[str, str]]:
    """The leaks at head that the base did not have (every one when ``base`` is None:
    nothing says the base had it), by node id."""
    found: dict[str, dict[str, str]] = {}
    for nodeid, keys in sorted(leaks.items()):
        kept = {k: v for k, v in sorted(keys.items())
                if base is None or f"{nodeid}\t{k}" not in base}
        if kept:
            found[nodeid] = kept
    return found


def new(leaks: Mapping[str, Mapping[str, str]], base: frozenset[str] | None) -> list[str]:
    """One line per test (or collection) that leaks what the base did not."""
    lines = []
    for nodeid, keys in fresh(leaks, base).items():
        what = ", ".join(f"{k} = {v}" for k, v in list(keys.items())[:3])
        more = f" and {len(keys) - 3} more" if len(keys) > 3 else ""
        who = "collection" if nodeid == COLLECTION else nodeid
        lines.append(f"{who} leaves {what}{more} changed for the tests after it")
    return lines


def reason_detail(lines: list[str], *, source: str | None) -> str:
    """The promotion's one line: the first leak, how many, and why the whole suite runs;
    ``source``: what said what the base leaves changed (None: nothing could)."""
    base = (f"which it did not at the base ({source})" if source is not None
            else "and nothing says the base did")
    more = f" (and {len(lines) - 1} more)" if len(lines) > 1 else ""
    return (f"{lines[0]}{more}, {base}: tests the band left out run after it in the full "
            "suite and see that state; full suite required")
