"""Real git repositories in temporary folders: the fixture every test builds on."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

AUTHOR = "Test Human"
EMAIL = "human@example.com"


def git_env(**extra: str) -> dict[str, str]:
    """The pinned environment tests run git (and agentgate) under; see conftest."""
    env = dict(os.environ)
    env.update(extra)
    return env


class GitRepo:
    """A real repository with convenience methods; every call is a real ``git``."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def init(cls, path: Path, *, branch: str = "main", bare: bool = False) -> GitRepo:
        path.mkdir(parents=True, exist_ok=True)
        args = ["git", "init", "-q", "-b", branch]
        if bare:
            args.append("--bare")
        subprocess.run([*args, str(path)], check=True)
        return cls(path)

    def git(self, *args: str, env: dict[str, str] | None = None, check: bool = True) -> str:
        proc = subprocess.run(
            ["git", "-C", str(self.path), *args],
            capture_output=True,
            text=True,
            env=env,
            errors="surrogateescape",
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}{proc.stdout}")
        return proc.stdout

    def write(self, rel: str | bytes, content: str | bytes = "") -> Path:
        target = self.path / os.fsdecode(rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
        return target

    def files(self, mapping: dict[str, str]) -> None:
        for rel, content in mapping.items():
            self.write(rel, content)

    def add(self, *paths: str) -> None:
        self.git("add", "-A", "--", *(paths or ["."]))

    def commit(
        self,
        message: str = "change",
        *,
        author: str | None = None,
        email: str | None = None,
        add: bool = True,
        env: dict[str, str] | None = None,
        no_verify: bool = True,
    ) -> str:
        if add:
            self.add()
        run_env = git_env(**(env or {}))
        if author:
            run_env.update(GIT_AUTHOR_NAME=author, GIT_COMMITTER_NAME=author)
        if email:
            run_env.update(GIT_AUTHOR_EMAIL=email, GIT_COMMITTER_EMAIL=email)
        # Past every hook: --no-verify alone still runs prepare-commit-msg, where agentgate
        # runs its commit-time gate too; a hooks path with no hooks in it skips that one.
        flags = ["-c", f"core.hooksPath={os.devnull}"] if no_verify else []
        verify = ["--no-verify"] if no_verify else []
        self.git(*flags, "commit", "-q", "--allow-empty", *verify, "-m", message, env=run_env)
        return self.sha()

    def sha(self, rev: str = "HEAD") -> str:
        return self.git("rev-parse", rev).strip()

    def rm(self, *paths: str) -> None:
        self.git("rm", "-q", "-r", "--", *paths)


def run_agentgate(
    *args: str, cwd: Path, env: dict[str, str] | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """The real CLI in a subprocess, exactly as a hook or CI would call it."""
    return subprocess.run(
        [sys.executable, "-m", "agentgate", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        input=stdin,
        errors="surrogateescape",
    )
