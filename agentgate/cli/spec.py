"""Every command's options, declared once: the typer app (``cli/build.py``) and the fast
start-up parser (``cli/parse.py``) are both built from this table, so they cannot disagree.

Standard library only, on purpose: the commit hook imports this before deciding whether typer
is needed at all, and ``import typer`` alone costs ~0.15 s (bench/commit_hook.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, kw_only=True)
class Param:
    """One option (``flags`` given) or positional argument (no ``flags``)."""

    name: str  # the keyword the command's implementation takes
    help: str = ""
    flags: tuple[str, ...] = ()
    off_flags: tuple[str, ...] = ()  # a boolean's negative form, e.g. --no-serial
    kind: type = str  # str, int, float, bool or Path
    default: object = None
    required: bool = False
    choices: tuple[str, ...] = ()
    metavar: str | None = None
    multiple: bool = False  # a repeatable option, or an argument taking all the rest
    hidden: bool = False
    minimum: int | None = None

    @property
    def positional(self) -> bool:
        return not self.flags


@dataclass(frozen=True)
class Command:
    path: tuple[str, ...]
    help: str
    params: tuple[Param, ...]


@dataclass(frozen=True)
class Group:
    name: str
    help: str
    no_args_is_help: bool = False


def _str(
    name: str, flag: str, help: str, default: str | None = None, *, required: bool = False,
    hidden: bool = False, metavar: str | None = None,
) -> Param:
    return Param(name=name, flags=(flag,), help=help, default=default, required=required,
                 hidden=hidden, metavar=metavar)


def _flag(name: str, flag: str, help: str, negative: bool = False) -> Param:
    off = ("--no-" + flag[2:],) if negative else ()
    return Param(name=name, flags=(flag,), off_flags=off, kind=bool, default=False, help=help)


FORMATS = ("text", "json", "markdown")
FORMAT = Param(name="fmt", flags=("--format", "-f"), choices=FORMATS, default="text",
               help="text (default), json or markdown.")
REPO = Param(name="repo", flags=("--repo", "-C"), kind=Path, default=Path("."),
             help="Repository to work on (default: current folder).")
# Hidden, and an option rather than a variable: a variable would also reach the ledger check
# inside plan/check and the hooks, where a patch's environment could postpone its own expiry.
TODAY = _str("today", "--today", "Pretend today is YYYY-MM-DD.", hidden=True)
BASE = _str("base", "--base", "Base of the range (e.g. origin/main): its merge-base with head "
            "supplies the rules (default: [tool.agentgate] base_branch, else the first of "
            "origin/HEAD, origin/main, origin/master, main, master that exists).")
HEAD = _str("head", "--head", "Head of the range (default HEAD).", "HEAD")
NODEID = Param(name="test", required=True, help="The test's pytest node id (path::name).")
REV = _str("rev", "--rev", "Revision (default: HEAD for record).")
# Failures first; per-file chains, per-test witness lines and each run's counts on -v (issue 13).
VERBOSE = Param(name="verbose", flags=("--verbose", "-v"), kind=bool, default=False,
                help="Also show the details: each test file's import chain, the witness's "
                "per-test decisions, each pytest run, and the notes of a passing check.")
CODES = "Exit 0 allowed, 3 scope escape, 4 blocked."
WORKERS = _str("workers", "--workers", "pytest-xdist processes for the band and the full "
               "suite: auto, N, or 0 for one (default: config workers).", metavar="auto|N")

GROUPS = (
    Group("hook", "What the git hooks call (pre-commit, prepare-commit-msg, commit-msg, "
          "pre-push)."),
    Group("fixtures", "The fixture manifest (sha256sum format)."),
    Group("ledger", "The freeze ledger.", no_args_is_help=True),
    Group("witness", "Skip witnesses: what each test depended on, recorded from a full run.",
          no_args_is_help=True),
    Group("ci", "Publish a check's result to a CI system.", no_args_is_help=True),
)

PLAN = Command(("plan",), "Which tests the range must run, and why; exit code is the verdict.", (
    BASE, HEAD, FORMAT, VERBOSE,
    _str("explain", "--explain", "Show the shortest import chain from this test file to a "
         "change; for a node id (path::test), also the witness's decision and its reason.",
         metavar="PATH|NODEID"),
    REPO,
))
CHECK = Command(("check",), "Plan the range, then run the band (or the full suite) on a clean "
                "tree of head.", (
    BASE, HEAD, FORMAT, VERBOSE,
    _flag("shadow", "--shadow", "Also run the full suite and report every failure the band "
          "did not select."),
    REPO, WORKERS,
))
PRE_COMMIT = Command(("hook", "pre-commit"), f"Check the staged change. {CODES}",
                     (FORMAT, VERBOSE))
COMMIT_MSG = Command(("hook", "commit-msg"), f"Check the message's trailers. {CODES}", (
    Param(name="message_file", kind=Path, required=True,
          help="The commit message file (git passes it)."),
    FORMAT, VERBOSE,
))
# git runs prepare-commit-msg even under --no-verify: the staged gate and the trailers again.
PREPARE_COMMIT_MSG = Command(("hook", "prepare-commit-msg"), "Check the staged change and "
                             f"the message's trailers (not skipped by --no-verify). {CODES}", (
    Param(name="message_file", kind=Path, required=True,
          help="The commit message file (git passes it)."),
    Param(name="source", help="Where the message came from (git passes it; not read)."),
    Param(name="sha", help="The commit the message came from (git passes it; not read)."),
    FORMAT, VERBOSE,
))
PRE_PUSH = Command(("hook", "pre-push"), "Check every pushed commit and the range.", (
    Param(name="remote", help="Remote name (git passes it)."),
    Param(name="url", help="Remote URL (git passes it)."),
    FORMAT, WORKERS, VERBOSE,
))


def _repo_only(path: tuple[str, ...], help: str) -> Command:
    return Command(path, help, (REPO, FORMAT))


TRUST = (
    PRE_COMMIT, PREPARE_COMMIT_MSG, COMMIT_MSG, PRE_PUSH,
    _repo_only(("fixtures", "record"), "Write the manifest from the work tree."),
    _repo_only(("fixtures", "verify"), "Check the work tree against the manifest."),
    Command(("init",), "Write a starter config, scope file and manifest.", (
        _flag("force", "--force", "Re-record a fixture manifest the fixtures no longer match."),
        REPO, FORMAT,
    )),
    Command(("demo",), "Play an agent's patch against an example repository.", (
        _flag("keep", "--keep", "Keep the example repository and print it.", negative=True),
        FORMAT,
    )),
)

LEDGER = (
    Command(("ledger", "check"), "Audit every freeze record (exit 0, or 4 with one line per bad "
            "record).", (REPO, FORMAT, TODAY)),
    Command(("ledger", "list"), "Every freeze record with state, owner, days left and last "
            "drill.", (REPO, FORMAT, TODAY)),
    Command(("freeze",), "Freeze a test by hand, with the same evidence a PRE_EXISTING "
            "attribution gives.", (
        NODEID,
        _str("owner", "--owner", "Who answers for the freeze.", required=True),
        _str("reason", "--reason", "Why the test is frozen.", required=True),
        _str("base_fail", "--base-fail", "Seeds that failed on the base, e.g. 3,7.",
             required=True),
        _str("head_fail", "--head-fail", "Seeds that failed on the patch tree.", required=True),
        _str("seeds", "--seeds", "Every seed run on both trees, e.g. 0,1,2,3.", required=True),
        _str("until", "--until", "Last frozen day, YYYY-MM-DD."),
        _str("mode", "--mode", "How the evidence was gathered.", "manual"),
        _str("tz", "--tz", "TZ of the runs (default: config tz)."),
        _str("rev", "--sha", "Revision frozen at.", "HEAD"),
        _str("recheck", "--recheck", "Command that re-checks it."),
        _str("ambient", "--ambient", "Inputs the drill pins, NAME=VALUE,... (names from the "
             "config's ambient list)."),
        Param(name="k", flags=("--k",), kind=int, default=20, minimum=1,
              help="Drill iterations that must all pass."),
        REPO, FORMAT, TODAY,
    )),
    Command(("unfreeze",), "Remove a test's freeze record: its failures count again.",
            (NODEID, REPO, FORMAT)),
    Command(("thaw",), "Run the record's drill k times: k/k passes -> probation; a failure "
            "renews with --cause.", (
        Param(name="test", help="The frozen test's node id."),
        _flag("due", "--due", "Drill every lease that is due."),
        _str("cause", "--cause", "If the drill fails: the ambient input or reason."),
        REPO, FORMAT, TODAY,
    )),
)

ATTRIBUTE = Command(("attribute",), (
    "Did the patch cause this test's failure, or find it? Runs it on base and head under "
    "controlled seeds and says which (PATCH_INDUCED, PRE_EXISTING, HARNESS_ENV, NO_REPRO, "
    "PATCH_MASKS, NOT_COLLECTED, BASE_UNAVAILABLE, INCONCLUSIVE)."), (
    Param(name="nodeid", required=True, help="The test's node id, path::name."),
    _str("base", "--base", "Base branch or commit (default: config base_branch, origin/HEAD, "
         "main)."),
    _str("head", "--head", "The patch's commit.", "HEAD"),
    Param(name="runs", flags=("--runs", "-n"), kind=int, default=10,
          help="Seeds swept: 0..N-1."),
    Param(name="repeats", flags=("--repeats",), kind=int, default=3,
          help="Re-runs of each matched seed per tree."),
    Param(name="seed", flags=("--seed",), kind=int, multiple=True,
          help="A seed for --mode matched (repeatable; default: config seed)."),
    _str("mode", "--mode", "both (default), swept or matched.", "both"),
    _str("context", "--context", "alone (default), or file: inside its whole file, in seeded "
         "orders (the default with --freeze: a freeze needs it)."),
    Param(name="jobs", flags=("--jobs", "-j"), kind=int,
          help="Parallel runs (default: the machine's cores)."),
    _flag("serial", "--serial", "One run at a time, base's before head's (timing-sensitive "
          "tests).", negative=True),
    Param(name="timeout", flags=("--timeout",), kind=float,
          help="Seconds per run before it is killed (default: config timeout)."),
    _flag("revert_code", "--revert-code", "If the test is new, also run it against the base's "
          "code.", negative=True),
    _flag("freeze", "--freeze", "Write a freeze record (only when the verdict allows it).",
          negative=True),
    _str("owner", "--owner", "Who answers for the freeze."),
    _str("until", "--until", "Freeze expiry, YYYY-MM-DD."),
    _str("reason", "--reason", "Why it is frozen (default: the evidence).", ""),
    _str("shard", "--shard", "Run only the I-th of N shares of the seeds and write the "
         "evidence to --evidence-out (a CI matrix).", metavar="I/N"),
    Param(name="evidence_out", flags=("--evidence-out",), kind=Path, metavar="FILE",
          help="The evidence file --shard writes."),
    Param(name="merge", flags=("--merge",), kind=Path, multiple=True, metavar="FILE",
          help="Give the verdict over the evidence of every shard (repeatable; a folder "
          "means its *.json files); runs nothing."),
    TODAY, REPO, FORMAT,
))

WITNESS = (
    Command(("witness", "record"), "Run the full suite once with recording and store the "
            "witness for the revision.", (
        Param(name="pytest_args", multiple=True, help="Extra pytest arguments (after --)."),
        REV, REPO, FORMAT,
        _str("shard", "--shard", "Record only the I-th of N shares of the tests (by test "
             "file) into --out, for witness merge (a CI matrix).", metavar="I/N"),
        Param(name="out", flags=("--out",), kind=Path, metavar="FILE",
              help="The shard file --shard writes."),
        _flag("incremental", "--incremental", "Record again only the tests the newest stored "
              "witness of an ancestor cannot vouch for, and carry the rest over (CI on each "
              "merge to main); without such a witness, the whole suite."),
    )),
    Command(("witness", "merge"), "Merge the shard files of one revision (witness record "
            "--shard) into the store, as one witness.", (
        Param(name="files", kind=Path, multiple=True,
              help="Every shard's file, 1/N to N/N."),
        REPO, FORMAT,
    )),
    Command(("witness", "export"), "Write a witness (default: the newest) to one file, e.g. a "
            "CI artifact.", (
        Param(name="file", kind=Path, required=True, help="File to write."),
        REV, _flag("every", "--all", "Export every stored witness."), REPO, FORMAT,
    )),
    Command(("witness", "import"), "Add the witnesses from an exported file to this "
            "repository's store.", (
        Param(name="file", kind=Path, required=True, help="File written by witness export."),
        _flag("replace", "--replace", "Overwrite witnesses already stored."), REPO, FORMAT,
    )),
    Command(("witness", "show"), "List stored witnesses; with --rev or --test, what the tests "
            "depended on.", (
        REV, _str("test", "--test", "Node id whose dependencies to list."), REPO, FORMAT,
    )),
)

# What action.yml runs after 'check --format json' (agentgate/flows/github.py).
CI_GITHUB = Command(("ci", "github"), "Publish a saved 'check --format json' result to GitHub "
                    "Actions: annotations, step outputs, step summary; exits with its code.", (
    Param(name="result", flags=("--result",), kind=Path, required=True,
          help="The file 'agentgate check --format json' wrote."),
    Param(name="exit_code", flags=("--exit-code",), kind=int,
          help="The check's exit code (default: the result's)."),
    Param(name="annotations", flags=("--annotations",), kind=int, default=10, minimum=0,
          help="Most annotations of each type (GitHub shows at most 10 per step)."),
))

GC = Command(("gc",), "Remove agentgate's caches under the git dir (.git/agentgate): cached "
             "worktrees beyond keep_worktrees or unused for cache_days, orphaned scratch "
             "folders, graph caches and base inventories older than cache_days, witness "
             "sets beyond keep_witnesses or older (never the newest). Never a worktree a run "
             "is using.", (
    _flag("dry_run", "--dry-run", "List what would be removed, with sizes; remove nothing."),
    _flag("every", "--all", "Remove everything agentgate keeps there (witnesses included)."),
    Param(name="days", flags=("--days",), kind=int, minimum=0,
          help="Remove what is older than this many days (default: config cache_days)."),
    REPO, FORMAT,
))

COMMANDS: tuple[Command, ...] = (PLAN, CHECK, *TRUST, *LEDGER, ATTRIBUTE, *WITNESS, CI_GITHUB,
                                 GC)


def lookup(args: Sequence[str]) -> tuple[Command, list[str]] | None:
    """The command an argv names, and the arguments after its name."""
    for command in COMMANDS:
        size = len(command.path)
        if tuple(args[:size]) == command.path:
            return command, list(args[size:])
    return None
