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
suite, in one process (``flows.check``). Values are compared too (a test that leaves
``APP_MODE=lenient`` where the base's left ``strict`` leaks anew), without what differs
from run to run: the tree the run took place in, temporary folders, object addresses.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterable, Mapping
from typing import Any

from agentgate.core.text import listed

COLLECTION = ""  # the "node id" of what collection left changed
PROMOTE_CODE = "state-leak"
# A library's attribute, or a fixture or set-up function of a test module, that holds code
# under test (``outcomes.library_swaps``/``module_swaps`` write them under collection): not
# a leak to promote for, a check of the tests' replaced.
SWAP = "swap:"
SWAP_CODE = "check-replaced"


def swapped(fresh: Mapping[str, Mapping[str, str]]) -> list[str]:
    """What code under test replaced, of the leaks the base did not have."""
    return sorted({k[len(SWAP):] for keys in fresh.values() for k in keys
                   if k.startswith(SWAP)})


def swap_detail(names: list[str]) -> str:
    return (f"the code under test replaced {listed(names, 3)}, which the tests rely on (a "
            "library's own function or class, or a fixture or set-up function of a test "
            "module), and the base did not; a patch may not change the tests' checks from "
            "the code under test (a test that needs one replaced does so in its own fixture)")


def found(seen: Iterable[Mapping[str, Any] | None],
          trees: Iterable[str | os.PathLike[str]] = ()) -> dict[str, dict[str, str]]:
    """Node id (``COLLECTION`` for collection) -> key -> the value it was left at, from
    what the outcome plugin wrote for each run; each value ``stable``, the folders the run
    took place in (``trees``) shown as ``<tree>``."""
    places = _places(trees)
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
                        {stable_key(str(k)): stable(str(v), places) for k, v in keys.items()})
        collection = data.get("collection_leaks")
        if isinstance(collection, Mapping) and collection:
            leaks.setdefault(COLLECTION, {}).update(
                {stable_key(str(k)): stable(str(v), places) for k, v in collection.items()})
    return leaks


def _places(trees: Iterable[str | os.PathLike[str]]) -> tuple[str, ...]:
    """The trees' paths as a value may spell them (resolved or not), longest first."""
    found = {p for t in trees for p in (os.fspath(t), os.path.realpath(t)) if len(p) > 1}
    return tuple(sorted(found, key=len, reverse=True))


_ADDRESS = re.compile(r"0x[0-9a-fA-F]{4,}")
# An object's id spelled into a name, in hex or decimal, with nothing alphanumeric around it
# (Jinja2's ``sys.modules["_jinja2_module_templates_7fe0a82e39d0"]``: a new key in every run,
# so head never left what the base left, and every band was promoted: new-user trial).
_ID = re.compile(r"(?<![0-9A-Za-z])(?=[a-f]*[0-9])[0-9a-f]{8,}(?![0-9A-Za-z])")
# agentgate's own worktrees (``.git/agentgate/worktrees/<sha>/<name>``, named as the checkout
# is) and scratch folders (``worktrees/<label>-tmp-<hex>``): the witness is recorded in one,
# the band runs in another.
_WORKTREE = re.compile(r"[^\s'\",()\[\]]*[/\\]\.git[/\\]agentgate[/\\]worktrees[/\\]"
                       r"(?:[0-9a-f]{12,40}(?:-tmp-[0-9a-f]+)?[/\\][^/\\\s'\",()\[\]]+"
                       r"|[^/\\\s'\",()\[\]]+)")
_TEMP = re.compile(re.escape(tempfile.gettempdir()) + r"[^\s'\",()\[\]]*")


SHOWN = 80  # the outcome plugin cuts a value it shows there (``outcomes._shown``)
CUT = "\u2026"  # a value cut short ends with this: where it was cut depends on its paths


def stable(value: str, places: tuple[str, ...] = ()) -> str:
    """A leaked value without what differs from run to run: the tree the run took place in
    (``<tree>``), a temporary folder's name (``<tmp>``), an object's address in its repr (a
    finder left on ``sys.meta_path``), and no tab or line break (an entry's separators)."""
    cut = len(value) >= SHOWN
    for place in places:
        value = value.replace(place, "<tree>")
    value = _TEMP.sub("<tmp>", _WORKTREE.sub("<tree>", value))
    value = _ADDRESS.sub("0x?", value).replace("\t", " ").replace("\n", " ")
    return value + CUT if cut else value


def stable_key(key: str) -> str:
    """A leaked key without an object's id or address in it (``sys.modules:_cache_7fe0a8``)."""
    return _ID.sub("?", _ADDRESS.sub("0x?", key)).replace("\t", " ").replace("\n", " ")


def entries(leaks: Mapping[str, Mapping[str, str]]) -> list[str]:
    """What the witness keeps: one ``NODEID\\tKEY\\tVALUE`` per leak (the value as ``found``
    made it stable), sorted."""
    return sorted(f"{nodeid}\t{key}\t{value}"
                  for nodeid, keys in leaks.items() for key, value in keys.items())


def _known(nodeid: str, key: str, value: str, base: frozenset[str]) -> bool:
    """Whether the base left this key at this value (at any value: a witness recorded
    before values were kept holds ``NODEID\\tKEY``)."""
    prefix = f"{nodeid}\t{key}"
    if prefix in base or f"{prefix}\t{value}" in base:
        return True
    return any(_agree(value, e[len(prefix) + 1:]) for e in base
               if e.startswith(prefix + "\t"))


def _agree(one: str, other: str) -> bool:
    """Two values, either perhaps cut short (``CUT``): a cut one is the start of the other
    (where a value was cut moves with the length of the tree's path in it)."""
    a, b = one.removesuffix(CUT), other.removesuffix(CUT)
    if one.endswith(CUT) and other.endswith(CUT):
        return a.startswith(b) or b.startswith(a)
    if one.endswith(CUT):
        return b.startswith(a)
    if other.endswith(CUT):
        return a.startswith(b)
    return a == b


def fresh(leaks: Mapping[str, Mapping[str, str]],
          base: frozenset[str] | None) -> dict[str, dict[str, str]]:
    """The leaks at head that the base did not have, or had at another value (every one
    when ``base`` is None: nothing says the base had it), by node id."""
    found: dict[str, dict[str, str]] = {}
    for nodeid, keys in sorted(leaks.items()):
        kept = {k: v for k, v in sorted(keys.items())
                if base is None or not _known(nodeid, k, v, base)}
        if kept:
            found[nodeid] = kept
    return found


def new(leaks: Mapping[str, Mapping[str, str]], base: frozenset[str] | None) -> list[str]:
    """One line per test (or collection) that leaks what the base did not."""
    lines = []
    for nodeid, keys in fresh(leaks, base).items():
        what = listed((f"{k} = {v}" for k, v in keys.items()), 3)
        who = "collection" if nodeid == COLLECTION else nodeid
        lines.append(f"{who} leaves {what} changed for the tests after it")
    return lines


def reason_detail(lines: list[str], *, source: str | None) -> str:
    """The promotion's one line: the first leak, how many, and why the whole suite runs;
    ``source``: what said what the base leaves changed (None: nothing could)."""
    base = (f"which it did not at the base ({source})" if source is not None
            else "and nothing says the base did")
    more = f" (and {len(lines) - 1} more)" if len(lines) > 1 else ""
    return (f"{lines[0]}{more}, {base}: tests the band left out run after it in the full "
            "suite and see that state; full suite required")
