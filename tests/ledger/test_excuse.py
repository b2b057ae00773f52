"""``ledger.excuse``: the merge-base's ledger, read from git, is the one that excuses."""

from __future__ import annotations

import json
from datetime import date, timedelta

from agentgate.core import config as config_mod
from agentgate.ledger import excuse
from tests.support.git_repo import GitRepo
from tests.support.ledger import SESSION, TAX, freeze_json, write_freeze

TODAY = date(2026, 1, 10)


def _excuses(repo: GitRepo, base: str, today: date = TODAY) -> excuse.Excuses:
    config = config_mod.load(repo.path)
    return excuse.excuses(repo.path, config, base=base, tree=repo.path, today=today)


def _base(repo: GitRepo) -> str:
    repo.commit("ledger")
    return repo.sha()


def test_a_record_at_the_base_excuses_and_one_only_on_disk_does_not(app_repo: GitRepo) -> None:
    write_freeze(app_repo, TAX, today=TODAY)
    base = _base(app_repo)
    write_freeze(app_repo, SESSION, today=TODAY)  # head's ledger only
    found = _excuses(app_repo, base)
    assert (found.excused, found.not_at_base) == ({TAX}, {SESSION})


def test_the_base_is_read_from_git_not_from_the_work_tree(app_repo: GitRepo) -> None:
    """Editing the record on disk after the base commit cannot move the base's dates."""
    path = write_freeze(app_repo, TAX, today=TODAY)
    base = _base(app_repo)
    later = TODAY + timedelta(days=20)  # past the base record's freeze_until
    path.write_text(json.dumps(freeze_json(TAX, today=later)), encoding="utf-8")
    assert _excuses(app_repo, base, later).excused == frozenset()


def test_an_expired_or_duplicated_base_record_excuses_nothing(app_repo: GitRepo) -> None:
    write_freeze(app_repo, TAX, today=TODAY)
    base = _base(app_repo)
    assert _excuses(app_repo, base, TODAY + timedelta(days=15)).excused == frozenset()
    write_freeze(app_repo, TAX, today=TODAY, name="copy.json")
    assert _excuses(app_repo, _base(app_repo)).excused == frozenset()


def test_no_ledger_at_the_base_excuses_nothing(app_repo: GitRepo) -> None:
    base = app_repo.sha()
    write_freeze(app_repo, TAX, today=TODAY)
    assert _excuses(app_repo, base).excused == frozenset()
    empty_tree = app_repo.git("hash-object", "-t", "tree", "/dev/null").strip()
    assert _excuses(app_repo, empty_tree).excused == frozenset()  # check with no base
