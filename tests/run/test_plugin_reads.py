"""agentgate's own pytest plugins are never taken for the project's code while recording.

Mutation benchmark round 6: pytest rewrote ``agentgate.run.outcomes`` (loaded with ``-p``)
and cached the rewrite beside it, under the file name of the first recording's path to it; a
later recording loaded that copy, the recorder did not know the code for its own, and the
plugin's reading of every module's namespace (the library-swap check) counted as reading
every name of every module, for every test: a constant only one test reads reran 39 of
wcwidth's 42 tests instead of 1. The plugins opt out of rewriting, and read namespaces past
the watched module class.
"""

from __future__ import annotations

import types

import pytest

from agentgate.run import outcomes
from agentgate.witness import hooks, watch


@pytest.mark.parametrize("module", [outcomes, hooks], ids=["outcomes", "hooks"])
def test_the_plugins_are_not_rewritten(module: types.ModuleType) -> None:
    from _pytest.assertion.rewrite import AssertionRewriter

    assert AssertionRewriter.is_rewrite_disabled(module.__doc__ or "")


def test_a_namespace_is_read_past_the_watched_module_class() -> None:
    seen: list[str] = []
    module = types.ModuleType("app_settings")
    module.LIMIT = 5  # type: ignore[attr-defined]
    module.__class__ = watch.Watched
    watch._SINK[0] = lambda _m, name, _frame, _key: seen.append(name)
    try:
        assert outcomes._namespace(module)["LIMIT"] == 5  # type: ignore[index]
        assert seen == []
        getattr(module, "__dict__")  # noqa: B009 - the read the plugin must not make
        assert seen == ["__dict__"]
    finally:
        watch._SINK[0] = None
        watch.Watcher.changed()
