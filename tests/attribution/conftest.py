"""Fixtures shared by the attribution tests."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_plugin_autoload(monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine's pytest plugins (hypothesis, benchmark...) only slow these runs down."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
