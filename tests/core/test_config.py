from __future__ import annotations

from pathlib import Path

import pytest

from agentgate.core import config
from agentgate.core.errors import ConfigError
from tests.support.git_repo import GitRepo, run_agentgate


def test_defaults_without_any_pyproject(tmp_path: Path) -> None:
    cfg = config.load(tmp_path)
    assert cfg.scope_file == ".agentgate/scope"
    assert cfg.manifest == ".agentgate/fixtures.sha256"
    assert cfg.ledger == ".agentgate/freezes"
    assert cfg.fixtures == ("tests/fixtures",)
    assert cfg.protected == ()
    assert cfg.tests == ("tests",)
    assert cfg.sources == (".",)
    assert not cfg.has_section
    assert "CLAUDECODE" in cfg.agents.env


def test_src_layout_is_detected(tmp_path: Path) -> None:
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    assert config.load(tmp_path).sources == ("src",)


@pytest.mark.parametrize(
    ("filename", "text"),
    [
        ("pyproject.toml", '[tool.pytest.ini_options]\ntestpaths = ["checks", "more/"]\n'),
        ("pytest.ini", "[pytest]\ntestpaths = checks more\n"),
        ("tox.ini", "[pytest]\ntestpaths =\n    checks\n    more\n"),
        ("setup.cfg", "[tool:pytest]\ntestpaths = checks more\n"),
    ],
)
def test_tests_default_to_pytest_testpaths(tmp_path: Path, filename: str, text: str) -> None:
    (tmp_path / filename).write_text(text)
    assert config.load(tmp_path).tests == ("checks", "more")


def test_pytest_ini_wins_over_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\ntestpaths = a\n")
    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntestpaths = ["b"]\n')
    assert config.load(tmp_path).tests == ("a",)


def test_values_are_read_and_normalised(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.agentgate]\nprotected = ["./app/payments/", "app\\\\auth"]\n'
        'scope_file = "scope.txt"\nmax_freeze_days = 7\nshadow_percent = 2.5\n'
        '[tool.agentgate.agents]\nenv = ["MY_AGENT"]\n'
    )
    cfg = config.load(tmp_path)
    assert cfg.protected == ("app/payments", "app/auth")
    assert cfg.scope_file == "scope.txt"
    assert cfg.max_freeze_days == 7
    assert cfg.shadow_percent == 2.5
    assert cfg.agents.env[-1] == "MY_AGENT" and "CLAUDECODE" in cfg.agents.env
    assert cfg.has_section


def test_agent_defaults_can_be_dropped(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.agentgate.agents]\ndefaults = false\nenv = ["ONLY_MINE"]\n'
    )
    assert config.load(tmp_path).agents.env == ("ONLY_MINE",)


def test_every_problem_is_reported_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.agentgate]\nscop_file = "x"\nprotected = "app"\nmax_freeze_days = true\n'
    )
    with pytest.raises(ConfigError) as caught:
        config.load(tmp_path)
    message = caught.value.message
    assert "\n" not in message
    assert "unknown key 'scop_file'" in message
    assert "'protected' must be a list of strings" in message
    assert "'max_freeze_days' must be a non-negative integer" in message


def test_unknown_agents_key(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.agentgate.agents]\nenvs = ["X"]\n')
    with pytest.raises(ConfigError, match=r"'envs' \(did you mean 'env'\?\) in 'agents'"):
        config.load(tmp_path)


def test_unknown_key_names_the_closest_known_one_on_the_exit_64_line(app_repo: GitRepo) -> None:
    app_repo.write("pyproject.toml", '[tool.agentgate]\nscop_file = "s"\nmax_freez_days = 3\n'
                   'zzz = 1\n')
    proc = run_agentgate("fixtures", "verify", cwd=app_repo.path)
    assert proc.returncode == 64
    assert proc.stderr.splitlines() == [
        "agentgate: pyproject.toml [tool.agentgate]: unknown key 'max_freez_days' (did you mean "
        "'max_freeze_days'?); unknown key 'scop_file' (did you mean 'scope_file'?); unknown "
        "key 'zzz'"
    ]


