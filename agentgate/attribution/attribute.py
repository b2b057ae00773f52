"""``agentgate attribute``: did the patch cause a test's failure, or find it?

The test runs on the base tree (the merge-base) and on the head tree, each a detached worktree
under the git dir, under controlled seeds (``attribution_runs``); every outcome is read from
JUnit XML; ``attribution_verdict`` turns the outcomes into a verdict, ``attribution_report``
into the report. The stages and the order of their runs are ``stages``'s.

Every tree but the base is the patch's code, and no code of the patch is alive while a base
run runs or its outcome is read (flake trial f11): the runs go in batches of one tree, up to
``--jobs`` at a time (``runs.batches``), each finished -- and whatever its processes left
killed (``run.leftovers``) -- before the next starts; a base run's outcome is read as it ends,
from a folder of its own made just before it started.
"""

from __future__ import annotations

import os
import posixpath
import re
import sys
import threading
import time
from contextlib import ExitStack, contextmanager
from dataclasses import replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from agentgate.attribution import evidence
from agentgate.attribution.request import CONTEXTS, MODES, FreezeRequest, Request
from agentgate.attribution.runs import (
    ISOLATED_ENV,
    Harness,
    Runner,
    RunRecord,
    Tree,
    distributes,
    find_inifile,
    isolated,
    prepare_scratch,
)
from agentgate.attribution.stages import Stages
from agentgate.attribution.summary import Summary, build_result, recheck_command
from agentgate.attribution.verdict import (
    Attribution,
    Decision,
    TreeEvidence,
    decide,
    failure_signature,
    without_identity,
)
from agentgate.core.config import PYTEST_CONFIG_FILES, option_words, pytest_option
from agentgate.core.errors import AgentgateError, ConfigError, GitError
from agentgate.core.text import listed
from agentgate.git import gitio, worktrees
from agentgate.git.scratch import scratch_dir
from agentgate.run import installed, interp, process
from agentgate.run.junit import Outcome, RunOutcome, normalise_nodeid, read_outcome

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from agentgate.core.config import Config
    from agentgate.core.model import Result



def attribute(root: Path, config: Config, request: Request) -> Result:
    """Run the attribution and return its Result (``extra`` holds the verdict and evidence)."""
    request = _validated(request, config)
    head = gitio.resolve(root, request.head, what="head")
    base = gitio.merge_base(root, gitio.resolve(root, _base_ref(root, config, request)), head)
    if base == head:
        raise AgentgateError(
            f"base and head are the same commit ({head[:12]}); name the commit the patch "
            "started from with --base"
        )
    _require_on_head(root, head, request.nodeid)
    summary = _collect(root, config, request, base, head)
    if request.shard is not None:
        return _shard_result(request, summary)
    return _verdict(root, config, request, summary)


def _verdict(root: Path, config: Config, request: Request, summary: Summary) -> Result:
    base, head = summary.base_sha, summary.head_sha
    decision = decide(
        summary.base, summary.head, stage=summary.stage, base_problem=summary.base_problem
    )
    if decision.freeze_allowed and summary.context != "file":
        # Alone, a test that needs what another test of its file set up fails on both trees
        # even when the patch broke that other test (flake trial: PRE_EXISTING, freezable).
        decision = replace(decision, freeze_allowed=False, detail=(
            f"{decision.detail}; run alone, which cannot show whether the patch broke what "
            "another test of its file sets up for it: a freeze needs --context file (the "
            "default with --freeze)"))
    if decision.freeze_allowed:
        decision = _confirmed(root, config, request, summary, decision)
    elif decision.verdict is Attribution.NO_REPRO:
        decision = _in_suite(root, config, request, summary, decision)
    result = build_result(summary, decision, recheck_command(request, base, head))
    if request.freeze is not None:
        from agentgate.attribution.freeze import freeze  # only --freeze needs the ledger

        result = freeze(root, config, request, summary, decision, result)
    return result


