"""A human's trust-only commit inside a range governs the scope of the commits after it
(issue 11 item 8, the seed workflow); an agent's, one mixed with code, or -- with
``trust_signers`` -- one without a good signature by an allowed key governs nothing. Real
repositories, real commits, real SSH signatures verified by git."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agentgate.core import config as config_mod
from agentgate.core.config import Config
from agentgate.core.errors import ConfigError
from agentgate.core.model import Verdict
from agentgate.gate import checks as gate
from agentgate.gate import govern, manifest, trust
from tests.support.git_repo import EMAIL, GitRepo

SCOPE = ".agentgate/scope"
AGENT = "bot (aider)"  # an identity the default agent patterns match
OUTSIDE = "app/checkout/session.py"  # outside the base's scope, inside the widened one
SIGNERS = ".agentgate/allowed_signers"


def _base(repo: GitRepo, *, signers: str | None = None) -> str:
    repo.write(SCOPE, "app/pricing\ntests\n")
    if signers is not None:
        repo.write("pyproject.toml", f'[tool.agentgate]\ntrust_signers = "{SIGNERS}"\n')
        repo.write(SIGNERS, signers)
    return repo.commit("declare scope")


def _widen(repo: GitRepo) -> str:
    repo.write(SCOPE, "app\ntests\n")
    return repo.commit("widen the scope for the checkout work")


def _agent_edits(repo: GitRepo, path: str = OUTSIDE, message: str = "checkout edit") -> str:
    repo.write(path, "# edited\n")
    return repo.commit(message, author=AGENT)


def _escapes(checked: gate.RangeCheck) -> list[str]:
    return [r.path or "" for r in checked.reasons if r.code == "scope-escape"]


def _governs_nothing(checked: gate.RangeCheck) -> list[str]:
    return [n.split("governs nothing: ", 1)[1] for n in checked.notes if "governs nothing" in n]


# --- governance without trust_signers ---------------------------------------------------------


def test_a_humans_widening_governs_the_agents_commits_after_it(app_repo: GitRepo) -> None:
    base = _base(app_repo)
    widen = _widen(app_repo)
    head = _agent_edits(app_repo)
    checked = gate.check_range(app_repo.path, base, head)
    assert checked.reasons == []
    assert (f"commit {widen[:10]}, a human's trust-only commit, governs the scope of the "
            f"commits after it ({SCOPE} at {widen[:10]})") in checked.notes


@pytest.mark.parametrize(("author", "message"), [
    (AGENT, "widen"),
    (None, "widen\n\nCo-authored-by: Claude <noreply@anthropic.com>\n"),
], ids=["identity", "trailer"])
def test_an_agents_widening_governs_nothing(
    app_repo: GitRepo, author: str | None, message: str
) -> None:
    """The attack: the agent widens its own scope in a commit of its own, then uses it."""
    base = _base(app_repo)
    app_repo.write(SCOPE, "app\ntests\n")
    widen = app_repo.commit(message, author=author)
    head = _agent_edits(app_repo)
    checked = gate.check_range(app_repo.path, base, head)
    assert ("trust-agent", SCOPE) in [(r.code, r.path) for r in checked.reasons]
    assert _escapes(checked) == [OUTSIDE]
    assert len(_governs_nothing(checked)) == 1
    assert _governs_nothing(checked)[0].startswith("an agent's commit")
    assert checked.notes[0].startswith(f"commit {widen[:10]}")


def test_code_before_the_widening_is_judged_by_the_base_scope(app_repo: GitRepo) -> None:
    base = _base(app_repo)
    _agent_edits(app_repo)
    _widen(app_repo)
    head = _agent_edits(app_repo, "app/checkout/other.py")
    checked = gate.check_range(app_repo.path, base, head)
    assert _escapes(checked) == [OUTSIDE]
    assert f"({SCOPE} at {base[:10]})" in checked.reasons[0].detail


def test_a_widening_mixed_with_code_governs_nothing(app_repo: GitRepo) -> None:
    base = _base(app_repo)
    app_repo.write(SCOPE, "app\ntests\n")
    app_repo.write("app/checkout/other.py", "# with the widening\n")
    app_repo.commit("widen and edit")
    head = _agent_edits(app_repo)
    checked = gate.check_range(app_repo.path, base, head)
    # The human's own code there is not held to the scope (the agent's task); the agent's is,
    # to the base's scope.
    assert [r.code for r in checked.reasons] == ["trust-mixed", "scope-escape"]
    assert _escapes(checked) == [OUTSIDE]


def test_a_humans_narrowing_governs_too(app_repo: GitRepo) -> None:
    """Governing is changing the scope, not only widening it: the agent's commit after a
    narrowing is judged by the narrower scope."""
    base = _base(app_repo)
    app_repo.write(SCOPE, "tests\n")
    narrow = app_repo.commit("only tests from here on")
    head = _agent_edits(app_repo, "app/pricing/tax.py")
    checked = gate.check_range(app_repo.path, base, head)
    assert _escapes(checked) == ["app/pricing/tax.py"]
    assert f"({SCOPE} at {narrow[:10]})" in checked.reasons[0].detail


def test_the_newest_governing_commit_wins(app_repo: GitRepo) -> None:
    base = _base(app_repo)
    _widen(app_repo)
    _agent_edits(app_repo)  # under the widened scope: fine
    app_repo.write(SCOPE, "app/pricing\ntests\n")
    app_repo.commit("back to pricing only")
    head = _agent_edits(app_repo, "app/checkout/other.py")
    checked = gate.check_range(app_repo.path, base, head)
    assert _escapes(checked) == ["app/checkout/other.py"]


def test_a_merged_side_branch_governs_only_its_descendants(app_repo: GitRepo) -> None:
    """A commit on the main line that does not descend from the side branch's widening is
    judged by the base's scope, although it comes after the widening in the log."""
    base = _base(app_repo)
    app_repo.git("checkout", "-q", "-b", "side")
    _widen(app_repo)
    app_repo.git("checkout", "-q", "main")
    _agent_edits(app_repo)
    app_repo.git("-c", "core.hooksPath=/dev/null", "merge", "-q", "--no-edit", "side")
    checked = gate.check_range(app_repo.path, base, app_repo.sha())
    assert _escapes(checked) == [OUTSIDE]


