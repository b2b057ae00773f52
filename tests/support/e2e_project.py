"""The example project and the staged edits that the hook end-to-end tests commit for real.

Shared by every test in tests/e2e/, whichever driver installed the hooks (plain ``hooks/``
scripts through ``core.hooksPath``, or the pre-commit framework: see hook_drivers.py), and by
tests/flows/test_check_prepush.py. Every git call is a real git; nothing is mocked.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import agentgate
from tests.support.git_repo import GitRepo, git_env
from tests.support.text import unwrap

CHECKOUT = Path(agentgate.__file__).resolve().parent.parent
HOW_TO = "commit the trust change on its own, as a human, and the code in another commit"

SCOPE = ".agentgate/scope"
MANIFEST = ".agentgate/fixtures.sha256"
CODE = "app/pricing/tax.py"
FIXTURE = "tests/fixtures/rates.json"
CLAUDE_TRAILER = "Co-authored-by: Claude <noreply@anthropic.com>"

PYPROJECT = """\
[project]
name = "shop"
version = "1.0"

[tool.pytest.ini_options]
testpaths = ["tests"]
"""

FILES = {
    "app/__init__.py": "",
    "app/pricing/__init__.py": "",
    CODE: "RATE = 0.2\n\n\ndef tax(x):\n    return x * RATE\n",
    "app/checkout/__init__.py": "",
    "app/checkout/session.py": "from app.pricing.tax import tax\n\n\n"
    "def total(x):\n    return x + tax(x)\n",
    "tests/test_tax.py": "from app.pricing.tax import tax\n\n\n"
    "def test_tax():\n    assert tax(10) == 2\n",
    FIXTURE: '{"standard": 0.2}\n',
    "pyproject.toml": PYPROJECT,
    SCOPE: "# where a patch may go\napp\ntests\npyproject.toml\n",
    "README.md": "shop\n",
}


def manifest_text(fixtures: dict[str, bytes]) -> str:
    """What ``sha256sum`` would print for the fixtures, computed here, not by agentgate."""
    return "".join(
        f"{hashlib.sha256(data).hexdigest()}  {path}\n" for path, data in sorted(fixtures.items())
    )


def populate(repo: GitRepo) -> None:
    """The project: an app, its test, a fixture with its manifest, a scope, a pyproject."""
    repo.files(FILES)
    repo.write(MANIFEST, manifest_text({FIXTURE: FILES[FIXTURE].encode()}))


# --- the plain hooks/ scripts --------------------------------------------------------------


def plain_hook_env() -> dict[str, str]:
    """The pinned test environment, with this interpreter's ``agentgate`` first on PATH so
    the plain hooks run the code under test."""
    bindir = Path(sys.executable).parent
    return git_env(PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")


def copy_hooks(tmp_path: Path) -> Path:
    """Copies of the checkout's hooks/ (a space in the folder name, as users' paths have),
    outside the repository: inside it, hooks/ would be a trust file of the project."""
    target = tmp_path / "git hooks"
    shutil.copytree(CHECKOUT / "hooks", target)
    return target


def hooked(path: Path, hooks_dir: Path) -> GitRepo:
    repo = GitRepo.init(path)
    repo.git("config", "core.hooksPath", str(hooks_dir))
    return repo


def hooked_project(path: Path, hooks_dir: Path) -> GitRepo:
    repo = hooked(path, hooks_dir)
    populate(repo)
    repo.commit("initial")  # --no-verify: the project's own first commit mixes trust and code
    return repo


# --- running git and reading what its hooks did -------------------------------------------


@dataclass
class Outcome:
    """A real git command: its exit code, everything it and its hooks printed, and the exit
    code of each hook git ran, read from git's own trace2 event stream."""

    code: int
    out: str  # continuation lines joined back (tests/support/text.py)
    hooks: dict[str, list[int]] = field(default_factory=dict)
    raw: str = ""  # as printed

    def lines(self, prefix: str) -> list[str]:
        return [line.strip() for line in self.out.splitlines() if line.strip().startswith(prefix)]


def run_git(repo: GitRepo, *args: str, env: dict[str, str]) -> Outcome:
    fd, name = tempfile.mkstemp(prefix="trace2-", dir=repo.path.parent)
    os.close(fd)
    trace = Path(name)
    proc = subprocess.run(
        ["git", "-C", str(repo.path), *args],
        capture_output=True,
        text=True,
        errors="surrogateescape",
        env={**env, "GIT_TRACE2_EVENT": str(trace)},
    )
    hooks = hook_exit_codes(trace)
    trace.unlink(missing_ok=True)
    printed = proc.stdout + proc.stderr
    return Outcome(proc.returncode, unwrap(printed), hooks, printed)


