"""The only module that talks to git.

Porcelain that the commit-time hook needs (staged changes, file contents) goes through one
subprocess helper, ``run``, parsing ``-z`` output so paths with spaces, newlines or
non-UTF-8 bytes survive; paths are decoded with ``os.fsdecode`` (surrogateescape) and so
round-trip back into git unchanged.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from agentgate.core.errors import GitError
from agentgate.core.model import COPIED, RENAMED, Change, Commit

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

_ZERO = re.compile(r"^0+$")
# Variables git exports into hooks that would point a nested git (in a worktree or a temp
# repo) at the wrong repository or index; pre-commit strips them the same way (no_git_env).
_KEEP_GIT_VARS = frozenset(
    {
        "GIT_EXEC_PATH",
        "GIT_SSH",
        "GIT_SSH_COMMAND",
        "GIT_SSL_CAINFO",
        "GIT_SSL_NO_VERIFY",
        "GIT_CONFIG_COUNT",
        "GIT_ASKPASS",
        "GIT_ALLOW_PROTOCOL",
        "GIT_HTTP_PROXY_AUTHMETHOD",
    }
)


def is_zero_id(sha: str) -> bool:
    """git's null object id, 40 zeros in SHA-1 repositories and 64 in SHA-256 ones."""
    return bool(_ZERO.match(sha))


def no_git_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    source = os.environ if env is None else env
    return {
        k: v
        for k, v in source.items()
        if not k.startswith("GIT_")
        or k in _KEEP_GIT_VARS
        or k.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))
    }


def run(
    root: Path | str,
    *args: str,
    check: bool = True,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
) -> bytes:
    """Run ``git -C root args``; on failure raise GitError naming the command and git's words."""
    cmd = ["git", "-C", os.fspath(root), *args]
    try:
        proc = subprocess.run(
            cmd, input=stdin, capture_output=True, env=None if env is None else dict(env)
        )
    except FileNotFoundError:
        raise GitError("git is not installed or not on PATH; install git and retry") from None
    if check and proc.returncode != 0:
        said = os.fsdecode(proc.stderr)
        raise GitError(_refused(said) or f"git {' '.join(args[:3])} failed: "
                       f"{_last_line(said) or f'exit {proc.returncode}'}")
    return proc.stdout


_DUBIOUS = re.compile(r"dubious ownership in repository at '([^']*)'")


def _refused(said: str) -> str | None:
    """git's refusal of a repository someone else owns (git >= 2.35.2, CVE-2022-24765) and
    its way out; git's own last line is only the command, which read alone misleads."""
    found = _DUBIOUS.search(said)
    if found is None:
        return None
    return (f"git refuses the repository at {found[1]}: detected dubious ownership (another "
            "user owns it); if you trust it, run: git config --global --add safe.directory "
            f"{found[1]}")


def _last_line(said: str) -> str:
    lines = said.strip().splitlines()
    return lines[-1].strip() if lines else ""


def ok(root: Path | str, *args: str) -> bool:
    return _returncode(root, *args) == 0


def _returncode(root: Path | str, *args: str) -> int:
    proc = subprocess.run(["git", "-C", os.fspath(root), *args], capture_output=True)
    return proc.returncode


def _line(out: bytes) -> str:
    return os.fsdecode(out).strip()


# --- repository facts -------------------------------------------------------------------


def repo_root(cwd: Path | str = ".") -> Path:
    proc = subprocess.run(
        ["git", "-C", os.fspath(cwd), "rev-parse", "--show-toplevel"], capture_output=True
    )
    if proc.returncode != 0:
        said = os.fsdecode(proc.stderr)
        if _refused(said) is None and "not a git repository" not in said and said.strip():
            raise GitError(f"{os.fspath(cwd)}: {_last_line(said).removeprefix('fatal: ')}")
        raise GitError(_refused(said) or f"{os.path.abspath(cwd)} is not inside a git work "
                       "tree; run agentgate in a repo")
    return Path(_line(proc.stdout))


def common_dir(root: Path) -> Path:
    """The git dir shared by every worktree: caches live here so all worktrees see them.
    Asked once per folder and process (a plan asks for the graph cache and the witness
    store)."""
    env = tuple(os.environ.get(v) for v in ("GIT_DIR", "GIT_COMMON_DIR", "GIT_WORK_TREE"))
    return _common_dir(os.path.abspath(root), env)


@functools.lru_cache(maxsize=64)
def _common_dir(root: str, env: tuple[str | None, ...]) -> Path:  # env: part of the key
    path = Path(_line(run(root, "rev-parse", "--git-common-dir")))
    return path if path.is_absolute() else (Path(root) / path).resolve()


