"""One option spec per command (issue 10): the typer app and the fast start-up parser are both
built from ``agentgate/cli/spec.py`` and must read every command line alike.

The fast parser may refuse a call (typer then parses it and owns the message); what it must
never do is accept a call and read it differently from typer. Hypothesis plays both: random
command lines built from each command's own flags, and well-formed ones in every spelling.
"""

from __future__ import annotations

import inspect
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import typer
import typer.main
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentgate.cli import fast, parse, spec
from agentgate.cli.build import add_commands
from agentgate.cli.commands import build_app
from tests.support.git_repo import GitRepo, run_agentgate

_IDS = [" ".join(c.path) for c in spec.COMMANDS]
_CLICK_ERROR = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")
_RECORDED: list[dict[str, Any]] = []


def _recorder(command: spec.Command) -> Callable[..., int]:
    def record(**values: Any) -> int:
        _RECORDED.append(values)
        return 0

    keyword = inspect.Parameter.KEYWORD_ONLY
    record.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(p.name, keyword) for p in command.params]
    )
    return record


def _recording_app() -> Any:
    """The app built from the spec, each command recording the values typer hands it."""
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)

    @app.callback()
    def _root() -> None:
        """Root."""

    add_commands(app, {c.path: _recorder(c) for c in spec.COMMANDS})
    return typer.main.get_command(app)


_RECORDING = _recording_app()


def _typer_reads(command: spec.Command, argv: list[str]) -> dict[str, Any] | None:
    _RECORDED.clear()
    try:
        _RECORDING.main(args=[*command.path, *argv], prog_name="agentgate",
                        standalone_mode=False)
    except _CLICK_ERROR:
        return None
    return _RECORDED[-1] if _RECORDED else None


def _click_command(path: tuple[str, ...]) -> Any:
    found = typer.main.get_command(build_app())
    for name in path:
        found = found.commands[name]
    return found


@pytest.mark.parametrize("command", spec.COMMANDS, ids=_IDS)
def test_the_app_takes_exactly_the_spec_options(command: spec.Command) -> None:
    params = _click_command(command.path).params
    options = {o for p in params if p.param_type_name == "option"
               for o in (*p.opts, *p.secondary_opts)}
    assert options == {f for p in command.params for f in (*p.flags, *p.off_flags)}
    arguments = [p.name for p in params if p.param_type_name == "argument"]
    assert arguments == [p.name for p in command.params if p.positional]
    assert {p.name for p in params if p.required} == {p.name for p in command.params
                                                       if p.required}


def test_the_fast_path_serves_the_hooks_and_plan_from_the_spec() -> None:
    assert set(fast.COMMANDS) == {("plan",), ("hook", "pre-commit"),
                                  ("hook", "prepare-commit-msg"), ("hook", "commit-msg"),
                                  ("hook", "pre-push"), ("witness", "record")}
    assert set(fast.COMMANDS) <= {c.path for c in spec.COMMANDS}


def test_an_implementation_that_disagrees_with_its_spec_is_refused() -> None:
    impls = {c.path: _recorder(c) for c in spec.COMMANDS}

    def pre_commit(*, format: str) -> int:  # spec says "fmt"
        return 0

    impls[("hook", "pre-commit")] = pre_commit
    with pytest.raises(TypeError, match="pre-commit"):
        add_commands(typer.Typer(), impls)


_NOISE = ["text", "json", "yaml", "3", "0", "-1", "2.5", "x", "", "-", "--", "a b", "--bogus",
          "-fjson", "--format=json", "--format=", "-n5", "-n", "-Cx", "--help"]


# What a command line can carry: exec(2) passes C strings, so no argument holds a NUL.
# No lone surrogates: typer 0.29 rejects them in a Path value ("surrogates not allowed")
# where older releases took them, so the two parsers' agreement there depends on typer's
# version, not on agentgate.
_ARG_TEXT = st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)),
                    max_size=4)