def hook_exit_codes(trace: Path) -> dict[str, list[int]]:
    """``{hook name: [exit codes]}`` from a GIT_TRACE2_EVENT file. Nested git processes (the
    hook's own git calls) write to the same file; events are matched by session id."""
    started: dict[tuple[str, int], str] = {}
    codes: dict[str, list[int]] = {}
    for raw in trace.read_text(encoding="utf-8", errors="replace").splitlines():
        event = json.loads(raw)
        key = (event.get("sid", ""), event.get("child_id", -1))
        if event.get("event") == "child_start" and event.get("child_class") == "hook":
            started[key] = event["hook_name"]
        elif event.get("event") == "child_exit" and key in started:
            codes.setdefault(started[key], []).append(event["code"])
    return codes


def commit(
    repo: GitRepo, env: dict[str, str], message: str = "change", *args: str, **extra: str
) -> Outcome:
    """``git commit`` with the hooks on (never ``--no-verify``), message via a file."""
    msg = repo.path.parent / "COMMIT_MSG.txt"
    msg.write_text(message + "\n", encoding="utf-8")
    return run_git(repo, "commit", "-q", "-F", str(msg), *args, env={**env, **extra})


def push(repo: GitRepo, env: dict[str, str], *args: str) -> Outcome:
    return run_git(repo, "push", *args, env=env)


# --- staged edits ---------------------------------------------------------------------------


def edit_code(repo: GitRepo, value: str = "0.25") -> None:
    """A real code change that keeps the project's test green: the pre-push hook runs it."""
    repo.write(CODE, f'"""Tax, revision {value}."""\n\n' + FILES[CODE])
    repo.add()


def widen_scope(repo: GitRepo) -> None:
    """Adds ``docs`` to the scope (again, when it is there already: each call is a change)."""
    current = (repo.path / SCOPE).read_text(encoding="utf-8")
    repo.write(SCOPE, current + "docs\n")
    repo.add()


def stage_mixed(repo: GitRepo) -> None:
    """The scope widened in the same commit as code: rule (a)."""
    widen_scope(repo)
    edit_code(repo)


def bump_version(repo: GitRepo) -> None:
    repo.write("pyproject.toml", PYPROJECT.replace('version = "1.0"', 'version = "1.1"'))
    repo.add()


def loosen_pytest(repo: GitRepo) -> None:
    repo.write("pyproject.toml", PYPROJECT + 'addopts = "-p no:randomly --deselect tests"\n')
    repo.add()


def rename_scope(repo: GitRepo) -> None:
    repo.git("mv", SCOPE, "app/scope.old")


def delete_scope(repo: GitRepo) -> None:
    repo.rm(SCOPE)


def symlink_scope(repo: GitRepo) -> None:
    """The scope file replaced by a symlink to a file the patch controls."""
    repo.write("app/wide-scope.txt", ".\n")
    target = repo.path / SCOPE
    target.unlink()
    target.symlink_to("../app/wide-scope.txt")
    repo.add()


TRUST_MOVES = {
    "renamed": rename_scope,
    "deleted": delete_scope,
    "replaced by a symlink": symlink_scope,
}


def edit_fixture(repo: GitRepo) -> None:
    repo.write(FIXTURE, '{"standard": 0.0}\n')
    repo.add()


def set_up_remote(repo: GitRepo, env: dict[str, str]) -> GitRepo:
    """A local bare remote ``origin`` holding the current main (seeded without hooks: the
    project's first commit is not what these tests are about)."""
    remote = GitRepo.init(repo.path.parent / "remote.git", bare=True)
    repo.git("remote", "add", "origin", str(remote.path))
    repo.git("push", "-q", "--no-verify", "origin", "main", env=env)
    return remote


def remote_sha(remote: GitRepo, ref: str) -> str | None:
    out = remote.git("rev-parse", "--verify", "--quiet", ref, check=False).strip()
    return out or None


def bad_commit(repo: GitRepo, message: str = "agent: widen scope and fix tax") -> str:
    """A mixed trust + code commit made past every hook (``GitRepo.commit``), as an agent that
    bypasses the hooks would: the push and CI must still catch it."""
    stage_mixed(repo)
    return repo.commit(message, add=False)


def good_commit(repo: GitRepo, value: str = "0.3", message: str = "fix tax") -> str:
    edit_code(repo, value)
    return repo.commit(message, add=False)


def push_new_branch_over_old_sin(repo: GitRepo, env: dict[str, str]) -> tuple[str, str, Outcome]:
    """main already holds a mixed commit (pushed past the hooks); a new branch ``feature``
    with one good commit of its own is pushed. Returns (fork point, feature's head, the push):
    the branch must be judged by its own commits only."""
    bad_commit(repo, "old sin on main")
    repo.git("push", "-q", "--no-verify", "origin", "main", env=env)
    fork = repo.sha()
    repo.git("checkout", "-q", "-b", "feature")
    head = good_commit(repo)
    return fork, head, push(repo, env, "origin", "feature")
