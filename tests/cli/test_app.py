from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from agentgate.cli.app import guarded, main
from agentgate.core import errors
from agentgate.core.model import Reason, Result, Verdict
from agentgate.report.render import text_lines
from tests.support.git_repo import GitRepo, run_agentgate


def test_usage_errors_exit_64_not_2(app_repo: GitRepo) -> None:
    proc = run_agentgate("no-such-command", cwd=app_repo.path)
    assert proc.returncode == 64
    assert proc.stderr.splitlines() == [
        "agentgate: No such command 'no-such-command'. (see: agentgate --help)"
    ]
    proc = run_agentgate("fixtures", "verify", "--format", "yaml", cwd=app_repo.path)
    assert proc.returncode == 64 and "--format" in proc.stderr


def test_help_and_version_exit_0(app_repo: GitRepo) -> None:
    assert run_agentgate("--help", cwd=app_repo.path).returncode == 0
    proc = run_agentgate("--version", cwd=app_repo.path)
    assert proc.returncode == 0 and proc.stdout.startswith("agentgate ")


def test_unexpected_errors_are_short_unless_debug(capsys: pytest.CaptureFixture[str]) -> None:
    def boom() -> int:
        raise RuntimeError("kaput")

    assert guarded(boom, debug=False) == errors.EXIT_INTERNAL == 70
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "agentgate: internal error: RuntimeError: kaput (re-run with --debug for the "
        "traceback, and please report it)"
    ]
    assert guarded(boom, debug=True) == 70
    assert "Traceback" in capsys.readouterr().err