def _confirmed(root: Path, config: Config, request: Request, summary: Summary,
               decision: Decision) -> Decision:
    """A freeze's last check: the project's own full run -- its settings and plugins, every
    test file, as its CI runs it, in a fixed order -- on a seed the base failed, at the base
    and then at head. The runs above take the test apart from its suite and from the
    project's plugins (xdist's ``worker_id``, another file's set-up); a failure that only
    shows so is theirs, not the base's (flake trial round 3: both trees failed for want of
    what the full run gives, PRE_EXISTING and a freeze, for a patch that broke the test).
    Passing there is HARNESS_ENV; a run that says nothing of the test confirms nothing. The
    base's suite must fail it as the runs above saw it fail, and head's suite as the base's
    does (flake trial round 4: a base suite failing it for another, rarer reason, or in the
    order pytest-randomly drew, confirmed a failure the patch caused)."""
    missing = _missing_here(root, summary)
    if missing is not None:
        return Decision(Attribution.HARNESS_ENV, False, (
            f"{decision.detail}; but it fails for want of {missing}, which this checkout has "
            "and git does not track (a file generated or kept locally): the runs' trees, "
            "checked out from git, lack it, so no freeze (commit it, or create it in a "
            "conftest)"))
    helpers = _helpers_changed(root, config, summary.base_sha, summary.head_sha, request.nodeid)
    if helpers:
        return Decision(Attribution.INCONCLUSIVE, False, (
            f"{decision.detail}; but test code it runs changed in the range "
            f"({listed(helpers, 3)}): how it fails at head may be that code's doing, not the "
            "base's, and the test's own source says nothing of it; no freeze from here "
            "(attribute before the helper changes, or freeze by hand after review)"))
    worker = _reads_worker(root, summary.base_sha, summary.head_sha, request.nodeid)
    if worker is not None:
        return Decision(Attribution.HARNESS_ENV, False, (
            f"{decision.detail}; but {worker} reads which xdist worker runs it (worker_id, "
            "testrun_uid or PYTEST_XDIST_WORKER), and these runs, as the project's "
            "configuration, use one process: a CI giving -n on its command line runs it "
            "otherwise; no freeze from here (put -n in addopts, or freeze by hand)"))
    failing = summary.base.failing_seeds() if summary.base is not None else []
    seed = failing[0] if failing else config.pythonhashseed
    outcome = _full_run(root, config, request, summary.base_sha, seed)
    if outcome.outcome not in (Outcome.FAILED, Outcome.ERROR):
        said = ("passes" if outcome.outcome is Outcome.PASSED else
                f"was not confirmed ({outcome.outcome}: {outcome.detail})")
        return Decision(Attribution.HARNESS_ENV, False, (
            f"{decision.detail}; but in the base's own full run (the project's pytest "
            f"settings and plugins, seed {seed}) the test {said}: it fails only as "
            "attribution runs it, apart from its suite, so no freeze"))
    base_sig = failure_signature(outcome.outcome, outcome.detail)
    seen = sorted({without_identity(s) for s in summary.base.signatures()}
                  if summary.base is not None else ())
    if base_sig not in seen:
        return Decision(Attribution.INCONCLUSIVE, False, (
            f"{decision.detail}; but the base's own full run (seed {seed}) fails it otherwise "
            f"({base_sig}) than the runs above ({'; '.join(seen) or 'none'}): what fails it "
            "in its suite is not what they saw, so no freeze"))
    head = _full_run(root, config, request, summary.head_sha, seed)
    head_sig = (failure_signature(head.outcome, head.detail)
                if head.outcome in (Outcome.FAILED, Outcome.ERROR) else None)
    if head_sig == base_sig:
        return _unpinned(root, config, request, summary, decision, seed)
    if head.outcome is Outcome.PASSED:
        return Decision(Attribution.NO_REPRO, False, (
            f"{decision.detail}; but head's own full run (seed {seed}) passes the test: "
            "nothing to freeze"))
    said = head_sig or f"{head.outcome}: {head.detail}"
    return Decision(Attribution.PATCH_INDUCED, False, (
        f"{decision.detail}; but in the project's own full runs (seed {seed}) head fails it "
        f"otherwise ({said}) than the base ({base_sig}): the patch changed how it fails"))


# What an xdist worker gives a test: in one process, "master", no uid, no variable.
_WORKER_NAMES = ("worker_id", "testrun_uid", "PYTEST_XDIST_WORKER")


