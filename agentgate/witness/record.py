"""``agentgate witness record``: run the full suite once with recording, store the witness.

The suite runs under the project's own interpreter and pinned environment
(``agentgate.interp``), on a clean tree of the revision: the work tree when it is clean and
at that revision, else a temporary ``git worktree``. agentgate may itself run from
pre-commit's isolated environment while the project's interpreter lacks it (or coverage):
then this run alone gets a folder on ``PYTHONPATH`` holding links to agentgate's package and
to coverage's, and ``-p agentgate.witness`` loads the plugin from there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agentgate.core.config import Config
from agentgate.core.config import load as load_config
from agentgate.core.errors import AgentgateError
from agentgate.core.model import Result
from agentgate.git import gitio
from agentgate.run import interp
from agentgate.witness import depgraph as graph
from agentgate.witness import envprint
from agentgate.witness.harvest import RAW_VERSION
from agentgate.witness.store import Store

_PROBE = (
    "import json\nout = {}\n"
    "try:\n import coverage; out['coverage'] = coverage.__version__\nexcept Exception: pass\n"
    "try:\n from agentgate.witness import harvest; out['raw'] = harvest.RAW_VERSION\n"
    "except Exception: pass\n"
    "try:\n import pytest; out['pytest'] = pytest.__version__\nexcept Exception: pass\n"
    "print(json.dumps(out))\n"
)


def record(
    root: Path, config: Config, *, rev: str | None = None, pytest_args: Sequence[str] = ()
) -> Result:
    sha = gitio.resolve(root, rev or "HEAD")
    with _tree_at(root, sha) as tree:
        python = interp.project_python(root, config)
        env = interp.test_env(config, tree)
        with tempfile.TemporaryDirectory(prefix="agentgate-witness-") as tmp:
            shim_note = _make_importable(python, env, tree, Path(tmp) / "shim")
            raw_path = Path(tmp) / "raw.json"
            _run_suite(python, env, tree, raw_path, config, pytest_args)
            raw = _read_raw(raw_path)
        witness = build(root, raw, sha=sha, tree=tree, python=python)
    replaced = Store.for_repo(root).save(witness)
    return _result(witness, replaced, shim_note)


@contextmanager
def _tree_at(root: Path, sha: str) -> Iterator[Path]:
    """The work tree when it is exactly ``sha``; otherwise a temporary worktree of it."""
    if gitio.head_sha(root) == sha and gitio.is_clean(root):
        yield root
        return
    holder = gitio.state_dir(root) / "worktrees"
    holder.mkdir(parents=True, exist_ok=True)
    path = Path(tempfile.mkdtemp(prefix=f"witness-{sha[:12]}-", dir=holder))
    gitio.worktree_add(root, path, sha)
    try:
        yield path
    finally:
        gitio.worktree_remove(root, path)


def _probe(python: str, env: dict[str, str], cwd: Path) -> dict[str, Any]:
    proc = subprocess.run(
        [python, "-c", _PROBE], env=env, cwd=cwd, capture_output=True, text=True
    )
    try:
        found: dict[str, Any] = json.loads(proc.stdout)
    except ValueError:
        raise AgentgateError(f"{python} does not run ({proc.stderr.strip()[:200]}); "
                             "set [tool.agentgate] python") from None
    return found


def _make_importable(python: str, env: dict[str, str], tree: Path, shim: Path) -> str | None:
    """Make the plugin (and coverage) importable in the project's interpreter if needed."""
    found = _probe(python, env, tree)
    if "pytest" not in found:
        raise AgentgateError(f"{python} has no pytest; install the project's test dependencies")
    missing = []
    if found.get("raw") != RAW_VERSION:
        missing.append(Path(__file__).resolve().parents[1])  # the agentgate package
    if "coverage" not in found:
        import coverage

        missing.append(Path(coverage.__file__).resolve().parent)
    if not missing:
        return None
    shim.mkdir()
    for package in missing:
        (shim / package.name).symlink_to(package, target_is_directory=True)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [env.get("PYTHONPATH"), str(shim)]))
    return f"made {', '.join(p.name for p in missing)} importable for the recording run"


def _run_suite(
    python: str, env: dict[str, str], tree: Path, raw_path: Path, config: Config,
    pytest_args: Sequence[str],
) -> None:
    cmd = [
        python, "-m", "pytest", "-p", "agentgate.witness", "--agentgate-witness",
        f"--agentgate-witness-out={raw_path}",
        f"--agentgate-witness-ambient={','.join(config.ambient)}",
        f"--rootdir={tree}", *pytest_args,
    ]
    # pytest's own output goes to stderr: stdout carries agentgate's report.
    proc = subprocess.run(cmd, cwd=tree, env=env, stdout=sys.stderr, stderr=sys.stderr)
    if proc.returncode not in (0, 1) or not raw_path.is_file():
        raise AgentgateError(
            f"pytest exited {proc.returncode} while recording (see its output above); "
            "fix the suite's collection or configuration and record again"
        )


def _read_raw(path: Path) -> dict[str, Any]:
    try:
        raw: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise AgentgateError(f"the recording could not be read ({exc}); record again") from None
    if raw.get("version") != RAW_VERSION:
        raise AgentgateError(
            f"the recording has format {raw.get('version')}, this agentgate reads "
            f"{RAW_VERSION}; record with one agentgate version"
        )
    return raw


def build(root: Path, raw: dict[str, Any], *, sha: str, tree: Path, python: str) -> graph.Witness:
    tracked = set(gitio.ls_tree(root, sha))
    return graph.build(
        raw,
        sha=sha,
        tracked=tracked.__contains__,
        data_ok=lambda p: p in tracked or not (tree / p).exists(),
        env=env_fingerprint(python),
    )


def env_fingerprint(python: str) -> str:
    """The interpreter and its installed distributions, as the project's interpreter sees
    them in isolated mode (no PYTHONPATH, no user site): the same at record and gate time."""
    source = Path(envprint.__file__).read_text(encoding="utf-8")
    proc = subprocess.run(
        [python, "-I", "-c", source], capture_output=True, text=True, env=gitio.no_git_env()
    )
    try:
        return envprint.fingerprint(json.loads(proc.stdout))
    except ValueError:
        return ""


def store_raw(root: Path, raw: dict[str, Any]) -> str:
    """A recording made by ``pytest --agentgate-witness`` directly: stored for HEAD when
    the work tree is exactly HEAD (a witness must describe a commit)."""
    top = gitio.repo_root(root)
    sha = gitio.head_sha(top)
    if sha is None or not gitio.is_clean(top):
        raise AgentgateError(
            "the work tree differs from HEAD, so this run describes no commit; commit first, "
            "or use agentgate witness record"
        )
    load_config(top)  # a broken config fails here, before anything is stored
    witness = build(top, raw, sha=sha, tree=top, python=sys.executable)
    Store.for_repo(top).save(witness)
    return f"agentgate witness: {len(witness.tests)} tests recorded at {sha[:12]}"


def _result(witness: graph.Witness, replaced: bool, note: str | None) -> Result:
    from agentgate.witness.manage import Recorded

    incomplete = sorted(t.nodeid for t in witness.tests.values() if not t.complete)
    why = tuple((n, witness.tests[n].incomplete) for n in incomplete)
    detail = Recorded(witness.sha, len(witness.tests), why, replaced)
    return Result(command="witness record", head=witness.sha, notes=[note] if note else [],
                  detail=detail)
