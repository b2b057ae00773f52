"""Generate a src-layout monorepo of N Python modules (default 20,000) as a git repository.

Four top-level packages (one a namespace package without ``__init__.py``), subpackages of
100 modules, and a tests/ folder with one test file per 10 modules plus a conftest and a
helper. Modules import each other the ways real code does: absolute and relative, ``from
pkg import submodule``, inside functions, under ``TYPE_CHECKING`` and ``try``. Deterministic
for a given seed.

    python bench/gen_monorepo.py DEST [--modules 20000] [--seed 1]
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
from pathlib import Path

PACKAGES = ("mono_core", "mono_api", "mono_jobs", "mono_ns")  # mono_ns has no __init__.py
PER_SUBPACKAGE = 100
TEST_EVERY = 10
BODY = '''

class Thing{i}:
    """A class so the module has some weight to parse."""

    def __init__(self, value: int = {i}) -> None:
        self.value = value
        self.items = [value * k for k in range(10)]

    def total(self) -> int:
        return sum(self.items) + len(self.items)


def compute_{i}(x: int) -> int:
    """Some arithmetic, some control flow."""
    if x < 0:
        raise ValueError("negative")
    out = 0
    for k in range(x):
        out += k * {i} % 7
    return out


def describe_{i}() -> str:
    return "module {i}: " + ", ".join(str(k) for k in range(5))
'''


def layout(modules: int) -> list[tuple[str, str]]:
    """(dotted name, path) of every source module, in dependency order."""
    source_count = modules - modules // (TEST_EVERY + 1)
    out = []
    for i in range(source_count):
        package = PACKAGES[i % len(PACKAGES)]
        sub = (i // len(PACKAGES)) // PER_SUBPACKAGE
        name = f"{package}.sub{sub}.mod{i}"
        out.append((name, "src/" + name.replace(".", "/") + ".py"))
    return out


def module_text(i: int, name: str, earlier: list[str], rng: random.Random) -> str:
    package = name.rpartition(".")[0]
    lines = ["from __future__ import annotations", "", "import os", "import json",
             "from typing import TYPE_CHECKING"]
    picks = rng.sample(earlier, min(len(earlier), 6))
    for j, target in enumerate(picks):
        tpkg, _, tmod = target.rpartition(".")
        if j == 0 and tpkg == package:
            lines.append(f"from . import {tmod}")
        elif j == 1:
            lines.append(f"from {tpkg} import {tmod}")
        elif j == 2:
            lines.append(f"import {target}")
        elif j == 3:
            lines += ["if TYPE_CHECKING:", f"    from {target} import Thing{tmod[3:]}"]
        elif j == 4:
            lines += ["try:", f"    import {target} as _opt", "except ImportError:",
                      "    _opt = None"]
        else:
            lines += ["", "def lazy():", f"    from {target} import compute_{tmod[3:]}",
                      f"    return compute_{tmod[3:]}(1)"]
    return "\n".join(lines) + BODY.format(i=i)


def test_text(k: int, targets: list[str]) -> str:
    lines = ["from helpers import check", ""]
    lines += [f"from {t.rpartition('.')[0]} import {t.rpartition('.')[2]}" for t in targets]
    lines += ["", "", f"def test_{k}():"]
    lines += [f"    check({t.rpartition('.')[2]})" for t in targets]
    return "\n".join(lines) + "\n"


def generate(dest: Path, modules: int, seed: int) -> int:
    rng = random.Random(seed)
    names = layout(modules)
    files: dict[str, str] = {}
    for i, (name, path) in enumerate(names):
        window = [n for n, _ in names[max(0, i - 400) : i]]
        files[path] = module_text(i, name, window, rng)
    for name, _ in names:
        for depth in range(1, name.count(".") + 1):
            pkg = name.rsplit(".", depth)[0]
            if not pkg.startswith("mono_ns"):
                files.setdefault("src/" + pkg.replace(".", "/") + "/__init__.py", "")
    for k in range(0, len(names), TEST_EVERY):
        targets = [n for n, _ in names[k : k + 3]]
        files[f"tests/test_{k}.py"] = test_text(k, targets)
    files["tests/helpers.py"] = "def check(module):\n    assert module is not None\n"
    files["tests/conftest.py"] = "import os\n"
    files["pyproject.toml"] = '[tool.agentgate]\nsources = ["src"]\ntests = ["tests"]\n'
    for rel, text in files.items():
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return sum(1 for rel in files if rel.endswith(".py"))


def commit_all(dest: Path, message: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}
    if not (dest / ".git").exists():
        subprocess.run(["git", "init", "-q", "-b", "main", str(dest)], check=True, env=env)
    subprocess.run(["git", "-C", str(dest), "add", "-A"], check=True, env=env)
    subprocess.run(["git", "-C", str(dest), "commit", "-q", "--no-verify", "-m", message],
                   check=True, env=env)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dest", type=Path)
    parser.add_argument("--modules", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    if args.dest.exists() and any(args.dest.iterdir()):
        print(f"{args.dest} is not empty; remove it or pick another folder", file=sys.stderr)
        return 64
    count = generate(args.dest, args.modules, args.seed)
    commit_all(args.dest, f"generated monorepo: {count} Python files")
    print(f"{args.dest}: {count} Python files, committed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