def _helpers_changed(root: Path, config: Config, base: str, head: str, nodeid: str
                     ) -> list[str]:
    """The test-side code the range changed that the test runs besides its own function:
    a conftest above its file, a helper module under the test roots its file names
    (flake trial round 5, r26: the agent rewrote the helper the failing test calls; its
    source, the identity, was unchanged, it failed on the same line with the same message,
    and the patch's own failure was frozen)."""
    from agentgate.core.paths import TestFiles, under_any

    path = normalise_nodeid(nodeid).split("::", 1)[0]
    folders = {posixpath.dirname(path)}
    while (parent := posixpath.dirname(min(folders, key=len))) not in folders:
        folders.add(parent)
    texts = [gitio.read_text_at(root, rev, path) or "" for rev in (base, head)]
    tests = TestFiles(config)
    found: set[str] = set()
    for change in gitio.diff_changes(root, base, head):
        for changed in change.paths:
            if not changed.endswith(".py") or changed == path:
                continue
            stem = posixpath.splitext(posixpath.basename(changed))[0]
            if stem == "conftest":
                if posixpath.dirname(changed) in folders:
                    found.add(changed)
            elif (under_any(changed, config.tests) and not tests.match(changed)
                  and stem != "__init__"
                  and any(re.search(rf"\b{re.escape(stem)}\b", t) for t in texts)):
                found.add(changed)
    return sorted(found)


_NO_SUCH_FILE = re.compile(r"No such file or directory: '([^']+)'")
_IN_WORKTREE = re.compile(r"[/\\]\.git[/\\]agentgate[/\\][^'\s]*?worktrees[/\\][^/\\]+[/\\]"
                          r"[^/\\]+[/\\](.+)$")


def _missing_here(root: Path, summary: Summary) -> str | None:
    """A file the base's failing runs looked for in vain that this checkout has and git
    does not track at the base (flake trial round 5, r20: a gitignored ``config/local.json``
    the developer and CI create; the runs' trees, from git, lack it, and both failed alike
    before the patched code)."""
    if summary.base is None:
        return None
    wanted: set[str] = set()
    for record in summary.base.records:
        for name in _NO_SUCH_FILE.findall(record.detail or ""):
            inside = _IN_WORKTREE.search(name)
            rel = inside.group(1) if inside else (None if os.path.isabs(name) else name)
            if rel and not rel.startswith(".."):
                wanted.add(posixpath.normpath(rel.replace("\\", "/")))
    present = sorted(w for w in wanted if (root / w).exists())
    if not present:
        return None
    tracked = gitio.ls_tree(root, summary.base_sha, tuple(present))
    return next((w for w in present if w not in tracked), None)


def _reads_worker(root: Path, base: str, head: str, nodeid: str) -> str | None:
    """The test's file, or a conftest above it, at the base or at head, that names what
    xdist's workers give a test, when the base's own configuration does not run xdist --
    the base is the contract: ``-n`` a patch writes into ``addopts`` settles nothing (flake
    trial round 4, r03: CI's workflow ran ``pytest -n 2``; the test needed a worker's id, the
    patch broke the code, and one-process runs on both trees failed it alike: frozen)."""
    path = normalise_nodeid(nodeid).split("::", 1)[0]
    folders = [posixpath.dirname(path)]
    while folders[-1]:
        folders.append(posixpath.dirname(folders[-1]))
    files = [path, *(posixpath.join(f, "conftest.py") for f in folders)]
    at_base = gitio.read_many_at(root, base, [*files, *PYTEST_CONFIG_FILES])
    at_head = gitio.read_many_at(root, head, files)
    found = next((f for f in files for texts in (at_base, at_head)
                  if any(n in (texts.get(f) or "") for n in _WORKER_NAMES)), None)
    if found is None:
        # Or any Python file of the tree: a helper the test calls, the code itself (flake
        # trial round 5: ``tests/helpers/db.py`` read ``PYTEST_XDIST_WORKER``).
        found = next(iter(sorted(set().union(*(
            gitio.files_matching(root, rev, _WORKER_NAMES, ("*.py",), fixed=True)
            for rev in dict.fromkeys((base, head)))))), None)
    if found is None:
        return None
    try:
        words = option_words(pytest_option(
            {f: at_base.get(f) for f in PYTEST_CONFIG_FILES}, "addopts"))
    except ConfigError:
        words = []
    return None if distributes(words) else found


