"""``agentgate init``: a starter config, scope file and manifest, and the hook snippet."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from agentgate.core.config import PYPROJECT, Config
from agentgate.core.errors import ConfigError, GitError
from agentgate.core.model import Result
from agentgate.gate import manifest
from agentgate.git import gitio
from agentgate.report.project import InitDetail

STARTER_SECTION = """
[tool.agentgate]
# Every key is optional; these are the defaults agentgate uses without this section.
scope_file = "{scope_file}"
manifest = "{manifest}"
ledger = "{ledger}"
fixtures = {fixtures}
protected = []          # path prefixes whose impact always promotes to the full suite
"""

PRE_COMMIT_SNIPPET = """\
# .pre-commit-config.yaml, then:
#   pre-commit install -t pre-commit -t prepare-commit-msg -t commit-msg -t pre-push
default_install_hook_types: [pre-commit, prepare-commit-msg, commit-msg, pre-push]
repos:
  - repo: https://github.com/OWNER/agentgate   # where your agentgate hook repo lives
    rev: COMMIT_SHA   # until a release is tagged: a full commit sha of that repository
    hooks:
      - id: agentgate-trust
      - id: agentgate-trust-prepare
      - id: agentgate-trust-msg
      - id: agentgate-push
"""


def _toml_list(values: tuple[str, ...]) -> str:
    return "[" + ", ".join(f'"{v}"' for v in values) + "]"


def init(root: Path, config: Config, *, force: bool = False) -> Result:
    """Raises ConfigError, before writing anything, when a manifest exists that the work tree
    no longer matches and ``force`` is not given (issue 13: ``init`` re-recorded it over an
    edited fixture, silently blessing the edit)."""
    problems = None if force else manifest.verify_tree(root, config)
    if problems:
        raise ConfigError(_refusal(config, len(problems)))
    result = Result(command="init")
    found = [] if config.has_section else fixture_folders(root, config.tests)
    if found:
        # The starter section lists them, and the manifest records them: a test's data (an
        # expected-output file) is what an agent edits to make a broken test pass.
        config = dataclasses.replace(config, fixtures=(*config.fixtures, *found))
        result.notes.append(f"test data found: {', '.join(found)} (in 'fixtures')")
    result.notes.append(_write_config(root, config))
    result.notes.append(_write_scope(root, config))
    result.notes.append(_write_manifest(root, config, unchanged=problems == []))
    result.notes.append("commit these files on their own, as a human: they are trust files")
    try:
        hidden = gitio.ignores(root, [config.scope_file, config.manifest, PYPROJECT])
    except GitError:
        hidden = []  # no repository to ask: the commit is the user's to make
    if hidden:
        # New-user trial (tabulate's ``.gitignore`` holds ``.*``): ``git add -A`` left the
        # scope out, and the scope rule went quietly off.
        result.notes.append(f"git ignores {', '.join(hidden)}: add them with `git add -f "
                            f"{' '.join(hidden)}`, or a commit leaves them out and their "
                            "rules are off")
    result.detail = InitDetail(PRE_COMMIT_SNIPPET)
    return result


def _refusal(config: Config, count: int) -> str:
    return (f"{config.manifest} exists and {count} fixture file(s) differ from it; "
            "nothing written (see 'agentgate fixtures verify'; 'agentgate init --force' "
            "re-records it)")


def _write_manifest(root: Path, config: Config, *, unchanged: bool) -> str:
    if unchanged:
        return f"{config.manifest} exists and matches the fixtures: left as it is"
    path, count = manifest.record(root, config)
    return f"wrote {path.relative_to(root).as_posix()} ({count} fixture file(s))"


def _write_config(root: Path, config: Config) -> str:
    if config.has_section:
        return f"{PYPROJECT} already has [tool.agentgate]: left as it is"
    section = STARTER_SECTION.format(
        scope_file=config.scope_file,
        manifest=config.manifest,
        ledger=config.ledger,
        fixtures=_toml_list(config.fixtures),
    )
    path = root / PYPROJECT
    existing = path.read_text(encoding="utf-8") if path.exists() else ""
    glue = "" if not existing or existing.endswith("\n") else "\n"
    path.write_text(existing + glue + section.lstrip("\n" if not existing else ""), "utf-8")
    return f"added [tool.agentgate] to {PYPROJECT}"


def _write_scope(root: Path, config: Config) -> str:
    path = root / config.scope_file
    if path.exists():
        return f"{config.scope_file} exists: left as it is"
    roots = [s for s in config.sources if s != "."] or _top_level_packages(root)
    lines = [
        "# Where a patch may go: path prefixes, one a line. Human-edited; an agent's commit",
        "# that changes this file is blocked. Narrow it to the task at hand.",
        *roots,
        *config.tests,
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(dict.fromkeys(lines)) + "\n", encoding="utf-8")
    return f"wrote {config.scope_file} ({len(roots) + len(config.tests)} prefixes)"


def _top_level_packages(root: Path) -> list[str]:
    skip = {"tests", "test", "docs", "build", "dist", "venv", ".venv"}
    return sorted(
        p.name
        for p in root.iterdir()
        if p.is_dir()
        and not p.name.startswith(".")
        and p.name not in skip
        and (p / "__init__.py").exists()
    )


_CODE_SUFFIXES = (".py", ".pyc", ".pyo", ".pyi")
_NOT_DATA = frozenset(("__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache",
                       ".hypothesis", "node_modules"))


def fixture_folders(root: Path, test_roots: tuple[str, ...], depth: int = 3) -> list[str]:
    """Folders of test data under the test roots, for the starter ``fixtures`` list: a folder
    holding at least one file that is not Python and no test module, conftest or package
    ``__init__`` anywhere in it (``tests/files/*.sql``, ``tests/unit/data``). A folder of
    tests is looked into, down to ``depth`` levels, never listed."""
    found: list[str] = []

    def visit(folder: Path, level: int) -> None:
        try:
            children = sorted(p for p in folder.iterdir() if p.is_dir()
                              and not p.is_symlink() and not p.name.startswith(".")
                              and p.name not in _NOT_DATA)
        except OSError:
            return
        for child in children:
            data, code = _contents(child)
            if data and not code:
                found.append(child.relative_to(root).as_posix())
            elif level < depth:
                visit(child, level + 1)

    for name in test_roots:
        top = root / name
        if top.is_dir() and not top.is_symlink():
            visit(top, 1)
    return found


def _contents(folder: Path) -> tuple[bool, bool]:
    """(holds a file that is not Python, holds a test module, conftest or ``__init__``)."""
    data = False
    for _here, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d not in _NOT_DATA and not d.startswith(".")]
        for name in files:
            if name == "conftest.py" or name == "__init__.py" or (
                    name.endswith(".py") and (name.startswith("test_")
                                              or name.endswith("_test.py"))):
                return data, True
            if not name.endswith(_CODE_SUFFIXES):
                data = True
    return data, False
