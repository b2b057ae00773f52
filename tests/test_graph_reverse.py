"""The reversed edges as an int table walk exactly as the plain mapping does."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agentgate.graph import ImportGraph
from agentgate.graph_reverse import Reverse

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
    scanned = Reverse(list(indexed.nodes), list(indexed.rows))  # as loaded: by a scan
    expected = list(walk(plain(importers), seeds).items())
    assert list(indexed.closure(seeds).items()) == expected
    assert list(scanned.closure(seeds).items()) == expected


@settings(max_examples=200, deadline=None)
@given(IMPORTERS, st.lists(st.tuples(NAMES, st.sets(NAMES, max_size=4)), max_size=8),
       st.lists(NAMES, max_size=3, unique=True))
def test_patched_table_is_the_table_built_from_nothing(
    start: dict[str, set[str]], puts: list[tuple[str, set[str]]], seeds: list[str]
) -> None:
    reverse = Reverse.from_dict(start)
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


def test_a_name_nothing_imports_is_absent() -> None:
    reverse = Reverse.from_dict({"a": ["b"]})
    assert "b" not in reverse and reverse.get("b") is None and reverse["a"] == ("b",)
    reverse.put("a", [])
    assert "a" not in reverse and len(reverse) == 0
    assert reverse.closure(["a", "zzz"]) == {"a": None, "zzz": None}
