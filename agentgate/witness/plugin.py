"""pytest plugin entry point: ``--agentgate-witness`` records what each test depended on.

Installed but not asked to record, it only adds its options: no tracer, no audit hook, no
import hook, no recording class registered (pytest's ``stepwise.py`` and
pytest-randomly register their feature classes the same way). ``agentgate witness record``
starts recording before pytest is imported (``agentgate.witness.boot``) and the plugin
adopts that recording; run as ``pytest --agentgate-witness``, recording starts as early as a
plugin can -- in ``pytest_load_initial_conftests``, before the initial conftest files are
imported, so the module-level code they import is recorded too (pytest-cov starts there for
the same reason) -- and what pytest imported before that is charged whole to every test.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from agentgate.witness.hooks import RecorderHooks

# Mirrors agentgate.config.DEFAULT_AMBIENT (a test keeps them equal); not imported from there
# because this module runs in the project's interpreter, where agentgate's config may not load.
DEFAULT_AMBIENT = ("TZ", "LANG", "LC_ALL", "PYTHONHASHSEED", "SOURCE_DATE_EPOCH")
RECORDER_NAME = "agentgate-witness-recorder"
RECORDER_KEY: pytest.StashKey[RecorderHooks] = pytest.StashKey()
# The hooks this module's package re-exports: ``pytest -p agentgate.witness`` registers the
# package (see ``agentgate.witness``, and ``boot``, which imports it before pytest).
HOOKS = ("pytest_addoption", "pytest_collection_modifyitems", "pytest_configure",
         "pytest_load_initial_conftests")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("agentgate", "agentgate skip witnesses")
    group.addoption(
        "--agentgate-witness",
        action="store_true",
        default=False,
        help="Record, per test, the repository code, files, fixtures and environment it used.",
    )
    group.addoption(
        "--agentgate-witness-out",
        metavar="PATH",
        default=None,
        help="Write the raw recording to PATH (agentgate witness record reads it); "
        "without it the recording is stored for the current commit.",
    )
    group.addoption(
        "--agentgate-witness-ambient",
        metavar="NAMES",
        default=",".join(DEFAULT_AMBIENT),
        help="Comma-separated environment variables that make up the ambient fingerprint.",
    )
    group.addoption(
        "--agentgate-witness-shard",
        metavar="I/N",
        default=None,
        help="Run and record only the I-th of N shares of the tests, by test file "
        "(agentgate witness record --shard).",
    )
    group.addoption(
        "--agentgate-witness-carry",
        metavar="FILE",
        default=None,
        help="Deselect the node ids listed in FILE (a JSON list) after collection and write "
        "those collected to FILE.collected (agentgate witness record --incremental).",
    )


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A shard, and an incremental recording's carried tests, deselect after the whole suite
    collected, so collection records as in a full run (``agentgate.witness.shards``)."""
    _carry(config, items)
    shard = config.getoption("agentgate_witness_shard")
    if not shard:
        return
    from agentgate.core.errors import ConfigError
    from agentgate.witness.shards import in_shard, parse

    try:
        index, count = parse(str(shard))
    except ConfigError as exc:
        raise pytest.UsageError(exc.message) from None
    kept = [i for i in items if in_shard(i.nodeid, index, count)]
    dropped = [i for i in items if not in_shard(i.nodeid, index, count)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def _carry(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Carried tests keep their stored witness: they are collected, not run. Which of them
    were collected says which still exist at this revision."""
    path = config.getoption("agentgate_witness_carry")
    if not path:
        return
    import json

    with open(path, encoding="utf-8") as fh:
        carried = set(json.load(fh))
    dropped = [i for i in items if i.nodeid in carried]
    with open(f"{path}.collected", "w", encoding="utf-8") as fh:
        json.dump(sorted(i.nodeid for i in dropped), fh)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [i for i in items if i.nodeid not in carried]


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_load_initial_conftests(
    early_config: pytest.Config, parser: pytest.Parser, args: list[str]
) -> Generator[None, Any, Any]:
    if getattr(early_config.known_args_namespace, "agentgate_witness", False):
        _enable(early_config, early_config.known_args_namespace)
    return (yield)


def pytest_configure(config: pytest.Config) -> None:
    if not config.getoption("agentgate_witness"):
        return
    if getattr(config, "workerinput", None) is not None:
        # An xdist worker: the recording belongs to one process, never to several at once.
        _disable(config)
        return
    if getattr(config.option, "numprocesses", None) or getattr(config.option, "dist", "no") != "no":
        _disable(config)
        raise pytest.UsageError(
            "--agentgate-witness records in one process; run without xdist (-p no:xdist)"
        )
    # Reached without pytest_load_initial_conftests when the plugin was registered late
    # (pytester's inline runs, ``plugins=``); record from here on.
    _enable(config, config.option)


def _enable(config: pytest.Config, options: Any) -> None:
    if RECORDER_KEY in config.stash:
        return
    from agentgate.witness import lines, recorder  # the hooks are installed only here
    from agentgate.witness.hooks import RecorderHooks

    names = tuple(n.strip() for n in str(options.agentgate_witness_ambient).split(",") if n)
    root = str(config.rootpath)
    rec = recorder.booted()
    if rec is not None and rec.root != os.path.abspath(root):
        rec.abandon()
        raise pytest.UsageError(
            f"agentgate.witness.boot recorded under {rec.root}, but pytest's rootdir is "
            f"{root}; pass --rootdir={root} to the boot module"
        )
    if rec is None:
        rec = recorder.Recorder(root=root)
        try:
            rec.start()
        except lines.NoContexts:
            raise pytest.UsageError(lines.NO_CONTEXTS) from None
    rec.adopt(ambient=names, out=options.agentgate_witness_out)
    if rec.unusable:  # boot's lazy start could not trace
        rec.abandon()
        raise pytest.UsageError(rec.unusable)
    hooks = RecorderHooks(rec)
    config.stash[RECORDER_KEY] = hooks
    config.pluginmanager.register(hooks, RECORDER_NAME)


def _disable(config: pytest.Config) -> None:
    hooks = config.stash.get(RECORDER_KEY, None)
    if hooks is not None:
        hooks.recorder.abandon()
        config.pluginmanager.unregister(hooks, RECORDER_NAME)
        del config.stash[RECORDER_KEY]