def _unpinned(root: Path, config: Config, request: Request, summary: Summary,
              decision: Decision, seed: int) -> Decision:
    """The base's own full run once more in each time zone and locale CI or this shell would
    run the tests in, where they differ from the pinned ones: a test that passes there fails
    only for the pins (flake trial round 4: CI's workflow sets ``TZ=Europe/Berlin``, the
    test's first assert needs it, the patch broke the code after it; under the pinned UTC
    both trees failed at that first assert, and it was frozen)."""
    pinned = config.pinned_env()
    tried: list[dict[str, str]] = []
    for where, values in (("this shell's", _shell_values()),
                          ("the CI definitions'", _ci_values(root, summary.base_sha)),
                          ("this shell's own home", _shell_home())):
        wanted = {n: v for n, v in values.items() if v != pinned.get(n)}
        if not wanted or wanted in tried:
            continue
        tried.append(wanted)
        outcome = _full_run(root, config, request, summary.base_sha, seed, env=wanted)
        if outcome.outcome is Outcome.PASSED:
            shown = ", ".join(f"{n}={v}" for n, v in sorted(wanted.items()))
            return Decision(Attribution.HARNESS_ENV, False, (
                f"{decision.detail}; but the base's own full run passes the test with "
                f"{where} {shown} in place of the runs' "
                f"({', '.join(f'{n}={pinned[n]}' for n in _UNPINNED)}, an empty HOME): it "
                "fails for the runs' environment alone; set [tool.agentgate] tz / lc_all to "
                "what CI uses, or give the tests what they read from the environment"))
    return decision


# The pinned inputs a confirming run also tries as CI or the shell sets them.
_UNPINNED = ("TZ", "LC_ALL")
# ``TZ: Europe/Berlin`` in a workflow's ``env``, ``TZ=UTC`` in tox's ``setenv``, and any other
# variable named in capitals the same way (flake trial round 5: ``SHOP_MODE: strict`` in the
# workflow's ``env``, which the runs never had). Values with no ``${{ }}`` or ``$VAR`` only.
_CI_SETTING = re.compile(r"""(?:^|[\s{,\-])([A-Z][A-Z0-9_]*)\s*[:=][ \t]*["']?"""
                         r"""([A-Za-z0-9_+\-./@:]+)["']?[ \t]*(?=[,}\n]|$)""", re.MULTILINE)
# What CI sets that says nothing of the tests' environment, or that the runs must keep.
_CI_KEEP = frozenset((
    "PATH", "HOME", "PYTHONPATH", "PYTHONHASHSEED", "PYTEST_ADDOPTS", "PYTEST_PLUGINS",
    "GITHUB_TOKEN", "CI", "FORCE_COLOR", "TERM", "SHELL", "PIP_DISABLE_PIP_VERSION_CHECK",
    "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE"))
_CI_FILES = (":(glob).github/workflows/*.yml", ":(glob).github/workflows/*.yaml",
             ".gitlab-ci.yml", ".circleci/config.yml", "azure-pipelines.yml", "tox.ini")


def _shell_values() -> dict[str, str]:
    return {n: os.environ[n] for n in _UNPINNED if n in os.environ}


def _shell_home() -> dict[str, str]:
    """This shell's ``HOME``, where the runs have an empty one of their own (flake trial round
    5: the code read ``~/.shoprc``, which the developer and CI's workflow have)."""
    home = os.environ.get("HOME")
    return {"HOME": home} if home and os.path.isdir(home) else {}


def _ci_values(root: Path, rev: str) -> dict[str, str]:
    """The variables the base's CI definitions set (the first value of each): the time zone
    and locale, and any other a workflow's ``env`` or tox's ``setenv`` names."""
    found: dict[str, str] = {}
    files = sorted(gitio.files_matching(root, rev, r"[A-Z][A-Z0-9_]*[[:space:]]*[:=]",
                                        _CI_FILES))
    for text in (gitio.read_many_at(root, rev, files) if files else {}).values():
        for name, value in _CI_SETTING.findall(text or ""):
            if name not in _CI_KEEP and not name.startswith(("GITHUB_", "RUNNER_")):
                found.setdefault(name, value)
    return found