def state_dir(root: Path) -> Path:
    """``.git/agentgate``: caches and witnesses, never in the tree."""
    return common_dir(root) / "agentgate"


def has_commits(root: Path) -> bool:
    return ok(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")


def is_shallow(root: Path) -> bool:
    return _line(run(root, "rev-parse", "--is-shallow-repository")) == "true"


def head_sha(root: Path) -> str | None:
    """HEAD's commit id, or None in a repository with no commits yet (one git process)."""
    out = run(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False)
    return _line(out) or None


def resolve(root: Path, rev: str, *, what: str = "revision", peel: str = "commit") -> str:
    """The commit id ``rev`` names (``peel="tree"``: its tree's id), or a GitError that says
    what to fetch."""
    if rev.startswith("-"):
        raise GitError(f"{what} {rev!r} looks like an option; name a commit, branch or tag")
    proc = subprocess.run(
        ["git", "-C", os.fspath(root), "rev-parse", "--verify", "--quiet", f"{rev}^{{{peel}}}"],
        capture_output=True,
    )
    if proc.returncode == 0:
        return _line(proc.stdout)
    if is_shallow(root):
        raise GitError(
            f"{what} {rev!r} is not in this shallow clone; fetch full history "
            "(git fetch --unshallow, or actions/checkout with fetch-depth: 0) and retry"
        )
    kind = _line(run(root, "cat-file", "-t", rev, check=False))
    if kind:  # an object git has, of another kind (issue 13: a blob id "did not exist")
        raise GitError(f"{what} {rev!r} is a {kind}, not a {peel}; name a commit, branch or tag")
    raise GitError(
        f"{what} {rev!r} does not exist here; fetch it (git fetch origin) or fix the name"
    )


def merge_base(root: Path, a: str, b: str) -> str:
    out = run(root, "merge-base", a, b, check=False)
    if not out.strip():
        if is_shallow(root):
            raise GitError(
                f"no merge-base of {a[:12]} and {b[:12]} in this shallow clone; "
                "fetch full history (git fetch --unshallow) and retry"
            )
        raise GitError(f"{a[:12]} and {b[:12]} share no history; name a base on this branch")
    return _line(out)


def is_ancestor(root: Path, ancestor: str, descendant: str) -> bool:
    return ok(root, "merge-base", "--is-ancestor", ancestor, descendant)


def empty_tree(root: Path) -> str:
    """The empty tree's id in this repository's hash (SHA-1 or SHA-256)."""
    return _line(run(root, "hash-object", "-t", "tree", "--stdin", stdin=b""))


def ref_exists(root: Path, ref: str) -> bool:
    return ok(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")


# --- changes ------------------------------------------------------------------------------

_DIFF_FLAGS = ("--raw", "-z", "-M", "--no-abbrev", "--no-ext-diff", "--no-textconv", "--no-color")


def parse_raw(out: bytes) -> list[Change]:
    """Parse ``git diff --raw -z`` records: ``:old new oldsha newsha STATUS\\0path[\\0path]``."""
    fields = out.split(b"\0")
    changes: list[Change] = []
    i = 0
    while i < len(fields) and fields[i].startswith(b":"):
        meta = os.fsdecode(fields[i][1:]).split()
        status = meta[4][0]
        if status in (RENAMED, COPIED):
            old, new = os.fsdecode(fields[i + 1]), os.fsdecode(fields[i + 2])
            i += 3
        else:
            old = None
            new = os.fsdecode(fields[i + 1])
            i += 2
        changes.append(_change(meta, status, new, old))
    if any(fields[i:]):
        # A record this parser does not know would otherwise end the list early: fewer
        # changes, fewer tests. Refuse instead.
        raise GitError("git diff printed a record agentgate cannot read; please report it")
    return changes


def _change(meta: list[str], status: str, path: str, old_path: str | None) -> Change:
    old_mode, new_mode, old_blob, new_blob = meta[0], meta[1], meta[2], meta[3]
    return Change(
        status=status,
        path=path,
        old_path=old_path,
        old_mode=old_mode,
        new_mode=new_mode,
        old_blob=None if is_zero_id(old_blob) else old_blob,
        new_blob=None if is_zero_id(new_blob) else new_blob,
    )


def range_changes(root: Path, base: str, head: str) -> list[Change]:
    """Files changed in ``base...head``: from their merge-base to head, as a PR shows them."""
    return parse_raw(run(root, "diff", *_DIFF_FLAGS, f"{base}...{head}", "--"))


def diff_changes(root: Path, old: str, new: str) -> list[Change]:
    """Files changed between two trees or commits, directly (two dots)."""
    return parse_raw(run(root, "diff", *_DIFF_FLAGS, old, new, "--"))


def tree_changes(root: Path, old: str, new: str) -> list[Change]:
    """Every file that differs between two trees (or commits), without rename detection: what
    the import graph's cache needs to patch one tree's listing into the other's."""
    return parse_raw(run(root, "diff-tree", "-r", "-z", "--no-renames", "--no-abbrev", old, new))


def staged_changes(root: Path, head: str | None) -> list[Change]:
    """The staged change set against ``head`` (HEAD's id, which the caller has already read;
    None in a repository with no commits yet, where everything staged is added). While a
    merge is being committed, only what differs from every parent counts, as for a committed
    merge (``commit_changes``): merging main brings in nothing of the merge's own."""
    against = head if head is not None else empty_tree(root)
    staged = _staged_against(root, against)
    others = merge_heads(root) if head is not None else []
    if not others:
        return staged
    shared = set.intersection(*({c.path for c in _staged_against(root, o)} for o in others))
    return [c for c in staged if c.path in shared]


def _staged_against(root: Path, rev: str) -> list[Change]:
    return parse_raw(run(root, "diff", "--cached", *_DIFF_FLAGS, rev, "--"))


def merge_heads(root: Path) -> list[str]:
    """The other parents of the merge being committed (``MERGE_HEAD``, one a line: an octopus
    has several), or none when no merge is in progress."""
    where = Path(root, _line(run(root, "rev-parse", "--git-path", "MERGE_HEAD")))
    try:
        text = where.read_text(encoding="ascii")
    except FileNotFoundError:
        return []
    return [line.strip() for line in text.splitlines() if line.strip()]


def commit_changes(root: Path, commit: Commit) -> list[Change]:
    """What one commit changed. A merge counts only what differs from every parent, so a
    clean merge of main brings in nothing, and an evil merge still shows its own edits."""
    if not commit.parents:
        return diff_changes(root, empty_tree(root), commit.sha)
    per_parent = [diff_changes(root, parent, commit.sha) for parent in commit.parents]
    if len(per_parent) == 1:
        return per_parent[0]
    shared = set.intersection(*({c.path for c in changes} for changes in per_parent))
    return [c for c in per_parent[0] if c.path in shared]


# --- contents -----------------------------------------------------------------------------


def read_at(root: Path, rev: str, path: str) -> bytes | None:
    """A file's bytes at ``rev`` (``:`` for the index), or None when it does not exist there."""
    spec = _object_name(rev, path)
    proc = subprocess.run(
        ["git", "-C", os.fspath(root), "cat-file", "blob", spec], capture_output=True
    )
    return proc.stdout if proc.returncode == 0 else None


def _object_name(rev: str, path: str) -> str:
    """git's name of ``path`` at ``rev``; ``:`` is the index (``:path``)."""
    return f":{path}" if rev == ":" else f"{rev}:{path}"


def read_many_at(root: Path, rev: str, paths: list[str]) -> dict[str, str | None]:
    """Several small files' texts at ``rev`` with one ``git cat-file --batch`` (config files:
    their names hold no newline, which the batch protocol could not carry)."""
    names = {_object_name(rev, p): p for p in paths if "\n" not in p}
    found = cat_blobs(root, list(names))
    texts: dict[str, str | None] = {p: None for p in paths}
    for name, path in names.items():
        if name in found:
            texts[path] = found[name].decode("utf-8", errors="surrogateescape")
    return texts


def read_text_at(root: Path, rev: str, path: str) -> str | None:
    data = read_at(root, rev, path)
    return None if data is None else data.decode("utf-8", errors="surrogateescape")


_LS_TREE = re.compile(r"[0-7]+ blob ([0-9a-f]+)\t([^\0]*)\0")


def ls_tree(root: Path, rev: str, paths: tuple[str, ...] = ()) -> dict[str, str]:
    """Files at ``rev`` (under ``paths``, when given) mapped to their blob ids: one call tells
    what changed since a cache. Decoded once, not per entry: 20,000 files cost 0.45 s so."""
    out = run(root, "ls-tree", "-r", "-z", "--full-tree", rev, "--", *paths)
    text = out.decode("utf-8", "surrogateescape")  # as os.fsdecode: odd bytes round-trip
    return {path: blob for blob, path in _LS_TREE.findall(text)}


def files_matching(root: Path, rev: str, pattern: str | tuple[str, ...],
                   paths: tuple[str, ...] = (), *, fixed: bool = False) -> set[str]:
    """Files at ``rev`` (under ``paths``) with a line matching the extended regular expression
    ``pattern``, or any of several (``fixed``: holding the text itself): one ``git grep`` (a
    doctest example line: the files a doctest run collects examples from)."""
    patterns = (pattern,) if isinstance(pattern, str) else pattern
    proc = subprocess.run(
        ["git", "-C", os.fspath(root), "grep", "-l", "-z", "-F" if fixed else "-E", "-I",
         *(a for p in patterns for a in ("-e", p)), rev, "--", *paths],
        capture_output=True, env=no_git_env())
    if proc.returncode not in (0, 1):  # 1: no match
        raise GitError(f"git grep failed: {_line(proc.stderr)}")
    prefix = f"{rev}:"
    found = proc.stdout.decode("utf-8", "surrogateescape").split("\0")
    return {f[len(prefix):] if f.startswith(prefix) else f for f in found if f}


def tracked_files(
    root: Path, paths: list[str], *, revs: tuple[str, ...] = (),
    changed_in: tuple[str, str] | None = None,
) -> set[str]:
    """Which of ``paths`` (exact paths from the top, no folders) git holds as a file or link:
    in the index, at any of ``revs``, or in a commit of ``changed_in`` (base, head) -- a file
    a range added and then untracked again still came from that range."""
    specs = [f":(literal){p}" for p in paths]
    outs = [run(root, "ls-files", "-z", "--", *specs)]
    if changed_in is not None:
        outs.append(run(root, "log", "--format=", "--name-only", "-z", "--no-renames",
                        "..".join(changed_in), "--", *specs))
    names = {n.strip("\n") for out in outs for n in os.fsdecode(out).split("\0")}
    for rev in revs:  # a folder on the way is a tree (040000); a linked folder is a blob
        listed = os.fsdecode(run(root, "ls-tree", "-z", rev, "--", *specs))
        names |= {e.split("\t", 1)[1] for e in listed.split("\0")
                  if "\t" in e and not e.startswith("040000")}
    return names & set(paths)


def is_clean(root: Path) -> bool:
    """No staged, unstaged or untracked (non-ignored) changes in the work tree."""
    return run(root, "status", "--porcelain", "-z", "--untracked-files=normal") == b""


def uncommitted(root: Path) -> list[str]:
    """The tracked files with staged or unstaged changes in the work tree, sorted."""
    out = os.fsdecode(run(root, "status", "--porcelain", "-z", "--untracked-files=no"))
    entries = out.split("\0")
    found, skip = [], False
    for entry in entries:
        if skip:  # a rename's or copy's second field: the path it came from
            skip = False
            continue
        if len(entry) > 3:
            found.append(entry[3:])
            skip = entry[0] in "RC"
    return sorted(found)


def changed_or_untracked(root: Path) -> list[str]:
    """Every tracked file changed in the work tree and every untracked one git does not
    ignore (each file of a new folder), sorted."""
    out = os.fsdecode(run(root, "status", "--porcelain", "-z", "--untracked-files=all",
                          "--no-renames"))
    return sorted({entry[3:] for entry in out.split("\0") if len(entry) > 3})


DEFAULT_BASES = ("origin/HEAD", "origin/main", "origin/master", "main", "master")


def default_base(root: Path, configured: str | None) -> str:
    """The base a command uses when none is given: the configured ``base_branch``, else the
    first of ``DEFAULT_BASES`` that exists; GitError saying what was tried when none does."""
    candidates = (configured,) if configured else DEFAULT_BASES
    for ref in candidates:
        if ref and ref_exists(root, ref):
            return ref
    raise GitError(f"no base branch found (tried {', '.join(candidates)}); pass --base")


def changed_tracked(root: Path) -> list[str]:
    """Tracked files whose content in the work tree differs from the checkout's commit
    (modified or deleted), sorted."""
    out = run(root, "diff", "--name-only", "-z", "--no-renames", "HEAD")
    return sorted(os.fsdecode(p) for p in out.split(b"\0") if p)


def ignored_untracked(root: Path) -> list[str]:
    """Untracked files git ignores, an ignored folder once as ``folder/`` (not descended:
    a ``.venv`` costs one entry, not thousands); paths from the top of the work tree."""
    out = run(root, "ls-files", "--others", "--ignored", "--exclude-standard", "-z",
              "--directory")
    return [os.fsdecode(p) for p in out.split(b"\0") if p]


def ignores(root: Path, paths: list[str]) -> list[str]:
    """Those of ``paths`` git ignores (``.gitignore`` and the like): ``git add -A`` leaves
    them out."""
    proc = subprocess.run(["git", "-C", os.fspath(root), "check-ignore", "--stdin", "-z"],
                          input="\0".join(paths).encode(), capture_output=True,
                          env=no_git_env())
    if proc.returncode not in (0, 1):  # 1: none ignored
        raise GitError(f"git check-ignore failed: {_line(proc.stderr)}")
    return [os.fsdecode(p) for p in proc.stdout.split(b"\0") if p]


# --- commits ----------------------------------------------------------------------------

# One record a commit, fields NUL-separated (a message cannot hold NUL): sha, parents,
# author, committer, trailers (unfolded "Key: value" lines), message. Read with git itself,
# not GitPython: GitPython cannot parse SHA-256 object ids, and this is one process.
_LOG_FORMAT = "%H%x00%P%x00%an <%ae>%x00%cn <%ce>%x00%(trailers:only,unfold)%x00%B"
_LOG_FIELDS = 6


def commits_in_range(root: Path, base: str | None, head: str) -> list[Commit]:
    """Commits reachable from head and not from base, oldest first; all of head's if no base."""
    spec = [head] if base is None else [head, "--not", base]
    out = run(root, "log", "-z", "--reverse", f"--format={_LOG_FORMAT}", *spec, "--")
    fields = os.fsdecode(out).split("\0")
    commits = []
    for i in range(0, len(fields) - _LOG_FIELDS + 1, _LOG_FIELDS):
        sha, parents, author, committer, trailers, message = fields[i : i + _LOG_FIELDS]
        commits.append(
            Commit(
                sha=sha,
                parents=tuple(parents.split()),
                author=author,
                committer=committer,
                message=message,
                trailers=parse_trailer_lines(trailers),
            )
        )
    return commits


def parse_trailer_lines(text: str) -> tuple[tuple[str, str], ...]:
    found = []
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip():
            found.append((key.strip(), value.strip()))
    return tuple(found)


def message_trailers(root: Path, message_file: Path) -> tuple[tuple[str, str], ...]:
    """Trailers of a message not yet committed (commit-msg hook), read the way git reads them:
    its comment lines and the ``>8`` scissors block (``git commit -v``) are not the message."""
    out = run(root, "interpret-trailers", "--parse", os.fspath(message_file))
    return parse_trailer_lines(os.fsdecode(out))


def current_identity(root: Path) -> list[str]:
    """Who the commit being made will be authored and committed by, as "Name <email>"."""
    idents = []
    for var in ("GIT_AUTHOR_IDENT", "GIT_COMMITTER_IDENT"):
        out = subprocess.run(["git", "-C", os.fspath(root), "var", var], capture_output=True).stdout
        ident = _line(out)
        if ident:
            idents.append(ident.rsplit(" ", 2)[0])
    return idents


# --- worktrees ----------------------------------------------------------------------------


def worktree_add(root: Path, path: Path, rev: str) -> None:
    run(root, "worktree", "add", "--detach", "--force", os.fspath(path), rev, env=no_git_env())


def worktree_remove(root: Path, path: Path) -> None:
    run(root, "worktree", "remove", "--force", os.fspath(path), check=False, env=no_git_env())
    run(root, "worktree", "prune", check=False, env=no_git_env())


def worktrees(root: Path) -> Iterator[Path]:
    out = run(root, "worktree", "list", "--porcelain", "-z")
    for record in out.split(b"\0"):
        if record.startswith(b"worktree "):
            yield Path(os.fsdecode(record[len(b"worktree ") :]))


# --- blobs ----------------------------------------------------------------------------------


def index_blobs(root: Path, prefixes: tuple[str, ...]) -> dict[str, str]:
    """Staged files under ``prefixes`` mapped to their blob ids (the index, not the disk)."""
    if not prefixes:
        return {}
    out = run(root, "ls-files", "-s", "-z", "--", *prefixes)
    files: dict[str, str] = {}
    for record in out.split(b"\0"):
        if record:
            meta, _, name = record.partition(b"\t")
            files[os.fsdecode(name)] = os.fsdecode(meta).split()[1]
    return files


def cat_blobs(root: Path, blobs: list[str]) -> dict[str, bytes]:
    """Contents of many blobs with one ``git cat-file --batch`` process."""
    wanted = list(dict.fromkeys(blobs))
    if not wanted:
        return {}
    out = run(root, "cat-file", "--batch", stdin=("\n".join(wanted) + "\n").encode())
    found: dict[str, bytes] = {}
    pos = 0
    for blob in wanted:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        pos = end + 1
        if len(header) < 3 or header[1] == b"missing":
            continue
        size = int(header[2])
        found[blob] = out[pos : pos + size]
        pos += size + 1
    return found
