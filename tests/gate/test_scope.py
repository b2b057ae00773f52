from __future__ import annotations

import pytest

from agentgate.core.errors import ConfigError
from agentgate.core.model import Verdict
from agentgate.gate import checks as gate
from agentgate.gate.scope import parse
from tests.support.git_repo import GitRepo


def test_prefixes_match_whole_components() -> None:
    scope = parse("app/pay\n", where="scope")
    assert scope.allows("app/pay/x.py")
    assert scope.allows("app/pay")
    assert not scope.allows("app/payments/x.py")
    assert not scope.allows("app/pa")


def test_comments_blanks_and_normalisation() -> None:
    text = "# header\n\n./app/pricing/   # trailing comment\n\\tests\\unit\n/docs\n"
    scope = parse(text, where="scope")
    assert scope.prefixes == ("app/pricing", "tests/unit", "docs")


def test_globs_and_escapes_are_refused_with_every_line_named() -> None:
    with pytest.raises(ConfigError) as caught:
        parse("app/*\nok\n../outside\n", where=".agentgate/scope")
    assert "line 1: 'app/*' is a glob" in caught.value.message
    assert "line 3: '../outside' leaves the repository" in caught.value.message


def test_non_utf8_scope_file(app_repo: GitRepo) -> None:
    app_repo.write(".agentgate/scope", b"app/\xff\n")
    app_repo.commit("scope")
    app_repo.write("app/pricing/tax.py", "RATE = 1\n")
    app_repo.add()
    with pytest.raises(ConfigError, match="not valid UTF-8"):
        gate.check_staged(app_repo.path, {})


AGENT_ENV = {"CLAUDECODE": "1"}
BY_AGENT = "\n\nCo-authored-by: Claude <noreply@anthropic.com>"


def _scoped_repo(app_repo: GitRepo) -> str:
    app_repo.write(".agentgate/scope", "app/pricing\ntests\n")
    return app_repo.commit("declare scope")


def test_path_outside_scope_is_an_escape_at_commit_time(app_repo: GitRepo) -> None:
    _scoped_repo(app_repo)
    app_repo.write("app/checkout/session.py", "# edited\n")
    app_repo.add()
    result = gate.check_staged(app_repo.path, AGENT_ENV)
    assert result.verdict is Verdict.SCOPE_ESCAPE and result.exit_code == 3
    assert [(r.code, r.path) for r in result.reasons] == [
        ("scope-escape", "app/checkout/session.py")
    ]


def test_a_humans_commit_is_not_held_to_the_agents_scope(app_repo: GitRepo) -> None:
    """The scope is the agent's task (new-user trials: a maintainer's README, tox.ini or
    ruff-settings commit was refused at commit, past ``--no-verify``, and at push)."""
    base = _scoped_repo(app_repo)
    app_repo.write("README.md", "# notes\n")
    app_repo.add()
    result = gate.check_staged(app_repo.path, {})
    assert result.exit_code == 0 and result.reasons == []
    assert any("holds agents' commits only" in n for n in result.notes)
    human = app_repo.commit("README")
    assert gate.check_range(app_repo.path, base, human).reasons == []
    # What an agent's commit of the range changed is judged, a human's commit of it or not.
    app_repo.write("README.md", "# notes, by the agent\n")
    app_repo.write("app/checkout/session.py", "# edited\n")
    head = app_repo.commit("agent edit" + BY_AGENT)
    app_repo.write("app/checkout/session.py", "# edited again\n")
    later = app_repo.commit("human touch-up")
    checked = gate.check_range(app_repo.path, base, later)
    assert sorted((r.code, r.path) for r in checked.reasons) == [
        ("scope-escape", "README.md"), ("scope-escape", "app/checkout/session.py")
    ]
    assert head != later


def test_in_scope_commit_passes(app_repo: GitRepo) -> None:
    _scoped_repo(app_repo)
    app_repo.write("app/pricing/tax.py", "RATE = 0.3\n")
    app_repo.write("tests/test_tax_case_7.py", "def test_x():\n    pass\n")
    app_repo.add()
    assert gate.check_staged(app_repo.path, {}).verdict is Verdict.SCOPED


def test_a_humans_widening_in_the_range_governs_the_commits_after_it(app_repo: GitRepo) -> None:
    """The rule changed deliberately (issue 11 item 8). The base's scope used to govern every
    commit of a range, so the seed workflow -- a human widens the scope in the pull request,
    the agent's commits then use it -- took two pull requests. A human's standalone
    trust-only commit now governs the commits after it; code before it, code in the same
    commit, and any widening by an agent stay under the base's scope
    (tests/gate/test_govern.py plays those attacks)."""
    base = _scoped_repo(app_repo)
    app_repo.write(".agentgate/scope", "app\ntests\n")
    app_repo.commit("widen scope")
    app_repo.write("app/checkout/session.py", "# edited\n")
    head = app_repo.commit("checkout edit")
    checked = gate.check_range(app_repo.path, base, head)
    assert checked.reasons == []


def test_the_base_scope_governs_a_range_without_a_widening(app_repo: GitRepo) -> None:
    base = _scoped_repo(app_repo)
    app_repo.write("app/checkout/session.py", "# edited\n")
    app_repo.write(".agentgate/scope", "app\ntests\n")  # with the code: governs nothing
    head = app_repo.commit("checkout edit, scope widened in the same commit" + BY_AGENT)
    checked = gate.check_range(app_repo.path, base, head)
    found = [(r.code, r.path) for r in checked.reasons]
    assert found[0] == ("trust-agent", ".agentgate/scope")
    assert found[-1] == ("scope-escape", "app/checkout/session.py")


def test_renames_are_judged_on_both_paths(app_repo: GitRepo) -> None:
    base = _scoped_repo(app_repo)
    app_repo.git("mv", "app/checkout/session.py", "app/pricing/session.py")
    head = app_repo.commit("move into scope" + BY_AGENT)
    checked = gate.check_range(app_repo.path, base, head)
    assert [r.path for r in checked.reasons] == ["app/checkout/session.py"]


def test_no_scope_file_means_no_scope_rule_and_says_so(app_repo: GitRepo) -> None:
    base = app_repo.sha()
    app_repo.write("anywhere/at/all.py", "x = 1\n")
    head = app_repo.commit("anything")
    checked = gate.check_range(app_repo.path, base, head)
    assert checked.reasons == []
    assert any("no declared scope" in note for note in checked.notes)
