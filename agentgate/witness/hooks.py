"""The pytest hooks that feed a recording (``recorder.Recorder``), and its output.

Registered as a plugin only while recording (``plugin._enable``); the recorder itself has no
pytest in it, so ``boot`` can start it before pytest is imported.

PYTEST_DONT_REWRITE: a rewrite pytest cached beside this file would keep the file name of the
run that wrote it, and the recorder would not know this code for its own. No assertion here.
"""

from __future__ import annotations

import json
import time
from collections.abc import Generator
from typing import Any

import pytest

from agentgate.witness import children, harvest
from agentgate.witness.recorder import Recorder


class RecorderHooks:
    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_protocol(
        self, item: pytest.Item, nextitem: pytest.Item | None
    ) -> Generator[None, Any, Any]:
        rec = self.recorder
        ctx = rec.begin_test(item.nodeid, rec.rel(str(item.path)) or item.nodeid.split("::")[0])
        try:
            return (yield)
        finally:
            rec.end_test(ctx)
            rec.used_fixtures(item.nodeid, harvest.fixture_keys(item))

    @pytest.hookimpl(wrapper=True)
    def pytest_fixture_setup(
        self, fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest
    ) -> Generator[None, Any, Any]:
        if getattr(fixturedef, "scope", None) == "function":
            # Set up anew for each test: its code already belongs to the test's context.
            return (yield)
        ctx = self.recorder.begin_fixture(harvest.fixture_key(fixturedef))
        try:
            return (yield)
        finally:
            self.recorder.end_fixture(ctx)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.recorder.report(report.nodeid, report.duration, failed=report.failed,
                             skipped=report.skipped)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        self.recorder.collect_report(report.nodeid, failed=report.failed)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> Generator[None, Any, Any]:
        result = yield
        finish(self.recorder, session)
        return result


def finish(rec: Recorder, session: pytest.Session) -> None:
    """Stop recording, harvest, and write the raw recording (or store it for HEAD)."""
    rec.stop()
    started = time.perf_counter()
    raw = harvest.raw_recording(rec, session)
    children.merge(rec, raw)  # what the processes the tests started ran
    rec.done()
    raw["harvest_seconds"] = round(time.perf_counter() - started, 3)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if rec.out:
        with open(rec.out, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(raw))  # the C encoder; json.dump encodes in Python
        # No path: it is agentgate's scratch, gone when ``witness record`` has read it.
        said = f"agentgate witness: {len(rec.tests)} tests recorded"
    else:
        said = _store_here(rec.root, raw)
    if reporter is not None:
        reporter.write_line(said)


def _store_here(root: str, raw: dict[str, Any]) -> str:
    """``pytest --agentgate-witness`` without an output file: store it for HEAD."""
    try:
        from pathlib import Path

        from agentgate.core.errors import AgentgateError
        from agentgate.witness import record
    except ImportError as exc:
        return f"agentgate witness: not stored ({exc}); use agentgate witness record"
    try:
        return record.store_raw(Path(root), raw)
    except AgentgateError as exc:
        return f"agentgate witness: not stored: {exc.message}"