def test_without_a_widening_the_base_scope_governs_the_range(app_repo: GitRepo) -> None:
    base = _base(app_repo)
    head = _agent_edits(app_repo)
    checked = gate.check_range(app_repo.path, base, head)
    assert _escapes(checked) == [OUTSIDE]
    assert not any("governs" in n for n in checked.notes)


def test_the_fixture_manifest_is_not_governed(app_repo: GitRepo) -> None:
    """The attack: the human-looking widening also re-records a fixture's manifest entry,
    then the agent's commit changes that fixture with no test. The base's manifest judges
    which fixtures moved, whatever the range's governing commits wrote."""
    rates = "tests/fixtures/rates.json"
    app_repo.write(rates, "1\n")
    app_repo.write(".agentgate/fixtures.sha256", manifest.render({rates: manifest.digest(b"1\n")}))
    base = _base(app_repo)
    app_repo.write(".agentgate/fixtures.sha256", manifest.render({rates: manifest.digest(b"2\n")}))
    _widen(app_repo)
    app_repo.write(rates, "2\n")
    head = app_repo.commit("new rates", author=AGENT)
    checked = gate.check_range(app_repo.path, base, head)
    assert [(r.code, r.path) for r in checked.reasons] == [("fixture-without-test", rates)]
    assert any("governs the scope" in n for n in checked.notes)


def test_ancestors_within_a_range_follow_parents_not_log_order(app_repo: GitRepo) -> None:
    base = _base(app_repo)
    one = _widen(app_repo)
    two = _agent_edits(app_repo)
    commits = gate.gitio.commits_in_range(app_repo.path, base, two)
    assert govern.ancestors(list(reversed(commits))) == {one: frozenset(),
                                                         two: frozenset({one})}