def test_malformed_toml_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.agentgate\nprotected = [\n")
    with pytest.raises(ConfigError, match=r"pyproject.toml: malformed TOML \(.*line 1"):
        config.load(tmp_path)


def test_cli_config_errors_exit_64_without_traceback(app_repo: GitRepo) -> None:
    app_repo.write("pyproject.toml", "[tool.agentgate]\nprotected = 3\n")
    proc = run_agentgate("fixtures", "verify", cwd=app_repo.path)
    assert proc.returncode == 64
    assert proc.stderr.strip().splitlines() == [
        "agentgate: pyproject.toml [tool.agentgate]: 'protected' must be a list of strings"
    ]
    assert "Traceback" not in proc.stderr + proc.stdout


def test_cli_malformed_toml_exit_64(app_repo: GitRepo) -> None:
    app_repo.write("pyproject.toml", "this is = = not toml\n")
    proc = run_agentgate("fixtures", "verify", cwd=app_repo.path)
    assert proc.returncode == 64
    assert "malformed TOML" in proc.stderr and "Traceback" not in proc.stderr


def test_malformed_pytest_ini_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("testpaths = nosection\n")
    with pytest.raises(ConfigError, match=r"pytest\.ini: malformed INI"):
        config.load(tmp_path)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("manifest", '"../../outside.sha256"'),
        ("ledger", '"/tmp/freezes"'),
        ("scope_file", '"docs/../../scope"'),
        ("fixtures", '["tests/fixtures", "../shared/fixtures"]'),
        ("sources", '["C:/src"]'),
        ("property_band", '["marker:slow", "../props"]'),
    ],
)
def test_a_path_key_outside_the_repository_is_a_config_error(
    tmp_path: Path, key: str, value: str
) -> None:
    # Attack (issue 11): a committed config points a trust file or a folder agentgate
    # writes to outside the repository.
    (tmp_path / "pyproject.toml").write_text(f"[tool.agentgate]\n{key} = {value}\n")
    with pytest.raises(ConfigError, match=f"'{key}' must name a path inside the repository"):
        config.load(tmp_path)


def test_paths_inside_the_repository_are_kept(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.agentgate]\nmanifest = "meta/../meta/fixtures.sha256"\n'
        'property_band = ["marker:slow", "tests/props"]\nsources = ["."]\n'
    )
    loaded = config.load(tmp_path)
    assert (loaded.manifest, loaded.property_band, loaded.sources) == (
        "meta/../meta/fixtures.sha256", ("marker:slow", "tests/props"), (".",))


def test_init_refuses_a_manifest_outside_and_writes_nothing_there(app_repo: GitRepo) -> None:
    outside = app_repo.path.parent / "outside.sha256"
    app_repo.write("pyproject.toml", '[tool.agentgate]\nmanifest = "../outside.sha256"\n')
    for args in (("init",), ("fixtures", "record")):
        proc = run_agentgate(*args, cwd=app_repo.path)
        assert proc.returncode == 64, proc.stderr
        assert "'manifest' must name a path inside the repository" in proc.stderr
        assert "Traceback" not in proc.stderr
    assert not outside.exists()


def test_pytest_toml_comes_first_and_parses_as_toml(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\ntestpaths = ini_tests\n")
    (tmp_path / "pytest.toml").write_text('[pytest]\ntestpaths = ["toml_tests", "more"]\n')
    assert config.load(tmp_path).tests == ("toml_tests", "more")


def test_an_empty_pytest_toml_is_still_pytests_file(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\ntestpaths = ini_tests\n")
    (tmp_path / ".pytest.toml").write_text("")
    assert config.load(tmp_path).tests == ("tests",)  # pytest reads .pytest.toml, not the ini


def test_pytest_tables_at_any_depth(tmp_path: Path) -> None:
    tables = config.pytest_tables_from_texts({
        "sub/pytest.ini": "[pytest]\naddopts = -x\n",
        "sub/pytest.toml": '[pytest]\naddopts = ["-x"]\n',
        "sub/tox.ini": "[tox]\nenv_list = py311\n",
    })
    assert tables == {"sub/pytest.ini": {"addopts": "-x"}, "sub/pytest.toml": {"addopts": ["-x"]}}


def test_cache_bounds_default_and_validate(tmp_path: Path) -> None:
    """The bounds on .git/agentgate (issue 13, item 7): defaults, values, and typos."""
    cfg = config.load(tmp_path)
    assert (cfg.keep_worktrees, cfg.cache_days, cfg.keep_witnesses) == (4, 14, 10)
    text = "[tool.agentgate]\nkeep_worktrees = 2\ncache_days = 0\nkeep_witnesses = 1\n"
    cfg = config.load(tmp_path, text)
    assert (cfg.keep_worktrees, cfg.cache_days, cfg.keep_witnesses) == (2, 0, 1)
    with pytest.raises(ConfigError, match="'keep_worktrees' must be a non-negative integer"):
        config.load(tmp_path, "[tool.agentgate]\nkeep_worktrees = -1\n")
    with pytest.raises(ConfigError, match=r"'keep_worktree' \(did you mean 'keep_worktrees'"):
        config.load(tmp_path, "[tool.agentgate]\nkeep_worktree = 2\n")
