"""The reversed edges as an int table walk exactly as the plain mapping does."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentgate.graph.reverse import Reverse, packed_fits
from agentgate.graph.types import ImportGraph

NAMES = st.sampled_from([f"m{i}" for i in range(12)])
IMPORTERS = st.dictionaries(NAMES, st.sets(NAMES, min_size=1, max_size=5), max_size=12)


def plain(importers: dict[str, set[str]]) -> dict[str, tuple[str, ...]]:
    return {target: tuple(sorted(found)) for target, found in importers.items() if found}


def walk(importers: dict[str, tuple[str, ...]], seeds: list[str]) -> dict[str, str | None]:
    """The generic breadth-first closure, over a plain mapping."""
    graph = ImportGraph(modules={}, reverse=importers)
    return graph.importers_closure(seeds)


@settings(max_examples=200, deadline=None)
@given(IMPORTERS, st.lists(NAMES, max_size=4, unique=True))
def test_closure_is_the_plain_walk_in_the_same_order(
    importers: dict[str, set[str]], seeds: list[str]
) -> None:
    indexed = Reverse.from_dict(importers)  # seeds found through the name index
    scanned = Reverse(list(indexed.nodes), *indexed.pack())  # no index: seeds by a scan
    loaded = Reverse(indexed.nodes, *indexed.pack())  # as the cache loads it
    expected = list(walk(plain(importers), seeds).items())
    for reverse in (indexed, scanned, loaded):
        assert list(reverse.closure(seeds).items()) == expected
    assert dict(loaded) == plain(importers) and len(loaded) == len(plain(importers))


@settings(max_examples=200, deadline=None)
@given(IMPORTERS, st.lists(st.tuples(NAMES, st.sets(NAMES, max_size=4)), max_size=8),
       st.lists(NAMES, max_size=3, unique=True))
def test_patched_table_is_the_table_built_from_nothing(
    start: dict[str, set[str]], puts: list[tuple[str, set[str]]], seeds: list[str]
) -> None:
    built = Reverse.from_dict(start)
    reverse = Reverse(list(built.nodes), *built.pack())  # a build patches the cached
    final = {k: set(v) for k, v in start.items()}
    for name, found in puts:
        reverse.put(name, found)
        final[name] = set(found)
    fresh = Reverse.from_dict({k: v for k, v in final.items() if v})
    assert dict(reverse) == dict(fresh) == plain(final)
    assert len(reverse) == len(fresh)
    assert all((name in reverse) == bool(final.get(name)) for name in [f"m{i}" for i in range(12)])
    assert list(reverse.closure(seeds).items()) == list(fresh.closure(seeds).items())
    assert dict(reverse.compacted()) == dict(fresh)
    assert len(reverse.compacted().nodes) <= len(reverse.nodes)
    again = Reverse(list(reverse.nodes), *reverse.pack())  # and saves it
    assert again.rows == reverse.rows and again.empty() == reverse.empty()
    assert len(reverse) == len(reverse.nodes) - reverse.empty()
    assert list(again.closure(seeds).items()) == list(fresh.closure(seeds).items())


def test_packed_rows_that_do_not_fit_are_refused() -> None:
    nodes = ["a", "b"]
    flat, starts = Reverse.from_dict({"a": ["b"]}).pack()
    assert packed_fits(2, flat, starts)
    assert not packed_fits(3, flat, starts)  # another table's rows
    assert not packed_fits(2, flat[:-1], starts)  # not whole ids
    assert not packed_fits(2, flat + flat, starts)  # ids past the last row
    with pytest.raises(ValueError):
        Reverse([*nodes, "c"], flat, starts)


def test_a_name_nothing_imports_is_absent() -> None:
    reverse = Reverse.from_dict({"a": ["b"]})
    assert "b" not in reverse and reverse.get("b") is None and reverse["a"] == ("b",)
    reverse.put("a", [])
    assert "a" not in reverse and len(reverse) == 0
    assert reverse.closure(["a", "zzz"]) == {"a": None, "zzz": None}


def test_a_table_of_mostly_deleted_names_is_worth_compacting() -> None:
    users = {f"user{i}": b"edges" for i in range(3000)}  # the forward edges, as the builder has
    reverse = Reverse.from_dict({f"m{i}": [f"user{i}"] for i in range(3000)})
    assert reverse.unused(users) == 0  # every name imports or is imported
    for i in range(2900):
        reverse.put(f"m{i}", [])  # as a history of deletions leaves the table
        del users[f"user{i}"]
    assert reverse.unused(users) == 5800
    small = reverse.compacted()
    assert len(small.nodes) == 200 and dict(small) == dict(reverse)
    assert small.unused(users) == 0


def test_names_that_only_import_are_not_unused() -> None:
    """Test modules import and are imported by nothing: compacting cannot drop them, so
    they must not make every build compact."""
    tests = {f"tests.test_{i}": b"edges" for i in range(5000)}
    reverse = Reverse.from_dict({"app": list(tests)})
    reverse.put("app", [*tests, "tests.test_new"])  # a patched table
    assert reverse.empty() == 5001 and reverse.unused({**tests, "tests.test_new": b"e"}) == 0
