"""``agentgate witness record``: run the full suite once with recording, store the witness.

The suite runs under the project's own interpreter and pinned environment
(``agentgate.interp``), on a clean tree of the revision: the work tree when it is clean and
at that revision, else the revision's worktree from ``git.worktrees``, and as a
``run.process`` run, so an interrupt leaves no pytest behind. agentgate may itself run from
pre-commit's isolated environment while the project's interpreter lacks it (or coverage):
then this run alone gets a folder on ``PYTHONPATH`` holding links to agentgate's package and
to coverage's, and ``-p agentgate.witness`` loads the plugin from there. pytest runs through
``agentgate.witness.boot``, which starts recording before pytest is imported: what pytest's
start-up runs of the repository is seen, and charged to every test.
"""

from __future__ import annotations

import functools
import json
import os
import re
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol

from agentgate.core.config import Config
from agentgate.core.config import load as load_config
from agentgate.core.errors import AgentgateError, ConfigError
from agentgate.core.model import Result
from agentgate.git import gitio, worktrees
from agentgate.git.scratch import scratch_dir
from agentgate.run import interp, leaks, process
from agentgate.run import progress as run_progress
from agentgate.witness import depgraph as graph
from agentgate.witness import envprint, shards
from agentgate.witness.harvest import RAW_VERSION
from agentgate.witness.store import Store

# Whether pytest and coverage are there, found without importing them (importing pytest
# alone took 0.15 s of every recording), and the raw format the interpreter's agentgate
# writes, if it has one.
_PROBE = (
    "import importlib.util, json\nout = {}\n"
    "for name in ('coverage', 'pytest'):\n"
    " try:\n  out[name] = importlib.util.find_spec(name) is not None\n"
    " except Exception: pass\n"
    "try:\n from agentgate.witness import harvest; out['raw'] = harvest.RAW_VERSION\n"
    " spec = importlib.util.find_spec('agentgate.run.outcomes')\n"
    " out['leaks'] = 'LEAKS_OPTION' in open(spec.origin, encoding='utf-8').read()\n"
    "except Exception: pass\n"
    "print(json.dumps(out))\n"
)


class Carry(Protocol):
    """What an incremental recording (``witness.incremental``) carries over from a stored
    witness: the tests not run again, and how the fresh part joins them."""

    @property
    def ids(self) -> frozenset[str]: ...

    def combine(self, fresh: graph.Witness, collected: frozenset[str]) -> graph.Witness: ...


CARRY_OPTION = "--agentgate-witness-carry"
BOOT = "agentgate.witness.boot"
LEAKS = "leaks.json"  # beside the raw recording


def record(
    root: Path, config: Config, *, rev: str | None = None, pytest_args: Sequence[str] = (),
    shard: str | None = None, out: Path | None = None,
    display: run_progress.Display | None = None, carry: Carry | None = None,
) -> Result:
    """The whole suite into the store; with ``shard`` (``I/N``), the I-th share into ``out``
    for ``witness merge`` (``witness.shards``); with ``carry``, every test but the carried
    ones (the whole suite is still collected)."""
    part = _shard_request(shard, out)
    # Only a recording of the whole suite names every base test (issue 11 item 2: the base
    # inventory comes from it); one narrowed by -k, -m, --deselect or -x does not.
    whole = not pytest_args
    if part is not None:
        pytest_args = (*pytest_args, f"--agentgate-witness-shard={part[0]}/{part[1]}")
    sha = gitio.resolve(root, rev or "HEAD")
    # The tree like every other run's (``worktrees``: cached, locked, reset, removed on an
    # interrupt); the shim and the raw recording in a scratch folder under the git dir.
    with worktrees.clean_checkout(root, sha, config) as tree, scratch_dir("witness", root) as tmp:
        python = interp.project_python(root, config)
        env = interp.test_env(config, tree)
        # The interpreter's fingerprint is its own process: it runs beside the suite.
        with ThreadPoolExecutor(max_workers=1) as pool:
            fingerprint = pool.submit(env_described, python)
            shim_note = _make_importable(python, env, tree, tmp / "shim")
            raw_path = tmp / "raw.json"
            carry_args = _carry_args(carry, tmp / "carry.json")
            _run_suite(python, env, tree, raw_path, config, (*pytest_args, *carry_args),
                       display=display)
            raw = _read_raw(raw_path)
            env_print, dists = fingerprint.result()
            witness = build(root, raw, sha=sha, tree=tree, python=python, env=env_print)
            witness.info[graph.DISTRIBUTIONS] = dists
            state = _state_leaks(raw_path.with_name(LEAKS), (tree, root))
            if state is not None:
                witness.info[graph.STATE_LEAKS] = state
        witness.info[graph.WHOLE_SUITE] = whole
        if carry is not None:
            witness = carry.combine(witness, _carried(tmp / "carry.json"))
    # After the lock is released; the tree just used is kept (issue 13: they piled up).
    worktrees.prune(root, config.keep_worktrees, config.cache_days)
    if part is not None and out is not None:
        shards.write(out, shards.Shard(part[0], part[1], witness))
        return _shard_result(witness, part, out, shim_note)
    store = Store.for_repo(root)
    replaced = store.save(witness)
    store.prune(config.keep_witnesses)
    return _result(witness, replaced, shim_note)


