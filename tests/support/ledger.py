"""Freeze ledger records for tests: a record that passes every rule unless told otherwise.

Used wherever a test needs a frozen test (the ledger rules, the commit-time gate, thaw
drills, ``check``, the ledger CLI, the pre-commit end-to-end test).
"""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from agentgate.ledger import records as ledger
from tests.support.git_repo import GitRepo

LEDGER = ".agentgate/freezes"
TAX = "tests/test_tax.py::test_tax"
SESSION = "tests/test_session.py::test_total"
DROP = object()  # an override that removes the field


def freeze_json(test: str, /, *, today: date | None = None, **overrides: Any) -> dict[str, Any]:
    """A valid record for ``test``, frozen ``today`` (default: the real UTC today) for 14 days.

    Keyword overrides replace top-level fields; ``DROP`` removes one.
    """
    day = today or ledger.utc_today()
    data: dict[str, Any] = {
        "version": 1,
        "test": test,
        "verdict": "PRE_EXISTING",
        "state": "frozen",
        "owner": "alice",
        "reason": "fails under PYTHONHASHSEED=3 on main too",
        "frozen_at": day.isoformat(),
        "renewed_at": None,
        "freeze_until": (day + timedelta(days=14)).isoformat(),
        "lease_until": None,
        "frozen_at_sha": "0123456789abcdef0123456789abcdef01234567",
        "evidence": {
            "base_fail": [3],
            "head_fail": [3],
            "mode": "matched",
            "seeds": [0, 1, 2, 3],
            "tz": "UTC",
        },
        "recheck": f"agentgate attribute {test} --mode matched",
        "drill": {"k": 2, "ambient": {}},
        "history": [{"at": day.isoformat(), "event": "frozen"}],
    }
    for key, value in overrides.items():
        if value is DROP:
            data.pop(key, None)
        else:
            data[key] = value
    return data


def write_freeze(
    repo: GitRepo | Path,
    test: str,
    /,
    *,
    today: date | None = None,
    name: str | None = None,
    **overrides: Any,
) -> Path:
    """Write ``freeze_json(test, ...)`` into the default ledger folder (not staged)."""
    root = repo.path if isinstance(repo, GitRepo) else repo
    folder = root / LEDGER
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / (name or ledger.record_file_name(test))
    data = freeze_json(test, today=today, **overrides)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return path
