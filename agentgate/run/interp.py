"""Which interpreter runs a project's tests, and the environment a test run is pinned to.

Shared by the band, attribution and thaw drills so every run of a project's tests agrees on
the interpreter, the pinned ambient inputs, and which tree's code is imported.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from agentgate.core.config import Config
from agentgate.core.errors import ConfigError
from agentgate.git import gitio


def project_python(
    root: Path, config: Config, *, base: str | None = None, head: str | None = None
) -> str:
    """Config ``python``, else ``$VIRTUAL_ENV``, else ``.venv``, else ``python3`` on PATH --
    never a file the branch supplies (``refuse_branch_python``; ``base``/``head``: the range).

    ``python3`` is looked up with agentgate's own virtualenv (pre-commit's isolated hook
    environment, for one) taken off PATH: that environment has agentgate, not the project's
    dependencies.
    """
    python = _candidate(root, config)
    refuse_branch_python(root, python, base=base, head=head)
    return python


def _candidate(root: Path, config: Config) -> str:
    if config.python:
        return _configured(root, config.python)
    for venv in (os.environ.get("VIRTUAL_ENV"), str(root / ".venv")):
        if venv and not _is_own_env(Path(venv)):
            candidate = Path(venv) / "bin" / "python"
            if candidate.exists():
                return str(candidate)
    found = shutil.which("python3", path=_path_without_own_env())
    return found or sys.executable


def refuse_branch_python(
    root: Path, python: str, *, base: str | None = None, head: str | None = None
) -> None:
    """Issue 11: a patch must not choose the interpreter that judges it. A committed
    ``.venv/bin/python`` that exits 0 would make every run green, so the interpreter -- the
    path given and the file it resolves to, and every folder on the way (a committed link
    to ``/bin/true`` counts) -- is never a file git tracks (index, HEAD, base, head, or any
    commit of the range), nor anything under the git dir, where the trees under test live.
    A developer's untracked, git-ignored ``.venv`` is the ordinary case and passes."""
    top = gitio.repo_root(root).resolve()
    given, real = Path(os.path.abspath(python)), Path(python).resolve()
    git_dir = gitio.common_dir(top).resolve()
    if given.is_relative_to(git_dir) or real.is_relative_to(git_dir):
        raise _refusal(python, "lies in the repository's git dir")
    rels = sorted({r for p in (given, real) for r in _repo_paths(p, top)})
    if not rels:
        return
    revs = tuple(dict.fromkeys(r for r in ("HEAD", base, head) if r))
    if not gitio.has_commits(top):
        revs = tuple(r for r in revs if r != "HEAD")
    span = (base, head) if base and head else None
    hit = gitio.tracked_files(top, rels, revs=revs, changed_in=span)
    if hit:
        raise _refusal(python, f"is tracked by git or changed by the range ({min(hit)})")


def _repo_paths(path: Path, top: Path) -> list[str]:
    """``path`` and each folder above it inside ``top``, as paths from the top."""
    if not path.is_relative_to(top) or path == top:
        return []
    rel = path.relative_to(top)
    return [rel.as_posix(), *(p.as_posix() for p in rel.parents if p != Path("."))]


def _refusal(python: str, why: str) -> ConfigError:
    return ConfigError(
        f"the interpreter {python} {why}: a patch cannot choose what runs its tests; set "
        "[tool.agentgate] python to an interpreter outside the repository, or use an "
        "untracked, git-ignored virtualenv"
    )


def _configured(root: Path, value: str) -> str:
    path = Path(value)
    if not path.is_absolute() and "/" in value:
        path = root / path
    resolved = str(path) if path.exists() else shutil.which(value)
    if resolved is None:
        raise ConfigError(
            f"[tool.agentgate] python = {value!r} was not found; set it to an interpreter path"
        )
    return resolved


def _in_venv() -> bool:
    return sys.prefix != sys.base_prefix


def _is_own_env(venv: Path) -> bool:
    """Whether ``venv`` is the isolated env agentgate itself runs in (not the project's)."""
    if not _in_venv() or not os.environ.get("PRE_COMMIT"):
        return False
    try:
        return venv.resolve() == Path(sys.prefix).resolve()
    except OSError:
        return False


def _path_without_own_env() -> str:
    entries = os.environ.get("PATH", "").split(os.pathsep)
    if not _in_venv() or not os.environ.get("PRE_COMMIT"):
        return os.pathsep.join(entries)
    own = Path(sys.prefix).resolve()
    kept = [e for e in entries if e and not _under(Path(e), own)]
    return os.pathsep.join(kept)


def _under(path: Path, parent: Path) -> bool:
    try:
        return path.resolve().is_relative_to(parent)
    except OSError:
        return False


def source_paths(tree: Path, config: Config) -> list[str]:
    """The tree's own source roots, first on ``sys.path`` so its code is the code imported
    (an editable install of another checkout comes later on the path and never wins)."""
    return [str((tree / src).resolve()) for src in config.sources]


def test_env(
    config: Config, tree: Path, *, seed: int | None = None, extra: dict[str, str] | None = None
) -> dict[str, str]:
    """The environment for running a tree's tests: pinned ambient inputs, the tree's code
    first on the path, git's hook variables stripped, no user site-packages."""
    env = gitio.no_git_env()
    env.update(config.pinned_env())
    if seed is not None:
        env["PYTHONHASHSEED"] = str(seed)
    env["PYTHONPATH"] = os.pathsep.join(source_paths(tree, config))
    env["PYTHONNOUSERSITE"] = "1"
    # The caller's interpreter and pytest settings are not the project's: a startup file, a
    # safe-path flag or extra addopts would change what runs and what is imported.
    for name in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTHONSAFEPATH", "PYTHONSTARTUP",
                 "PYTHONINSPECT"):
        env.pop(name, None)
    env.update(extra or {})
    return env


# One interpreter start for both questions: pytest (required), pytest-xdist (optional).
_PROBE = ("import importlib.util, sys, pytest\n"
          "sys.stdout.write('xdist' if importlib.util.find_spec('xdist') else '')\n")


def require_pytest(python: str, env: dict[str, str], cwd: Path) -> bool:
    """Exit 64 when the project's interpreter has no pytest (issue 13: a push from a shell
    without the venv active was reported as failed tests, exit 1); whether it has
    pytest-xdist, found by the same probe."""
    from agentgate.run import process  # the band's path only; the commit hook never gets here

    try:
        done = process.capture([python, "-c", _PROBE], cwd=cwd, env=env, timeout=60)
    except OSError as exc:
        raise ConfigError(f"cannot run the project's interpreter {python!r} ({exc}); set "
                          "[tool.agentgate] python") from None
    if done.returncode != 0:
        raise ConfigError(f"the project's interpreter {python} has no pytest; install pytest "
                          "there, activate the project's virtualenv, or set [tool.agentgate] "
                          "python to one that has it")
    return done.stdout.strip() == b"xdist"