def _token(command: spec.Command) -> st.SearchStrategy[str]:
    flags = [f for p in command.params for f in (*p.flags, *p.off_flags)]
    attached = [f"{f}=1" if f.startswith("--") else f + "1" for f in flags]
    return st.sampled_from(flags + attached + _NOISE) | _ARG_TEXT


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_whatever_the_fast_parser_accepts_typer_reads_alike(data: st.DataObject) -> None:
    """A well-formed call with a few tokens thrown in: near misses are where parsers differ."""
    command = data.draw(st.sampled_from(spec.COMMANDS))
    argv = data.draw(_well_formed(command))
    for token in data.draw(st.lists(_token(command), min_size=1, max_size=3)):
        argv.insert(data.draw(st.integers(0, len(argv))), token)
    values = parse.parse(command, argv)
    if values is not None:
        assert _typer_reads(command, argv) == values, argv


_NEAR_MISSES = [
    (spec.PLAN, ["--base", "a", "--base", "b"]),  # click: the last repeat wins
    (spec.PLAN, ["--base", "--head"]),  # a value may start with a dash
    (spec.PLAN, ["--base=", "-f=json"]),
    (spec.PLAN, ["-fjson", "--base", "x", "-C", ""]),
    (spec.TRUST[-1], ["--keep=1"]),
    (spec.TRUST[-1], ["--no-keep=1"]),
    (spec.PRE_PUSH, ["-", "x"]),
    (spec.PRE_PUSH, ["--", "--help"]),
    (spec.COMMIT_MSG, ["m", "m2"]),
    (spec.ATTRIBUTE, ["x", "-n", "-3", "--seed", "1", "--seed", "2", "--timeout", "1e3"]),
    (spec.ATTRIBUTE, ["x", "--runs", "+3"]),
    (spec.ATTRIBUTE, ["x", "--runs", " 3"]),
    (spec.LEDGER[2], ["t", "--owner", "o", "--reason", "r", "--base-fail", "1",
                      "--head-fail", "2", "--seeds", "1,2", "--k", "0"]),
    (spec.WITNESS[0], ["a", "--rev", "r", "b", "--", "-k", "x"]),
]


@pytest.mark.parametrize(("command", "argv"), _NEAR_MISSES,
                         ids=[" ".join([*c.path, *a]) for c, a in _NEAR_MISSES])
def test_near_misses_are_refused_or_read_alike(command: spec.Command, argv: list[str]) -> None:
    values = parse.parse(command, argv)
    assert values is None or _typer_reads(command, argv) == values


def _value(param: spec.Param) -> st.SearchStrategy[str]:
    if param.choices:
        return st.sampled_from(param.choices)
    if param.kind is int:
        low = -3 if param.minimum is None else param.minimum  # a minimum of 0 is a minimum
        return st.integers(min_value=low, max_value=99).map(str)
    if param.kind is float:
        return st.sampled_from(["1", "2.5", "-0.5"])
    word = st.text("abc./_:", min_size=1, max_size=6)
    return word if param.positional else word | _ARG_TEXT.filter(bool)


@st.composite
def _option(draw: st.DrawFn, param: spec.Param) -> list[str]:
    flag = draw(st.sampled_from(param.flags))
    if param.kind is bool:
        return [draw(st.sampled_from((flag, *param.off_flags)))]
    value = draw(_value(param))
    attached = f"{flag}={value}" if flag.startswith("--") else flag + value
    return draw(st.sampled_from([[flag, value], [attached]]))


@st.composite
def _well_formed(draw: st.DrawFn, command: spec.Command) -> list[str]:
    chunks = [draw(_option(p)) for p in command.params
              if not p.positional and (p.required or draw(st.booleans()))]
    chunks = draw(st.permutations(chunks))
    words: list[str] = []
    for param in (p for p in command.params if p.positional):
        if not param.required and not draw(st.booleans()):
            break  # optional positionals are filled in order
        count = draw(st.integers(1, 3)) if param.multiple else 1
        words += [draw(_value(param)) for _ in range(count)]
    return [arg for chunk in chunks for arg in chunk] + words


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_well_formed_calls_take_the_fast_path_and_read_alike(data: st.DataObject) -> None:
    command = data.draw(st.sampled_from(spec.COMMANDS))
    argv = data.draw(_well_formed(command))
    values = parse.parse(command, argv)
    assert values is not None, argv
    assert _typer_reads(command, argv) == values, argv


