"""Reads no ``open`` event names with the file's own path (red-team): a database opened by a
``file:`` URI or attached by a statement, a file opened or stat'ed relative to a folder
descriptor (``dir_fd``), and the size an ``os.scandir`` entry's ``stat()`` tells. Each was
recorded at no file, or at the wrong one, so a change to the file skipped the test that read
it. Next to each, a test that read only the folder's names stays skipped when a file's
content changes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentgate.witness.patch import compiled_source
from agentgate.witness.select import ESCALATE, IMPACTED, SKIP
from tests.support.git_repo import GitRepo
from tests.witness.recorded import labelled, patch, plan, recorded_repo

CHANNELS = '''import contextlib
import os
import sqlite3
import ssl
from urllib.parse import quote

HERE = os.path.dirname(os.path.abspath(__file__))
DB = os.path.join(HERE, "data", "rates.db")
ASSETS = os.path.join(HERE, "assets")
CERTS = os.path.join(HERE, "certs")


def _count(con):
    try:
        return con.execute("select count(*) from sqlite_master").fetchone()[0]
    finally:
        con.close()


def tables_uri():
    return _count(sqlite3.connect(f"file:{DB}?mode=ro", uri=True))


def tables_localhost():
    return _count(sqlite3.connect("file://localhost" + quote(DB) + "?mode=ro", uri=True))


def tables_attached():
    con = sqlite3.connect(":memory:")
    con.execute("ATTACH DATABASE '" + DB + "' AS r")
    return con.execute("select count(*) from r.sqlite_master").fetchone()[0]


def tables_attached_bound():
    con = sqlite3.connect(":memory:")
    con.set_authorizer(lambda *event: sqlite3.SQLITE_OK)  # the code's own, kept beside
    con.execute("ATTACH DATABASE ? AS r", (DB,))
    return con.execute("select count(*) from r.sqlite_master").fetchone()[0]


def css_through_dir_fd():
    folder = os.open(ASSETS, os.O_RDONLY)
    try:
        fd = os.open("site.css", os.O_RDONLY, dir_fd=folder)
        try:
            return os.read(fd, 1000)
        finally:
            os.close(fd)
    finally:
        os.close(folder)


def css_size_through_dir_fd():
    folder = os.open(ASSETS, os.O_RDONLY)
    try:
        return os.stat("site.css", dir_fd=folder).st_size
    finally:
        os.close(folder)


def assets_size():
    with os.scandir(ASSETS) as entries:
        return sum(e.stat().st_size for e in entries if e.name.endswith(".css"))


def ca_loaded():
    with contextlib.suppress(ssl.SSLError):  # what OpenSSL makes of it: not this test's point
        ssl.create_default_context(cafile=os.path.join(CERTS, "ca.pem"))
    return True


def chain_loaded():
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    with contextlib.suppress(ssl.SSLError):
        context.load_cert_chain(os.path.join(CERTS, "cert.pem"),
                                keyfile=os.path.join(CERTS, "key.pem"))
    return True


def asset_names():
    with os.scandir(ASSETS) as entries:
        return sorted(e.name for e in entries)
'''
FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "pyproject.toml": "[tool.agentgate]\nshadow_percent = 0\n",
    "app/__init__.py": "",
    "app/channels.py": CHANNELS,
    "app/data/rates.db": "",  # an empty file is an empty database
    "app/assets/site.css": "body {}\n",
    "app/assets/extra.css": "p {}\n",
    "app/certs/ca.pem": "no certificate yet\n",
    "app/certs/cert.pem": "no certificate yet\n",
    "app/certs/key.pem": "no key yet\n",
    "tests/test_channels.py": "from app import channels\n\n\n"
    "def test_uri():\n    assert channels.tables_uri() == 0\n\n\n"
    "def test_localhost():\n    assert channels.tables_localhost() == 0\n\n\n"
    "def test_attach():\n    assert channels.tables_attached() == 0\n\n\n"
    "def test_attach_bound():\n    assert channels.tables_attached_bound() == 0\n\n\n"
    "def test_dir_fd():\n    assert channels.css_through_dir_fd() == b'body {}\\n'\n\n\n"
    "def test_dir_fd_stat():\n    assert channels.css_size_through_dir_fd() == 8\n\n\n"
    "def test_sizes():\n    assert channels.assets_size() == 13\n\n\n"
    "def test_names():\n    assert channels.asset_names() == ['extra.css', 'site.css']\n\n\n"
    "def test_ca():\n    assert channels.ca_loaded()\n\n\n"
    "def test_chain():\n    assert channels.chain_loaded()\n",
}
ALL = ("uri", "localhost", "attach", "dir_fd", "dir_fd_stat", "sizes", "names", "ca", "chain")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GitRepo, str]]:
    yield from recorded_repo(tmp_path_factory, FILES)


@pytest.mark.parametrize(("path", "text", "readers"), [
    ("app/data/rates.db", "not a database", {"uri", "localhost", "attach"}),
    ("app/assets/site.css", "body { margin: 0 }\n", {"dir_fd", "dir_fd_stat", "sizes"}),
    # red-team round 5: OpenSSL opens what ``ssl`` hands it in C, with no audit event
    ("app/certs/ca.pem", "another bundle\n", {"ca"}),
    ("app/certs/key.pem", "another key\n", {"chain"}),
], ids=["database-uri", "dir_fd-and-scandir-stat", "ssl-cafile", "ssl-keyfile"])
def test_a_file_read_past_its_path_reruns_its_readers(
    recorded: tuple[GitRepo, str], path: str, text: str, readers: set[str],
) -> None:
    labels = labelled(recorded, "changed-" + path.replace("/", "-"), {path: text})
    want = {n: IMPACTED if n in readers else SKIP for n in ALL}
    assert {n: labels[f"tests/test_channels.py::test_{n}"] for n in ALL} == want


def test_a_database_attached_by_a_bound_name_leaves_its_test_incomplete(
    recorded: tuple[GitRepo, str],
) -> None:
    """Red-team round 4: SQLite opens an ATTACHed file in C, with no audit event. Spelled in
    the statement, the authorizer names it (``test_attach`` above); bound as a parameter, it
    does not, so the test runs for every patch."""
    labels = labelled(recorded, "unrelated", {"app/assets/extra.css": "p { margin: 0 }\n"})
    assert labels["tests/test_channels.py::test_attach_bound"] == ESCALATE
    assert labels["tests/test_channels.py::test_attach"] == SKIP


def test_bytecode_committed_next_to_a_module_reruns_its_users(
    recorded: tuple[GitRepo, str],
) -> None:
    """Red-team: a .pyc compiled with ``--invalidation-mode unchecked-hash`` from a broken
    source runs in place of the unchanged one. No test opens it as data: it counts as a
    change to all of its module."""
    repo, w = recorded
    patch(repo, w, "bytecode", {})
    pyc = repo.path / "app" / "__pycache__" / "channels.cpython-311.pyc"
    pyc.parent.mkdir(exist_ok=True)
    pyc.write_bytes(b"not really bytecode")
    repo.git("add", "-f", str(pyc))  # committed past the .gitignore, as the attack did
    repo.git("commit", "-q", "--amend", "--no-edit")
    labels = {d.nodeid: d.label for d in plan(repo, w).decisions}
    assert {n: labels[f"tests/test_channels.py::test_{n}"] for n in ALL} == dict.fromkeys(
        ALL, IMPACTED)


@pytest.mark.parametrize(("path", "source"), [
    ("app/__pycache__/channels.cpython-311.pyc", "app/channels.py"),
    ("app/__pycache__/channels.cpython-311.opt-1.pyc", "app/channels.py"),
    ("app/channels.pyc", "app/channels.py"),
    ("channels.pyc", "channels.py"),
    ("app/data/rates.db", None),
])
def test_the_source_a_bytecode_file_stands_for(path: str, source: str | None) -> None:
    assert compiled_source(path) == source
