"""The freeze ledger as a revision commits it: what ``plan`` and ``check`` both judge.

A range is made of commits: an untracked or uncommitted record in the ledger folder is not
part of it (issue 13: ``plan`` read the work tree and said blocked for a stray file, while
``check`` read the clean tree of head and said scoped). The records at the revision, and the
test files they name, are laid into a scratch folder and judged there by the same rules.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

from agentgate.core.config import Config, repo_relative
from agentgate.core.model import Reason
from agentgate.git import gitio, overlay
from agentgate.git.scratch import scratch_dir
from agentgate.ledger import records


def check_at(root: Path, config: Config, rev: str, *, today: date | None = None) -> list[Reason]:
    """``records.check`` of the ledger committed at ``rev``; empty when it has none."""
    files = sorted(gitio.ls_tree(root, rev, (config.ledger,)))
    if not files:
        return []
    with scratch_dir("ledger", root) as tree:
        overlay.lay_over(root, rev, tree, files)
        overlay.lay_over(root, rev, tree, _named_tests(tree, files))
        return records.check(tree, config, today=today)


def _named_tests(tree: Path, files: list[str]) -> list[str]:
    """The test files the records name (the rules look each test up in its file)."""
    named = (_test_file(tree / f) for f in files if f.endswith(".json"))
    return sorted({path for path in named if path and repo_relative(path)})


def _test_file(record: Path) -> str | None:
    try:
        data = json.loads(record.read_bytes())
    except (OSError, ValueError):
        return None  # the rules report the record itself
    test = data.get("test") if isinstance(data, dict) else None
    return test.partition("::")[0] or None if isinstance(test, str) else None