def _carry_args(carry: Carry | None, path: Path) -> tuple[str, ...]:
    """The plugin deselects the carried tests after collection and writes which of them
    it collected to ``path.collected`` (``plugin.carried``)."""
    if carry is None:
        return ()
    path.write_text(json.dumps(sorted(carry.ids)), encoding="utf-8")
    return (f"{CARRY_OPTION}={path}",)


def _carried(path: Path) -> frozenset[str]:
    try:
        found = json.loads(path.with_name(path.name + ".collected").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise AgentgateError(f"the recording did not say which tests it carried ({exc}); "
                             "record again without --incremental") from None
    return frozenset(str(n) for n in found)


def _shard_request(shard: str | None, out: Path | None) -> tuple[int, int] | None:
    if shard is None and out is None:
        return None
    if shard is None or out is None:
        raise ConfigError("witness record: --shard I/N and --out FILE go together")
    return shards.parse(shard)


def _shard_result(witness: graph.Witness, part: tuple[int, int], out: Path,
                  note: str | None) -> Result:
    lines = [f"witness shard {part[0]}/{part[1]}: {len(witness.tests)} tests written to {out}",
             "merge every shard's file with: agentgate witness merge FILE..."]
    return Result(command="witness record", head=witness.sha,
                  notes=[*lines, *([note] if note else [])])


def merge(root: Path, files: Sequence[Path]) -> Result:
    """Shard files into the store, as one witness; any mismatch is refused (exit 64)."""
    witness = shards.merge([shards.read(f) for f in files])
    if not gitio.ref_exists(root, witness.sha):
        raise ConfigError(f"witness merge: the shards were recorded at {witness.sha[:12]}, "
                          "which this repository does not have; fetch it first")
    replaced = Store.for_repo(root).save(witness)
    result = _result(witness, replaced, None)
    result.command = "witness merge"
    return result


def _probe(python: str, env: dict[str, str], cwd: Path) -> dict[str, Any]:
    done = process.capture([python, "-c", _PROBE], env=env, cwd=cwd)
    try:
        found: dict[str, Any] = json.loads(done.stdout)
    except ValueError:
        why = done.stderr.decode("utf-8", "replace").strip()[:200]
        raise AgentgateError(f"{python} does not run ({why}); "
                             "set [tool.agentgate] python") from None
    return found


def _make_importable(python: str, env: dict[str, str], tree: Path, shim: Path) -> str | None:
    """Make the plugin (and coverage) importable in the project's interpreter if needed."""
    found = _probe(python, env, tree)
    if not found.get("pytest"):
        raise AgentgateError(f"{python} has no pytest; install the project's test dependencies")
    missing = []
    # An agentgate installed there that records the same format but reads no state leaks
    # (``--agentgate-leaks`` would be an unknown option) is shadowed by this one too.
    if found.get("raw") != RAW_VERSION or not found.get("leaks"):
        missing.append(Path(__file__).resolve().parents[1])  # the agentgate package
    if not found.get("coverage"):
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
    pytest_args: Sequence[str], *, display: run_progress.Display | None = None,
) -> None:
    # ``boot`` starts recording before pytest is imported, then runs it as ``-m pytest``
    # would: what pytest's start-up runs of the repository is seen, not charged whole.
    # The outcome plugin's state readings too: what each test leaves changed (``run.leaks``).
    cmd = [
        python, "-m", BOOT, "-p", "agentgate.witness", "--agentgate-witness",
        f"--agentgate-witness-out={raw_path}", "-p", "agentgate.run.outcomes",
        f"--agentgate-leaks={raw_path.with_name(LEAKS)}",
        f"--agentgate-witness-ambient={','.join(config.ambient)}",
        # pytest's cache beside the recording, never in the tree (new-user trial: a recording
        # in a clean checkout left .pytest_cache/ there), as the band's runs do.
        "-o", f"cache_dir={raw_path.with_name('pytest-cache')}",
        f"--rootdir={tree}", *pytest_args,
    ]
    # pytest's own output goes to a log, its tail to stderr when the run went wrong (new-user
    # trial: a project's ``addopts = -v`` printed 1,231 PASSED lines before the result, where
    # ``check`` and the hooks show none): stdout carries agentgate's report.
    done = (_run_logged(cmd, tree, env, raw_path) if display is None
            else _run_watched(cmd, tree, env, raw_path, display))
    # 5: a shard whose files all hash elsewhere ran no test, which is a valid share.
    # An incremental recording that carries every test runs none either.
    sharded = any(a.startswith(("--agentgate-witness-shard=", CARRY_OPTION))
                  for a in pytest_args)
    if done.returncode not in ((0, 1, 5) if sharded else (0, 1)) or not raw_path.is_file():
        raise AgentgateError(_failed_recording(done.returncode, raw_path.is_file()))


