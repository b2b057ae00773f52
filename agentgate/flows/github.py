"""``agentgate ci github``: a saved ``check --format json`` result published to GitHub Actions.

The action (``action.yml``) runs the check with ``--format json`` into a file, then this:
annotations on stdout (GitHub reads workflow commands from a step's output), the step outputs
appended to ``$GITHUB_OUTPUT``, and what did not fit as an annotation appended to
``$GITHUB_STEP_SUMMARY`` after the check's own markdown. The exit code is the check's, so the
step fails exactly when the check did; a missing result after an exit 0 fails closed (64).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from agentgate.core.errors import EXIT_OK, AgentgateError
from agentgate.report import github
from agentgate.report.render import SUMMARY_ENV

OUTPUT_ENV = "GITHUB_OUTPUT"


def publish(
    result_file: Path, exit_code: int | None, limit: int, *,
    env: Mapping[str, str] | None = None, out: TextIO | None = None,
) -> int:
    env, out = os.environ if env is None else env, out or sys.stdout
    data = read_result(result_file)
    code = _exit_code(data, exit_code, result_file)
    found = (github.rank(data, limit) if data is not None
             else github.cap([github.missing_annotation(code)], limit))
    _append(env, OUTPUT_ENV, github.output_text(github.outputs(data, code, str(result_file))))
    summary = github.summary(found) if data is not None else github.missing_result(code)
    _append(env, SUMMARY_ENV, summary)
    out.write("".join(github.command(a) + "\n" for a in found.shown))
    out.write((github.headline(data) if data is not None else f"agentgate check: exit {code}")
              + f" (result: {result_file})\n")
    out.flush()
    return code


def read_result(path: Path) -> dict[str, Any] | None:
    """The check's JSON result, or None when there is none (the check stopped first)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and "verdict" in data else None


def _exit_code(data: Mapping[str, Any] | None, given: int | None, path: Path) -> int:
    """The process's exit code wins (it is what happened); a check that exited 0 without a
    result is never a pass."""
    code = given if given is not None else (int(data["exit_code"]) if data else None)
    if data is None and code in (None, EXIT_OK):
        raise AgentgateError(f"{path} holds no check result; run 'agentgate check --format "
                             "json' into it first")
    assert code is not None
    return code


def _append(env: Mapping[str, str], name: str, text: str) -> None:
    target = env.get(name)
    if not target or not text:
        return
    try:
        with open(target, "a", encoding="utf-8") as file:
            file.write(text)
    except OSError as exc:
        why = exc.strerror or exc
        raise AgentgateError(f"cannot append to ${name} ({target}): {why}") from None