def test_a_ctrl_c_wrapped_by_python_is_still_an_interrupt(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Ctrl-C inside a class body's ``__set_name__`` (typer's imports) reaches the handler as a
    RuntimeError; it was reported as an internal error (exit 70), and is an interrupt."""
    def wrapped() -> int:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as exc:
            raise RuntimeError("Error calling __set_name__") from exc

    assert guarded(wrapped, debug=False) == errors.EXIT_INTERRUPTED
    assert capsys.readouterr().err == "agentgate: interrupted\n"


def test_expected_error_carries_its_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    def refuse() -> int:
        raise errors.AgentgateError("nope; do this instead", exit_code=4)

    assert guarded(refuse, debug=False) == 4
    assert capsys.readouterr().err == "agentgate: nope; do this instead\n"


def test_os_errors_are_one_line(app_repo: GitRepo) -> None:
    (app_repo.path / ".agentgate" / "fixtures.sha256").mkdir(parents=True)
    proc = run_agentgate("fixtures", "record", cwd=app_repo.path)
    assert proc.returncode == 64
    assert len(proc.stderr.splitlines()) == 1 and "Traceback" not in proc.stderr


def test_exact_text_report() -> None:
    result = Result(
        command="plan",
        base="a" * 40,
        head="b" * 40,
        reasons=[
            Reason("scope-escape", Verdict.SCOPE_ESCAPE, "outside the scope", path="x/y.py"),
            Reason("trust-mixed", Verdict.BLOCKED, "mixed", path="p\udcffq", commit="c" * 40),
        ],
        notes=["a note"],
    )
    assert text_lines(result) == [
        "agentgate plan: blocked (exit 4)",
        "  range: aaaaaaaaaa...bbbbbbbbbb",
        "  blocked: trust-mixed [cccccccccc] p\\xffq: mixed",  # the most severe first
        "  scope-escape x/y.py: outside the scope",  # the rule is the kind: said once
        "  note: a note",
    ]


def test_json_report_shape(app_repo: GitRepo) -> None:
    app_repo.write(".agentgate/scope", "app\n")
    app_repo.write("docs/x.md", "x\n")
    app_repo.add()
    proc = run_agentgate("hook", "pre-commit", "--format", "json", cwd=app_repo.path)
    assert proc.returncode == 4
    data = json.loads(proc.stdout)
    assert data["verdict"] == "blocked" and data["exit_code"] == 4
    assert {"command", "base", "head", "changed", "reasons", "notes"} <= data.keys()
    assert data["reasons"][0]["code"] == "trust-mixed"


def test_no_colour_when_not_a_tty(app_repo: GitRepo) -> None:
    proc = run_agentgate("fixtures", "verify", cwd=app_repo.path)
    assert "\x1b[" not in proc.stdout


def test_demo_shows_each_verdict_and_leaves_nothing(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch)}
    proc = run_agentgate("demo", cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    verdicts = [
        line.split(",")[0].strip()
        for line in proc.stdout.splitlines()
        if line.startswith("  -> ")
    ]
    assert verdicts == [
        "-> blocked", "-> scope-escape", "-> blocked", "-> blocked", "-> scoped", "-> scoped"
    ]
    assert "tests/test_session.py -> app/checkout/session.py -> app/pricing/tax.py" in proc.stdout
    assert "UNEXPECTED" not in proc.stdout
    # The band narrows (issue 13, item 5): the checkout and tax tests run, the rest do not.
    assert "  tests: 3 of 5 test file(s)\n" in proc.stdout
    assert ("  note: ran 3 of the suite's 9 tests; tests/test_catalog.py and "
            "tests/test_inventory.py skipped\n") in proc.stdout
    assert "  band: 2 passed, 0 failed" in proc.stdout
    # The agent's new test file runs apart from the base's tests (red-team, helper-15).
    assert "  the patch's test files, run apart: 1 passed, 0 failed" in proc.stdout
    assert list(scratch.iterdir()) == []


def test_the_demo_suite_has_the_size_the_demo_says(tmp_path: Path) -> None:
    """The "of the suite's 9 tests" is counted from the embedded files; pytest agrees."""
    from agentgate.flows import demo, demo_files

    root = tmp_path / "shop"
    root.mkdir()
    demo.build(root)
    for rel, text in demo_files.IN_SCOPE.items():
        (root / rel).write_text(text, encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p",
                           "no:cacheprovider"], cwd=root, capture_output=True, text=True,
                          env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert f"{demo_files.suite_size()} tests collected" in proc.stdout, proc.stdout
    assert demo_files.suite_size() == 9


def _interrupt_demo(scratch: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TMPDIR": str(scratch)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentgate", "demo"],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    # Wait for the demo's own folder: tempfile first probes TMPDIR with a file of its own.
    while (
        not list(scratch.glob("agentgate-demo-*"))
        and time.monotonic() < deadline
        and proc.poll() is None
    ):
        time.sleep(0.001)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def test_demo_ctrl_c_exits_130_and_leaves_nothing(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    # The demo takes well under a second: retry when it finished before the signal landed.
    for _attempt in range(5):
        done = _interrupt_demo(scratch, tmp_path)
        if done.returncode != 0:
            break
    assert done.returncode == 130, done.stdout + done.stderr
    assert "agentgate: interrupted" in done.stderr and "Traceback" not in done.stderr
    assert list(scratch.iterdir()) == []


# What the console script runs (pyproject's [project.scripts]), saying when agentgate's entry
# point is imported: the interpreter's start-up before it is not agentgate's to handle.
CONSOLE_SCRIPT = ("import os, sys; sys.argv = ['agentgate', 'demo']; "
                  "from agentgate.__main__ import main; os.write(1, b'started\\n'); "
                  "sys.exit(main())")


@pytest.mark.parametrize("delay", [0.0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.4])
def test_demo_ctrl_c_at_any_early_moment_is_one_line_and_leaves_nothing(
    tmp_path: Path, delay: float
) -> None:
    """Issue 13: in the first ~50 ms (the CLI still importing) Ctrl-C printed a traceback.
    The entry point handles it from its first line: exit 130, one line, no folder left."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    proc = subprocess.Popen([sys.executable, "-c", CONSOLE_SCRIPT], cwd=tmp_path,
                            env={**os.environ, "TMPDIR": str(scratch)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "started\n"
    time.sleep(delay)  # places the signal; nothing here is timed
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    assert (proc.returncode, err) == (130, "agentgate: interrupted\n")
    assert list(scratch.iterdir()) == []


# A Ctrl-C landing in a weakref callback (importlib's module locks have one; CI hit it at
# 0.1 s into the demo): Python prints "Exception ignored" and drops the KeyboardInterrupt.
# The command here is the console script with its dispatch replaced by one that runs such a
# callback with a real SIGINT inside it and then finishes as if nothing happened.
DROPPED_CTRL_C = ("import os, signal, sys, weakref; sys.argv = ['agentgate', 'version']; "
                  "from agentgate.__main__ import main; from agentgate.cli import app\n"
                  "class Held: pass\n"
                  "def dispatch(args, json_errors=False):\n"
                  "    held = Held()\n"
                  "    ref = weakref.ref(held, lambda _r: signal.raise_signal(signal.SIGINT))\n"
                  "    del held\n"
                  "    print('finished')\n"
                  "    return 0\n"
                  "app._dispatch = dispatch\n"
                  "sys.exit(main())")


def test_a_ctrl_c_python_drops_in_a_callback_still_ends_the_run_as_interrupted() -> None:
    proc = subprocess.run([sys.executable, "-c", DROPPED_CTRL_C], capture_output=True,
                          text=True, timeout=60)
    assert "finished" in proc.stdout  # the interrupt was dropped: the run went on
    assert (proc.returncode, proc.stderr) == (130, "agentgate: interrupted\n")


def test_console_script_is_the_entry_point_that_handles_ctrl_c_first() -> None:
    import tomllib

    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    assert pyproject["project"]["scripts"]["agentgate"] == "agentgate.__main__:main"


def test_init_writes_starter_files(app_repo: GitRepo) -> None:
    app_repo.write("tests/fixtures/data.json", "{}\n")
    proc = run_agentgate("init", cwd=app_repo.path)
    assert proc.returncode == 0, proc.stderr
    assert "[tool.agentgate]" in (app_repo.path / "pyproject.toml").read_text()
    scope = (app_repo.path / ".agentgate/scope").read_text().splitlines()
    assert "app" in scope and "tests" in scope
    assert "tests/fixtures/data.json" in (app_repo.path / ".agentgate/fixtures.sha256").read_text()
    assert "id: agentgate-trust" in proc.stdout and "pre-push" in proc.stdout
    again = run_agentgate("init", cwd=app_repo.path)
    assert "already has [tool.agentgate]" in again.stdout


def test_init_says_which_of_its_files_git_ignores(app_repo: GitRepo) -> None:
    """New-user trial (tabulate's ``.gitignore`` holds ``.*``): ``git add -A`` left the scope
    file out and the scope rule went off with no word of why."""
    app_repo.write(".gitignore", ".*\n!.gitignore\n")
    proc = run_agentgate("init", cwd=app_repo.path)
    assert proc.returncode == 0, proc.stderr
    assert "git ignores .agentgate/scope, .agentgate/fixtures.sha256" in proc.stdout
    assert "git add -f .agentgate/scope .agentgate/fixtures.sha256" in " ".join(
        proc.stdout.split())
    app_repo.write(".gitignore", "")
    assert "git ignores" not in run_agentgate("init", cwd=app_repo.path).stdout


def test_init_lists_the_test_data_it_finds_as_fixtures(app_repo: GitRepo) -> None:
    """A new user's project keeps its test data elsewhere than ``tests/fixtures``
    (sqlparse: ``tests/files/*.sql``): ``init`` lists folders of test data under the test
    roots, so the manifest guards them (an agent edits an expected-output file to make a
    broken test pass: ``fixtures verify`` fails). A folder of tests, a package and a folder of
    Python helpers are not data."""
    app_repo.files({
        "tests/files/query.sql": "select 1;\n",
        "tests/files/nested/expected.txt": "SELECT 1;\n",
        "tests/unit/test_x.py": "def test_x():\n    pass\n",
        "tests/unit/data/rates.json": "{}\n",
        "tests/helpers/__init__.py": "",
        "tests/helpers/table.csv": "a,b\n",
        "tests/cases/case_1.py": "X = 1\n",
    })
    proc = run_agentgate("init", cwd=app_repo.path)
    assert proc.returncode == 0, proc.stderr
    config = tomllib.loads((app_repo.path / "pyproject.toml").read_text())["tool"]["agentgate"]
    assert config["fixtures"] == ["tests/fixtures", "tests/files", "tests/unit/data"]
    assert "test data found: tests/files, tests/unit/data" in " ".join(proc.stdout.split())
    listed = (app_repo.path / ".agentgate/fixtures.sha256").read_text()
    for path in ("tests/files/query.sql", "tests/files/nested/expected.txt",
                 "tests/unit/data/rates.json"):
        assert path in listed
    assert "table.csv" not in listed and "case_1" not in listed and "test_x" not in listed
    assert run_agentgate("fixtures", "verify", cwd=app_repo.path).returncode == 0
    app_repo.write("tests/files/nested/expected.txt", "select 1;\n")  # the attack
    assert run_agentgate("fixtures", "verify", cwd=app_repo.path).returncode != 0


def test_init_keeps_a_configured_fixtures_list(app_repo: GitRepo) -> None:
    """The twin: a project that configured [tool.agentgate] keeps its own list."""
    app_repo.files({"pyproject.toml": "[tool.agentgate]\nfixtures = [\"tests/golden\"]\n",
                    "tests/files/query.sql": "select 1;\n"})
    proc = run_agentgate("init", cwd=app_repo.path)
    assert proc.returncode == 0, proc.stderr
    assert "test data found" not in proc.stdout
    assert "query.sql" not in (app_repo.path / ".agentgate/fixtures.sha256").read_text()


def test_init_refuses_to_rerecord_a_manifest_over_an_edited_fixture(app_repo: GitRepo) -> None:
    """The attack (issue 13): edit a fixture, run ``init``, and the manifest blesses the edit.
    ``init`` must refuse (64, nothing written) unless ``--force`` says to re-record."""
    app_repo.write("tests/fixtures/data.json", "{}\n")
    assert run_agentgate("init", cwd=app_repo.path).returncode == 0
    manifest = app_repo.path / ".agentgate/fixtures.sha256"
    recorded = manifest.read_text()
    app_repo.write("tests/fixtures/data.json", '{"edited": true}\n')
    refused = run_agentgate("init", cwd=app_repo.path)
    assert refused.returncode == 64 and manifest.read_text() == recorded
    assert refused.stderr.splitlines() == [
        "agentgate: .agentgate/fixtures.sha256 exists and 1 fixture file(s) differ from it; "
        "nothing written (see 'agentgate fixtures verify'; 'agentgate init --force' "
        "re-records it)"]
    forced = run_agentgate("init", "--force", cwd=app_repo.path)
    assert forced.returncode == 0, forced.stderr
    assert manifest.read_text() != recorded
    assert run_agentgate("fixtures", "verify", cwd=app_repo.path).returncode == 0


def test_main_in_process_fast_path_needs_a_repo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["hook", "pre-commit"]) == 64


def test_plan_runs_without_importing_typer(app_repo: GitRepo) -> None:
    """Planning must stay a small fraction of collecting a suite: typer's start-up is not paid
    for a well-formed plan; usage errors still get typer's messages (and exit 64)."""
    base = app_repo.sha()
    app_repo.write("app/pricing/tax.py", "RATE = 0.3\n\ndef tax(x):\n    return x * RATE\n")
    app_repo.commit("rate")
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "agentgate", "plan", "--base", base,
         "--format", "json"],
        cwd=app_repo.path, capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["tests"] == ["tests/test_session.py", "tests/test_tax.py"]
    imported = {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if "|" in line}
    assert "typer" not in imported and "rich" not in imported
    bad = run_agentgate("plan", "--base", base, "--bogus", cwd=app_repo.path)
    assert bad.returncode == 64 and "--bogus" in bad.stderr