def _failed_recording(code: int, wrote: bool) -> str:
    """Whose failure a recording that did not finish is: the suite's (its collection or
    configuration: exit 2, 4), or possibly the recorder's (an internal error, or a session
    that ended well without the recording): not always the suite's to fix."""
    if code in (0, 1, 5) and not wrote:
        return (f"pytest exited {code} but agentgate's recorder wrote no recording: that is "
                "a bug in agentgate; report it with pytest's output above")
    if code == 3:
        return ("pytest stopped with an internal error while recording (see its output "
                "above): a traceback through agentgate/witness/ is a bug in agentgate's "
                "recorder to report; any other, fix it in the suite and record again")
    return (f"pytest exited {code} while recording (see its output above); fix the suite's "
            "collection or configuration and record again")


def _run_watched(cmd: list[str], tree: Path, env: dict[str, str], raw_path: Path,
                 display: run_progress.Display) -> process.Finished:
    """On a terminal: live counts from agentgate's outcome plugin (issue 13) in place of
    pytest's output (``_run_logged``)."""
    feed = raw_path.with_name("progress.jsonl")
    cmd = [*cmd[:3], f"{run_progress.PROGRESS_OPTION}={feed}", *cmd[3:]]
    with run_progress.following(feed, "witness", display):
        return _run_logged(cmd, tree, env, raw_path)


def _run_logged(cmd: list[str], tree: Path, env: dict[str, str], raw_path: Path
                ) -> process.Finished:
    """pytest's output into a log beside the recording, whose tail is shown when the run
    went wrong."""
    log = raw_path.with_name("pytest.log")
    with log.open("wb") as out:
        done = process.run(cmd, cwd=tree, env=env, stdout=out, stderr=process.STDOUT)
    if done.returncode not in (0, 1, 5) or not raw_path.is_file():
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
        sys.stderr.write("".join(f"{line}\n" for line in lines[-40:]))
    return done


def _state_leaks(path: Path, trees: tuple[Path, ...]) -> list[str] | None:
    """The process state each test left changed, as the outcome plugin saw it in ``trees``
    (the recording's, the repository's); None (the witness does not say) when it wrote
    nothing readable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not data.get("finished") or "leaks" not in data:
        return None  # an older agentgate's plugin in the project's interpreter says nothing
    return leaks.entries(leaks.found([data], trees))


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


def build(root: Path, raw: dict[str, Any], *, sha: str, tree: Path, python: str,
          env: str | None = None) -> graph.Witness:
    """The witness of a raw recording; ``env``: ``python``'s fingerprint, if taken already."""
    tracked = set(gitio.ls_tree(root, sha))
    return graph.build(
        raw,
        sha=sha,
        tracked=tracked.__contains__,
        data_ok=lambda p: p in tracked or not (tree / p).exists(),
        env=env_fingerprint(python) if env is None else env,
        reads_tracer=functools.cache(lambda p: p in tracked and reads_tracer(tree / p)),
    )


# ``sys.gettrace()``/``getprofile()`` (also ``threading``'s), ``sys.monitoring``, coverage
# looked up by name or its variables: code that may behave otherwise while recording.
_TRACER = re.compile(rb"\bget(?:trace|profile)\b|\bmonitoring\.get_tool\b|"
                     rb"\bsys\.monitoring\b|[\"']coverage[\"']|\bCOVERAGE_[A-Z_]+")


def reads_tracer(path: Path) -> bool:
    """Whether a Python file's text asks whether a tracer runs (``graph.READS_TRACER``)."""
    if path.suffix != ".py":
        return False
    try:
        return _TRACER.search(path.read_bytes()) is not None
    except OSError:
        return False


def env_fingerprint(python: str) -> str:
    """The interpreter and its installed distributions, as the project's interpreter sees
    them in isolated mode (no PYTHONPATH, no user site): the same at record and gate time."""
    return env_described(python)[0]


def env_described(python: str) -> tuple[str, list[str]]:
    """``env_fingerprint``, and the installed distributions it covers (``name-version``), so
    a drift can say which changed; ``("", [])`` when the interpreter cannot say."""
    source = Path(envprint.__file__).read_text(encoding="utf-8")
    done = process.capture([python, "-I", "-c", source], env=gitio.no_git_env())
    try:
        description = json.loads(done.stdout)
        return envprint.fingerprint(description), envprint.distributions(description)
    except (ValueError, TypeError, AttributeError):
        return "", []


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