def _in_suite(root: Path, config: Config, request: Request, summary: Summary,
              decision: Decision) -> Decision:
    """Nothing failed apart from the suite: head's own full run says whether the test
    fails where CI runs it, and the base's whose doing that is (flake trial round 4: a test
    file the patch added left a state that failed the test in the suite alone, and the
    attribution said NO_REPRO, exit 0)."""
    seed = config.pythonhashseed
    head = _full_run(root, config, request, summary.head_sha, seed)
    if head.outcome not in (Outcome.FAILED, Outcome.ERROR):
        return decision
    head_sig = failure_signature(head.outcome, head.detail)
    base = _full_run(root, config, request, summary.base_sha, seed)
    where = f"in head's own full run (seed {seed}) the test fails ({head_sig})"
    if base.outcome is Outcome.PASSED:
        return Decision(Attribution.PATCH_INDUCED, False, (
            f"{decision.detail}; but {where}, and in the base's it passes: it fails only in "
            "its suite, where the patch's code or tests run before it"))
    base_sig = failure_signature(base.outcome, base.detail)
    if base.outcome in (Outcome.FAILED, Outcome.ERROR) and base_sig != head_sig:
        return Decision(Attribution.PATCH_INDUCED, False, (
            f"{decision.detail}; but {where}, and the base's fails it otherwise "
            f"({base_sig}): the patch changed how"))
    return Decision(Attribution.INCONCLUSIVE, False, (
        f"{decision.detail}; but {where}, and the base's ({base.outcome}): it fails only "
        "in its suite, which these runs do not take apart; no freeze"))


def _full_run(root: Path, config: Config, request: Request, rev: str,
              seed: int, *, env: dict[str, str] | None = None) -> RunOutcome:
    """The project's plain command (``python -m pytest``) in a tree of ``rev``, in the
    file order pytest collects: pytest-randomly, where installed, shuffles nothing. ``env``:
    pinned inputs set otherwise (``_unpinned``)."""
    python = interp.project_python(root, config)
    with ExitStack() as stack:
        scratch = stack.enter_context(scratch_dir("attribute-control", root))
        tree = stack.enter_context(worktrees.temporary_worktree(root, rev))
        home = scratch / "home"
        (home / "tmp").mkdir(parents=True)
        run_env = {**isolated(interp.test_env(config, tree, seed=seed), home, config.root),
                   **(env or {})}
        xml = scratch / "control.xml"
        session = stack.enter_context(process.Session())
        with (scratch / "control.err").open("wb") as err:
            done = session.run([python, "-m", "pytest", "-q", "-p", "no:randomly",
                                f"--junitxml={xml}", "-o", "cache_dir=$HOME/.pytest_cache"],
                               cwd=tree, env=run_env,
                               timeout=float(request.timeout or config.timeout or 600) * 10,
                               stderr=err)
        if done.timed_out:
            return RunOutcome(Outcome.TIMEOUT, f"killed after {done.seconds:.0f} s")
        tail = (scratch / "control.err").read_bytes()[-4000:].decode("utf-8", "replace")
        return read_outcome(xml, request.nodeid, done.returncode, tail)


def _validated(request: Request, config: Config) -> Request:
    nodeid = normalise_nodeid(request.nodeid)
    problems = []
    if "::" not in nodeid:
        problems.append(f"{nodeid!r} is not a test node id; name one test as path::test")
    if request.mode not in MODES:
        problems.append(f"--mode must be one of {', '.join(MODES)}")
    if request.context not in CONTEXTS:
        problems.append(f"--context must be one of {', '.join(CONTEXTS)}")
    for name in ("runs", "repeats", "jobs", "timeout"):
        value = getattr(request, name)
        if value is not None and value < 1:
            problems.append(f"--{name} must be at least 1")
    if any(s < 0 or s > 4294967295 for s in request.seeds):
        problems.append("--seed must be 0..4294967295 (PYTHONHASHSEED's range)")
    if request.freeze is not None and request.shard is not None:
        problems.append("--freeze goes with --merge, not with one --shard")
    if request.freeze is not None:
        # UTC, as the ledger counts days: a freeze expires on the same day everywhere.
        today = request.today or datetime.now(UTC).date()
        problems += _freeze_problems(request.freeze, config, today)
    problems += _shard_problems(request)
    if problems:
        raise AgentgateError("; ".join(problems))
    return replace(request, nodeid=nodeid)