# --- trust_signers -------------------------------------------------------------------------


def _key(tmp_path: Path, name: str) -> Path:
    key = tmp_path / "keys" / name
    key.parent.mkdir(exist_ok=True)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)],
                   check=True)
    return key


def _allowed(*keys: Path) -> str:
    return "".join(f"{EMAIL} {k.with_suffix('.pub').read_text().strip()}\n" for k in keys)


def _signed(repo: GitRepo, message: str, key: Path) -> str:
    repo.add()
    repo.git("-c", "core.hooksPath=/dev/null", "-c", "gpg.format=ssh",
             "-c", f"user.signingkey={key}", "commit", "-q", "-S", "--no-verify", "-m", message)
    return repo.sha()


def _signed_widening(repo: GitRepo, key: Path) -> str:
    repo.write(SCOPE, "app\ntests\n")
    return _signed(repo, "widen the scope", key)


@pytest.fixture
def human_key(tmp_path: Path) -> Path:
    return _key(tmp_path, "human")


def test_a_widening_signed_by_an_allowed_key_governs(app_repo: GitRepo, human_key: Path) -> None:
    base = _base(app_repo, signers=_allowed(human_key))
    widen = _signed_widening(app_repo, human_key)
    head = _agent_edits(app_repo)
    checked = gate.check_range(app_repo.path, base, head)
    assert checked.reasons == []
    assert any(n.startswith(f"commit {widen[:10]}, a human's trust-only commit, governs")
               for n in checked.notes)


def test_an_unsigned_widening_governs_nothing(app_repo: GitRepo, human_key: Path) -> None:
    """The attack: a human-looking (an agent stripped its signals) unsigned widening."""
    base = _base(app_repo, signers=_allowed(human_key))
    _widen(app_repo)
    head = _agent_edits(app_repo)
    checked = gate.check_range(app_repo.path, base, head)
    assert _escapes(checked) == [OUTSIDE]
    assert _governs_nothing(checked) == [f"unsigned (trust_signers: {SIGNERS})"]


def test_a_widening_signed_by_a_key_not_allowed_governs_nothing(
    app_repo: GitRepo, human_key: Path, tmp_path: Path
) -> None:
    base = _base(app_repo, signers=_allowed(human_key))
    _signed_widening(app_repo, _key(tmp_path, "stranger"))
    head = _agent_edits(app_repo)
    checked = gate.check_range(app_repo.path, base, head)
    assert _escapes(checked) == [OUTSIDE]
    assert _governs_nothing(checked) == [f"signer not allowed (trust_signers: {SIGNERS})"]


def test_a_signer_added_in_the_range_is_not_allowed(
    app_repo: GitRepo, human_key: Path, tmp_path: Path
) -> None:
    """The attack: the same commit lists its own key and widens the scope. The allowed
    signers are the base's."""
    base = _base(app_repo, signers=_allowed(human_key))
    stranger = _key(tmp_path, "stranger")
    app_repo.write(SIGNERS, _allowed(human_key, stranger))
    _signed_widening(app_repo, stranger)
    head = _agent_edits(app_repo)
    checked = gate.check_range(app_repo.path, base, head)
    assert _escapes(checked) == [OUTSIDE]
    assert _governs_nothing(checked) == [f"signer not allowed (trust_signers: {SIGNERS})"]


def _forged(repo: GitRepo, sha: str, old: bytes, new: bytes) -> str:
    """A copy of commit ``sha`` with ``old`` replaced by ``new`` in its object, made HEAD."""
    raw = subprocess.run(["git", "-C", str(repo.path), "cat-file", "commit", sha],
                         capture_output=True, check=True).stdout
    forged = subprocess.run(["git", "-C", str(repo.path), "hash-object", "-t", "commit", "-w",
                             "--stdin"], input=raw.replace(old, new, 1), capture_output=True,
                            check=True).stdout.decode().strip()
    repo.git("reset", "-q", "--hard", forged)
    return forged


