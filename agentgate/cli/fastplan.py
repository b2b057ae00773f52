"""``agentgate plan`` without typer: planning must be a small fraction of collecting a suite,
and typer's start-up (its parameter adapters, rich) alone is ~0.3 s of CPU.

Only a well-formed ``plan`` command line is taken here; anything else (``--help``, a usage
error) goes to the typer app, which owns the help text and the usage messages.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from agentgate.report.render import Format


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(add_help=False, exit_on_error=False)
    parser.add_argument("--base")
    parser.add_argument("--head", default="HEAD")
    parser.add_argument("--format", "-f", dest="fmt", choices=[str(f) for f in Format],
                        default="text")
    parser.add_argument("--explain")
    parser.add_argument("--repo", "-C", default=".")
    return parser


def parse(args: list[str]) -> argparse.Namespace | None:
    """The options of a well-formed ``plan`` call, or None to let typer handle it."""
    try:
        ns, extra = _parser().parse_known_args(args)
    except (argparse.ArgumentError, SystemExit):
        return None
    if extra or not ns.base:
        return None
    return ns


def run(ns: argparse.Namespace) -> int:
    from agentgate.flows import check as checkrun
    from agentgate.git import gitio
    from agentgate.report.render import emit

    root = gitio.repo_root(Path(ns.repo))
    result = checkrun.plan(root, ns.base, ns.head, explain=repo_relative(root, ns.explain))
    emit(result, Format(ns.fmt))
    return result.exit_code


def repo_relative(root: Path, path: str | None) -> str | None:
    """``--explain`` accepts a path as typed from the current folder, or repo-relative."""
    if path is None:
        return None
    candidate = Path(path)
    if candidate.exists():
        try:
            return candidate.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            pass
    return path