def _shard_problems(request: Request) -> list[str]:
    if (request.shard is None) == (request.evidence_out is None):
        return []
    return ["--shard I/N and --evidence-out FILE go together"]


def _freeze_problems(freeze: FreezeRequest, config: Config, today: date) -> list[str]:
    """Checked before any run, so a bad --until never costs a whole attribution."""
    problems = []
    if not freeze.owner.strip():
        problems.append("--freeze needs --owner NAME")
    days = (freeze.until - today).days
    if days < 1:
        problems.append(f"--until {freeze.until} is not in the future")
    elif days > config.max_freeze_days:
        problems.append(
            f"--until {freeze.until} is {days} days away; the maximum is "
            f"{config.max_freeze_days} (max_freeze_days)"
        )
    return problems


def _base_ref(root: Path, config: Config, request: Request) -> str:
    return request.base or gitio.default_base(root, config.base_branch)


def _require_on_head(root: Path, head: str, nodeid: str) -> None:
    path = nodeid.split("::")[0]
    if gitio.read_at(root, head, path) is None:
        raise AgentgateError(
            f"{path} does not exist at head {head[:12]}; check the node id (it is relative "
            "to the repository root) or commit the test"
        )


# --- running the stages -------------------------------------------------------------------

def _collect(root: Path, config: Config, request: Request, base: str, head: str) -> Summary:
    started = time.monotonic()
    jobs = 1 if request.serial else (request.jobs or os.cpu_count() or 1)
    python = interp.project_python(root, config)
    with ExitStack() as stack:
        scratch = stack.enter_context(scratch_dir("attribute", root))
        harness = Harness(
            config=config, python=python, nodeid=request.nodeid, scratch=scratch,
            timeout=float(request.timeout or config.timeout or 600), context=request.context,
            # Loaded by its entry point only: with autoloading off, ``-n`` is no option.
            xdist=interp.require_pytest(python, dict(os.environ), root)
            and not os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"),
        )
        empty = prepare_scratch(harness)
        trees = {"head": _tree(stack, root, "head", head, request.nodeid, empty)}
        base_problem = ""
        base_has_file = gitio.read_at(root, base, request.nodeid.split("::")[0]) is not None
        if base_has_file:
            try:
                trees["base"] = _tree(stack, root, "base", base, request.nodeid, empty)
            except GitError as exc:
                base_problem = f"cannot check out {base[:12]}: {exc.message}"
        # The interpreter's own files, noted before any run: see ``installed``.
        outside = installed.folders(python, interp.test_env(config, trees["head"].path),
                                    root, [root, scratch])
        noted = installed.note(outside)
        # Entered last, so left first: every run's group is dead before its tree goes.
        session = stack.enter_context(process.Session())
        with _progress(request) as on_done:
            stages = Stages(
                Runner(harness, trees, session), request, config, jobs, on_done,
                lambda: _reverted_tree(stack, root, base, head, request, config, empty),
            )
            # No guess: nothing runs when the base cannot even be checked out.
            records = [] if base_problem else stages.run(base_has_file)
        if not base_problem and "base" in trees:
            base_problem = _written_into(trees["base"].path, config) or _installed_changed(
                noted, installed.note(outside))
    # After the locks are released; the trees just used are kept (issue 13: they piled up).
    worktrees.prune(root, config.keep_worktrees, config.cache_days)
    return _summary(records, request, config, base_problem, python, jobs,
                    (base, head, time.monotonic() - started))


