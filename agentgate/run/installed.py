"""The interpreter's own files, noted before the patch's code runs and compared after.

A run of the patch's code can write anywhere the user can: into the project interpreter's
``site-packages`` too, where a ``.pth`` file runs at every start, a ``pytest11`` entry point
is a plugin every later pytest loads, and a library's module can be rewritten (helper-24,
beside flake trial f11). Whatever runs after it with that interpreter runs what it left: in
attribution, the base's later runs (whose failure would then be the base's); in ``check``,
the base oracle's runs and every later check. The runs never write there themselves:
bytecode goes to a ``PYTHONPYCACHEPREFIX`` of their own. So every folder on the
interpreter's ``sys.path`` outside the repository is noted -- each file's size, times and
inode (``ctime``: ``os.utime`` cannot put it back) -- and a difference afterwards makes
what ran after it no evidence. ``__pycache__`` folders are left out: with the prefix set,
nothing reads them. A file planted by code that ran before agentgate noted anything (the
developer's own earlier test run) is not seen here.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from agentgate.run import process

Noted = dict[str, tuple[int, int, int, int]]  # path -> (size, mtime_ns, ctime_ns, inode)

_PATH = "import json, sys; print(json.dumps([p for p in sys.path if p]))"
_SITE_FOLDERS = ("site-packages", "dist-packages")
# What no interpreter reads to import or start: a version control's and tools' folders and
# prose, in an editable sibling checkout on ``sys.path`` that its developer works in while the
# runs go on (flake trial round 4: a saved NOTES.md refused the attribution, BASE_UNAVAILABLE).
_UNREAD_FOLDERS = frozenset((".git", ".hg", ".svn", ".tox", ".nox", ".mypy_cache",
                             ".pytest_cache", ".ruff_cache", ".idea", ".vscode", "node_modules"))
_PROSE = (".md", ".rst")


def folders(python: str, env: Mapping[str, str], cwd: Path, trees: Iterable[Path]) -> list[Path]:
    """The folders on the interpreter's ``sys.path`` that are not in ``trees`` (the
    repository, its worktrees, the runs' scratch): site-packages, the standard library, a
    ``.pth`` file's folders. None when the interpreter cannot say (then nothing is noted).
    Asked in isolated mode (``-I``): with the tree on ``PYTHONPATH`` or in the working
    folder, a ``json.py`` of the patch's would run, before anything is noted."""
    try:
        done = process.capture([python, "-I", "-c", _PATH], cwd=cwd, env=dict(env),
                               timeout=60)
        paths = json.loads(done.stdout) if done.returncode == 0 else []
    except (OSError, ValueError):
        return []
    own = [Path(os.path.realpath(t)) for t in trees]
    found: list[Path] = []
    for entry in paths if isinstance(paths, list) else []:
        path = Path(os.path.realpath(str(entry)))
        if path.is_dir() and not any(path == t or t in path.parents or path in t.parents
                                     for t in own):
            found.append(path)
    return sorted(set(found))


def note(roots: Iterable[Path]) -> Noted:
    """Every file and folder under ``roots``, but ``__pycache__`` folders, a
    ``site-packages`` that is no root itself (a virtualenv's base interpreter keeps its own
    in its standard library's folder: 40,000 files no run of the venv reads), and what no
    interpreter reads (``_UNREAD_FOLDERS``, Markdown and reStructuredText files)."""
    roots = list(roots)
    noted: Noted = {}
    for root in roots:
        for top, dirs, names in os.walk(root):
            # A folder that is a root of its own is walked as one (the standard library's
            # folder holds the interpreter's own site-packages).
            dirs[:] = [d for d in dirs if d != "__pycache__" and Path(top, d) not in roots
                       and d not in _SITE_FOLDERS and d not in _UNREAD_FOLDERS]
            names = [n for n in names if not n.endswith(_PROSE)]
            for name in [*names, *dirs]:
                path = os.path.join(top, name)
                try:
                    st = os.lstat(path)
                except OSError:
                    continue
                noted[path] = (st.st_size if name in names else 0, st.st_mtime_ns,
                               st.st_ctime_ns, st.st_ino)
    return noted


def changed(before: Noted, after: Noted) -> list[str]:
    """The paths added, removed or written between the two notes."""
    return sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))


# --- collectors by entry point ---------------------------------------------------------------

_HOOK = b"pytest_collect_file"
_PLUGINS = "pytest11"


def collectors(folders: Iterable[Path]) -> tuple[str, ...]:
    """The installed pytest plugins (``pytest11`` entry points) whose code names
    ``pytest_collect_file``: they make tests of files that are not Python (pytest-yaml,
    tavern, nbval, pytest-markdown-docs), which no import graph sees (red-team round 6, 04).
    Read from the files alone, nothing imported: each distribution's ``entry_points.txt``,
    then its recorded Python files and the entry modules' packages. agentgate's own plugin
    is not one (it names the hook to judge it)."""
    folders = list(folders)
    found: set[str] = set()
    for folder in folders:
        for meta in sorted((*folder.glob("*.dist-info"), *folder.glob("*.egg-info"))):
            modules = _plugin_modules(meta / "entry_points.txt")
            if not modules or all(m.split(".", 1)[0] == "agentgate" for m in modules):
                continue
            files = [*_recorded(folder, meta), *(f for m in modules
                                                for f in _package_files(folders, m))]
            if any(_names_hook(f) for f in dict.fromkeys(files)):
                found.add(meta.name.split("-", 1)[0])
    return tuple(sorted(found))


def _plugin_modules(path: Path) -> list[str]:
    """The modules a ``[pytest11]`` section names (``name = module:attr``)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    modules, inside = [], False
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("["):
            inside = line == f"[{_PLUGINS}]"
        elif inside and "=" in line and not line.startswith(("#", ";")):
            modules.append(line.split("=", 1)[1].split(":", 1)[0].strip())
    return [m for m in modules if m]


def _recorded(folder: Path, meta: Path) -> list[Path]:
    """The Python files a distribution's ``RECORD`` (or an egg's file list) names."""
    for name in ("RECORD", "installed-files.txt", "SOURCES.txt"):
        try:
            text = (meta / name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        base = folder if name == "RECORD" else meta
        return [base / line.split(",", 1)[0] for line in text.splitlines()
                if line.split(",", 1)[0].endswith(".py")]
    return []


def _package_files(folders: list[Path], module: str) -> list[Path]:
    """The Python files of the top-level package (or module) ``module`` belongs to, in the
    first folder that holds it (an editable install's source is a folder a ``.pth`` adds)."""
    top = module.split(".", 1)[0]
    for folder in folders:
        if (folder / f"{top}.py").is_file():
            return [folder / f"{top}.py"]
        if (folder / top).is_dir():
            return sorted((folder / top).rglob("*.py"))
    return []


def _names_hook(path: Path) -> bool:
    try:
        return _HOOK in path.read_bytes()
    except OSError:
        return False
