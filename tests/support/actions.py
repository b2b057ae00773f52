"""Runs a composite GitHub Action's steps locally, as the runner would: each step's ``run:``
with ``bash --noprofile --norc -eo pipefail`` (GitHub's ``shell: bash``), its ``env:`` and
``run:`` expressions substituted from the ``inputs``, ``github``, ``runner`` and ``steps``
contexts, a fresh ``$GITHUB_OUTPUT`` per step whose lines become ``steps.<id>.outputs``, and
one ``$GITHUB_STEP_SUMMARY`` for the job. Steps stop at the first failure, as GitHub's do.

Only plain context look-ups are understood (``${{ inputs.base }}``): an operator or a function
in action.yml fails the test here instead of being guessed at. A missing property of a known
context is empty, as GitHub evaluates it.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}")
LOOKUP = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z_][A-Za-z0-9_-]*)*")


@dataclass
class ActionRun:
    code: int  # the exit code of the last step that ran
    stdout: str
    stderr: str
    outputs: dict[str, str]  # the action's outputs, as its outputs: section maps them
    summary: str
    steps: dict[str, dict[str, Any]] = field(default_factory=dict)

    def commands(self, level: str) -> list[str]:
        return [line for line in self.stdout.splitlines() if line.startswith(f"::{level} ")]


def load(action_file: Path) -> dict[str, Any]:
    action: dict[str, Any] = yaml.safe_load(action_file.read_text(encoding="utf-8"))
    assert action["runs"]["using"] == "composite"
    return action


def run(
    action_file: Path, *, cwd: Path, work: Path, inputs: dict[str, str], github: dict[str, Any],
    env: dict[str, str],
) -> ActionRun:
    action = load(action_file)
    temp = work / "runner-temp"
    temp.mkdir(parents=True, exist_ok=True)
    summary = work / "step-summary.md"
    summary.touch()
    unknown = set(inputs) - set(action["inputs"])
    assert not unknown, f"inputs the action does not declare: {unknown}"
    context: dict[str, Any] = {
        "inputs": {k: str(v.get("default", "")) for k, v in action["inputs"].items()} | inputs,
        "github": github | {"action_path": str(action_file.parent)},
        "runner": {"temp": str(temp)},
        "steps": {},
    }
    base_env = env | {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary),
                      "RUNNER_TEMP": str(temp), "GITHUB_ACTION_PATH": str(action_file.parent)}
    out, err, code = [], [], 0
    for index, step in enumerate(action["runs"]["steps"]):
        proc, outputs = _step(step, index, context, base_env, cwd, work)
        out.append(proc.stdout)
        err.append(proc.stderr)
        context["steps"][step["id"]] = {"outputs": outputs}
        code = proc.returncode
        if code:
            break
    mapped = {name: expand(spec["value"], context) for name, spec in action["outputs"].items()}
    return ActionRun(code, "".join(out), "".join(err), mapped,
                     summary.read_text(encoding="utf-8"), context["steps"])


def _step(
    step: dict[str, Any], index: int, context: dict[str, Any], base_env: dict[str, str],
    cwd: Path, work: Path,
) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    assert step["shell"] == "bash", "a composite step must name its shell"
    output = work / f"output-{index}"
    output.touch()
    step_env = {k: expand(str(v), context) for k, v in (step.get("env") or {}).items()}
    proc = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", expand(step["run"], context)],
        cwd=cwd, env=base_env | step_env | {"GITHUB_OUTPUT": str(output)},
        capture_output=True, text=True,
    )
    return proc, parse_outputs(output.read_text(encoding="utf-8"))


def expand(text: str, context: dict[str, Any]) -> str:
    return EXPRESSION.sub(lambda m: _lookup(m.group(1).strip(), context), text)


def _lookup(expression: str, context: dict[str, Any]) -> str:
    assert LOOKUP.fullmatch(expression), f"not a plain context look-up: {expression!r}"
    head, *rest = expression.split(".")
    value: Any = context[head]  # an unknown context is a KeyError: a typo in action.yml
    for name in rest:
        value = value.get(name) if isinstance(value, dict) else None
    return "" if value is None else str(value)


def parse_outputs(text: str) -> dict[str, str]:
    """``name=value`` lines and ``name<<DELIMITER`` blocks, as the runner reads them."""
    found: dict[str, str] = {}
    lines = iter(text.splitlines())
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            found[name] = "\n".join(iter(lambda: next(lines), delimiter))
        elif line:
            name, value = line.split("=", 1)
            found[name] = value
    return found