def test_the_spec_and_the_fast_path_import_only_the_standard_library() -> None:
    probe = (
        # what the interpreter's own start-up loaded (site's .pth files) is not agentgate's
        "import sys\nbefore = set(sys.modules)\n"
        "import agentgate.cli.spec, agentgate.cli.parse, agentgate.cli.fast\n"
        "print(sorted({m.split('.')[0] for m in set(sys.modules) - before}"
        " - set(sys.stdlib_module_names)))"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    outside = [m for m in eval(proc.stdout) if not m.startswith("_") and m != "agentgate"]
    assert outside == [], proc.stderr


_PROBE = """
import sys
from agentgate.cli.app import main
code = main(sys.argv[1:])
heavy = sorted(m for m in sys.modules if m.split(".")[0] in {"typer", "click", "rich"})
print("PROBE", code, heavy)
"""


def _probe(cwd: Path, *argv: str) -> str:
    proc = subprocess.run([sys.executable, "-c", _PROBE, *argv], cwd=cwd, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL)
    return proc.stdout.splitlines()[-1] if proc.stdout else proc.stderr


@pytest.mark.parametrize("argv", [
    ["hook", "pre-commit", "-fjson"],
    ["hook", "commit-msg", "MSG", "--format", "text"],
    ["hook", "prepare-commit-msg", "MSG"],
    ["hook", "prepare-commit-msg", "MSG", "commit", "HEAD", "-f", "json"],
    ["hook", "pre-push", "origin", "file:///nowhere.git"],
    ["plan", "--base", "HEAD", "--format=json"],
], ids=lambda argv: " ".join(argv[:2]))
def test_a_well_formed_fast_call_does_not_import_typer(app_repo: GitRepo, argv: list[str]) -> None:
    app_repo.write("MSG", "fix tax\n")
    assert _probe(app_repo.path, *argv) == "PROBE 0 []"


def test_witness_record_takes_the_fast_path(app_repo: GitRepo) -> None:
    """Recording is measured against the plain suite (issue 12): typer's start-up is not
    paid for it. A revision that does not exist fails there, with one line and exit 64."""
    out = _probe(app_repo.path, "witness", "record", "--rev", "no-such-rev", "-fjson")
    assert out == "PROBE 64 []", out


@pytest.mark.parametrize(("argv", "says"), [
    (["hook", "pre-commit", "--format", "yaml"], "'yaml' is not one of"),
    (["hook", "pre-commit", "--bogus"], "No such option: --bogus"),
    (["hook", "commit-msg"], "Missing argument 'message_file'"),
    (["hook", "prepare-commit-msg"], "Missing argument 'message_file'"),
    (["hook", "prepare-commit-msg", "MSG", "message", "HEAD", "x"],
     "unexpected extra argument"),
    (["hook", "pre-push", "origin", "url", "extra"], "unexpected extra argument"),
    (["plan", "--head", "HEAD", "--bogus"], "No such option: --bogus"),
], ids=lambda v: " ".join(v) if isinstance(v, list) else "")
def test_a_usage_error_on_the_fast_path_is_typers_and_exits_64(
    app_repo: GitRepo, argv: list[str], says: str
) -> None:
    """The attack: a hook or plan call the fast parser cannot read exactly must not run with
    a guess (the old hook parser skipped unknown options); typer says what is wrong."""
    proc = run_agentgate(*argv, cwd=app_repo.path)
    assert proc.returncode == 64, proc.stderr
    [line] = proc.stderr.splitlines()
    command = " ".join(argv[:2]) if argv[0] == "hook" else argv[0]
    assert says in line and line.endswith(f"(see: agentgate {command} --help)"), line