def _written_into(tree: Path, config: Config) -> str:
    """Why the base's runs are no evidence, when something wrote into the base's tree while
    they ran a file that changes a run (a conftest, a module): the head's code knows where
    the base's tree is, and what a head run wrote there stays for the base's later runs
    (flake trial: head's conftest wrote a failing conftest into it, and the patch's failure
    was PRE_EXISTING, freezable)."""
    changed = [*worktrees.run_changing(gitio.changed_or_untracked(tree), config),
               *worktrees.ignored_inputs(tree, config)]
    # Code and harness, and any file the base commits: a test writing new output under
    # tests/ is no tampering, a changed data file of the base's is (flake trial round 3:
    # head's code rewrote the base's data file, and 39 of 40 base runs read it).
    found = [f for f in changed if f.endswith(worktrees.IMPORTABLE)
             or f.rsplit("/", 1)[-1] in worktrees.HARNESS_NAMES]
    found += gitio.changed_tracked(tree)
    if not found:
        return ""
    shown = ", ".join(sorted(set(found))[:3])
    return (f"the base's tree changed while the test ran ({shown}): a run wrote into it, so "
            "its runs are no evidence")


def _installed_changed(before: installed.Noted, after: installed.Noted) -> str:
    """Why the base's runs are no evidence, when the interpreter's own files changed while
    they ran: a head run wrote there, and the base's later runs ran it."""
    found = installed.changed(before, after)
    if not found:
        return ""
    shown = listed(found, 3)
    return (f"the interpreter's installed files changed while the test ran ({shown}): a run "
            "wrote into them, so its runs are no evidence; reinstall the environment")


def _tree(stack: ExitStack, root: Path, name: str, sha: str, nodeid: str, empty: Path) -> Tree:
    path = stack.enter_context(worktrees.using_worktree(root, sha))
    return Tree(name=name, sha=sha, path=path, inifile=find_inifile(path, nodeid, empty))


def _reverted_tree(
    stack: ExitStack, root: Path, base: str, head: str, request: Request, config: Config,
    empty: Path,
) -> Tree:
    """The base's code with the head's test files: does the new test fail without the
    patch's code change?"""
    path = stack.enter_context(worktrees.temporary_worktree(root, base))
    node_file = request.nodeid.split("::")[0]
    for change in gitio.diff_changes(root, base, head):
        for rel in change.paths:
            if rel == node_file or _test_side(rel, config.tests):
                _overlay(root, head, path, rel)
    return Tree("reverted", base, path, find_inifile(path, request.nodeid, empty))


def _test_side(rel: str, test_roots: tuple[str, ...]) -> bool:
    name = rel.rsplit("/", 1)[-1]
    in_roots = any(rel == t or rel.startswith(t.rstrip("/") + "/") for t in test_roots)
    return in_roots or name == "conftest.py"


def _overlay(root: Path, head: str, tree: Path, rel: str) -> None:
    data = gitio.read_at(root, head, rel)
    target = tree / rel
    if data is None:
        target.unlink(missing_ok=True)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)


def _summary(
    records: list[RunRecord], request: Request, config: Config, base_problem: str,
    python: str, jobs: int, shas_and_time: tuple[str, str, float],
) -> Summary:
    base, head, wall = shas_and_time
    trees = {name: tuple(r for r in records if r.run.tree == name)
             for name in ("base", "head", "reverted")}
    if trees["head"] and all(r.outcome is Outcome.NOT_COLLECTED for r in trees["head"]):
        raise AgentgateError(
            f"pytest collects no test {request.nodeid} on head {head[:12]}; check the node id "
            f"(python -m pytest --collect-only -q {request.nodeid.split('::')[0]})"
        )
    return Summary(
        nodeid=request.nodeid, mode=request.mode, context=request.context,
        seeds=tuple(sorted({r.run.seed for r in records})), runs=request.runs,
        repeats=request.repeats, stage="matched" if request.mode == "matched" else "swept",
        jobs=jobs, serial=request.serial, python=python,
        env={"TZ": config.tz, "LC_ALL": config.lc_all, **ISOLATED_ENV},
        base=None if base_problem else TreeEvidence("base", base, trees["base"]),
        head=TreeEvidence("head", head, trees["head"]),
        reverted=TreeEvidence("reverted", base, trees["reverted"]) if trees["reverted"] else None,
        base_problem=base_problem, base_sha=base, head_sha=head, wall_seconds=wall,
    )