def test_a_tampered_signed_widening_has_a_bad_signature(
    app_repo: GitRepo, human_key: Path
) -> None:
    """The attack: a good signature copied onto another commit (here: another message)."""
    base = _base(app_repo, signers=_allowed(human_key))
    signed = _signed_widening(app_repo, human_key)
    _forged(app_repo, signed, b"widen the scope", b"widen the scope!")
    head = _agent_edits(app_repo)
    checked = gate.check_range(app_repo.path, base, head)
    assert _escapes(checked) == [OUTSIDE]
    assert _governs_nothing(checked) == [f"bad signature (trust_signers: {SIGNERS})"]


def test_a_gpg_signature_is_not_checked_against_the_machines_keyring(
    app_repo: GitRepo, human_key: Path
) -> None:
    """An OpenPGP signature would be judged by whatever keyring the machine has."""
    base = _base(app_repo, signers=_allowed(human_key))
    signed = _signed_widening(app_repo, human_key)
    _forged(app_repo, signed, b"-----BEGIN SSH SIGNATURE-----", b"-----BEGIN PGP SIGNATURE-----")
    head = _agent_edits(app_repo)
    checked = gate.check_range(app_repo.path, base, head)
    assert _escapes(checked) == [OUTSIDE]
    assert _governs_nothing(checked)[0].startswith("not an SSH signature")


def test_a_signers_file_the_base_lacks_lets_nothing_govern(
    app_repo: GitRepo, human_key: Path
) -> None:
    base = _base(app_repo, signers=_allowed(human_key))
    app_repo.rm(SIGNERS)
    base = app_repo.commit("drop the signers file")
    _signed_widening(app_repo, human_key)
    head = _agent_edits(app_repo)
    checked = gate.check_range(app_repo.path, base, head)
    assert _escapes(checked) == [OUTSIDE]
    assert _governs_nothing(checked) == [
        f"trust_signers names {SIGNERS}, which the base {base[:10]} does not have"]


def test_a_signers_path_outside_the_repository_is_a_config_error(app_repo: GitRepo) -> None:
    with pytest.raises(ConfigError, match="'trust_signers' must name a path inside"):
        config_mod.load(app_repo.path, '[tool.agentgate]\ntrust_signers = "../keys"\n')


def test_the_signers_file_is_a_trust_file(app_repo: GitRepo, human_key: Path) -> None:
    """An agent cannot add its key: the file is guarded like the scope file."""
    _base(app_repo, signers=_allowed(human_key))
    assert trust.is_trust_path(SIGNERS, Config(app_repo.path, trust_signers=SIGNERS))
    app_repo.write(SIGNERS, _allowed(human_key) + "agent@x ssh-ed25519 AAAA\n")
    app_repo.add()
    result = gate.check_staged(app_repo.path, {"CLAUDECODE": "1"})
    assert result.verdict is Verdict.BLOCKED
    assert [(r.code, r.path) for r in result.reasons] == [("trust-agent", SIGNERS)]


def test_an_earlier_widening_that_governs_nothing_is_not_laundered_by_a_signed_one(
    app_repo: GitRepo, tmp_path: Path,
) -> None:
    """Attack (found in review): an unsigned widening governs nothing, then a human signs an
    unrelated scope commit on top. The signed commit starts from a scope that is not the one
    in force, so it governs nothing either, and the agent's edit outside the base's scope
    still escapes."""
    key = _key(tmp_path, "human")
    base = _base(app_repo, signers=_allowed(key))
    app_repo.write(SCOPE, "app\ntests\n")
    app_repo.commit("tidy scope")
    app_repo.write(SCOPE, "# reviewed\napp\ntests\n")
    _signed(app_repo, "scope: comment", key)
    head = _agent_edits(app_repo)
    checked = gate.check_range(app_repo.path, base, head)
    assert _escapes(checked) == [OUTSIDE]
    assert any("changed earlier in the range" in n for n in checked.notes), checked.notes