# --- sharded: one share of the seeds, then a merge of every share (attribution.evidence) ---

def _asked(request: Request, summary: Summary) -> dict[str, object]:
    count = request.shard[1] if request.shard else 1
    return {"nodeid": request.nodeid, "base": summary.base_sha, "head": summary.head_sha,
            "mode": request.mode, "context": request.context, "runs": request.runs,
            "repeats": request.repeats, "seeds": tuple(request.seeds),
            "revert_code": request.revert_code, "env": summary.env, "of": count}


def _shard_result(request: Request, summary: Summary) -> Result:
    from agentgate.core.model import Result

    assert request.shard is not None and request.evidence_out is not None
    records = [*summary.head.records, *(summary.base.records if summary.base else ()),
               *(summary.reverted.records if summary.reverted else ())]
    found = evidence.Evidence(_asked(request, summary), request.shard[0], tuple(records),
                              summary.base_problem, summary.python, summary.wall_seconds)
    evidence.write(request.evidence_out, found)
    index, count = request.shard
    return Result(command="attribute", base=summary.base_sha, head=summary.head_sha, notes=[
        f"attribute shard {index}/{count}: {len(records)} runs written to "
        f"{request.evidence_out}",
        "merge every shard's file with: agentgate attribute NODEID --merge FILE|FOLDER"])


def attribute_merge(root: Path, config: Config, request: Request, paths: list[Path]) -> Result:
    """The verdict over every shard's evidence, as one attribution of all the runs."""
    nodeid = _validated(request, config).nodeid
    shards = [evidence.read(p) for p in evidence.files(paths)]
    evidence.check(shards, nodeid)
    asked = shards[0].asked
    # The evidence is of the revisions it names; a verdict (and a freeze) is of the head
    # asked about now (flake trial round 3: evidence of an earlier head froze this one).
    head = gitio.resolve(root, request.head, what="head")
    if asked["head"] != head:
        raise AgentgateError(
            f"attribute --merge: the evidence is of head {str(asked['head'])[:12]}, not "
            f"{request.head} ({head[:12]}); run the shards again at this head")
    if request.base:
        base = gitio.merge_base(root, gitio.resolve(root, request.base), head)
        if asked["base"] != base:
            raise AgentgateError(
                f"attribute --merge: the evidence is of base {str(asked['base'])[:12]}, not "
                f"the merge-base of {request.base} ({base[:12]})")
    merged = replace(request, nodeid=nodeid, mode=str(asked["mode"]),
                     context=str(asked["context"]), runs=int(asked["runs"]),
                     repeats=int(asked["repeats"]), seeds=tuple(asked["seeds"]),
                     revert_code=bool(asked["revert_code"]), base=str(asked["base"]),
                     head=str(asked["head"]))
    problem = next((s.base_problem for s in shards if s.base_problem), "")
    records = [r for s in shards for r in s.records]
    summary = _summary(records, merged, config, problem, shards[0].python, len(shards),
                       (str(asked["base"]), str(asked["head"]),
                        max(s.wall_seconds for s in shards)))
    return _verdict(root, config, merged, replace(summary, env=dict(asked["env"])))


# --- care: progress ------------------------------------------------------------------------

@contextmanager
def _progress(request: Request) -> Iterator[Callable[[int, RunRecord | None], None]]:
    """A rich progress bar on stderr, only on a TTY; ``(n, None)`` adds n runs to the total."""
    show = sys.stderr.isatty() if request.progress is None else request.progress
    if not show:
        yield lambda _n, _r: None
        return
    from rich.console import Console
    from rich.progress import Progress

    lock = threading.Lock()
    with Progress(console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(f"attribute {request.nodeid}", total=0)

        def on_done(added: int, record: RunRecord | None) -> None:
            with lock:
                if added:
                    bar.update(task, total=(bar.tasks[0].total or 0) + added)
                if record is not None:
                    bar.advance(task)

        yield on_done


__all__ = ["Attribution", "FreezeRequest", "Request", "attribute"]
