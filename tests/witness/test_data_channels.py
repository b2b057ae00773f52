"""Reads no ``open`` event names with the file's own path (red-team): a database opened by a
``file:`` URI, a file opened or stat'ed relative to a folder descriptor (``dir_fd``), and the
size an ``os.scandir`` entry's ``stat()`` tells. Each was recorded at no file, or at the wrong
one, so a change to the file skipped the test that read it. Next to each, a test that read
only the folder's names stays skipped when a file's content changes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentgate.witness.select import IMPACTED, SKIP
from tests.support.git_repo import GitRepo
from tests.witness.recorded import labelled, recorded_repo

CHANNELS = '''import os
import sqlite3
from urllib.parse import quote

HERE = os.path.dirname(os.path.abspath(__file__))
DB = os.path.join(HERE, "data", "rates.db")
ASSETS = os.path.join(HERE, "assets")


def _count(con):
    try:
        return con.execute("select count(*) from sqlite_master").fetchone()[0]
    finally:
        con.close()


def tables_uri():
    return _count(sqlite3.connect(f"file:{DB}?mode=ro", uri=True))


def tables_localhost():
    return _count(sqlite3.connect("file://localhost" + quote(DB) + "?mode=ro", uri=True))


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
    "tests/test_channels.py": "from app import channels\n\n\n"
    "def test_uri():\n    assert channels.tables_uri() == 0\n\n\n"
    "def test_localhost():\n    assert channels.tables_localhost() == 0\n\n\n"
    "def test_dir_fd():\n    assert channels.css_through_dir_fd() == b'body {}\\n'\n\n\n"
    "def test_dir_fd_stat():\n    assert channels.css_size_through_dir_fd() == 8\n\n\n"
    "def test_sizes():\n    assert channels.assets_size() == 13\n\n\n"
    "def test_names():\n    assert channels.asset_names() == ['extra.css', 'site.css']\n",
}
ALL = ("uri", "localhost", "dir_fd", "dir_fd_stat", "sizes", "names")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GitRepo, str]]:
    yield from recorded_repo(tmp_path_factory, FILES)


@pytest.mark.parametrize(("path", "text", "readers"), [
    ("app/data/rates.db", "not a database", {"uri", "localhost"}),
    ("app/assets/site.css", "body { margin: 0 }\n", {"dir_fd", "dir_fd_stat", "sizes"}),
], ids=["database-uri", "dir_fd-and-scandir-stat"])
def test_a_file_read_past_its_path_reruns_its_readers(
    recorded: tuple[GitRepo, str], path: str, text: str, readers: set[str],
) -> None:
    labels = labelled(recorded, "changed-" + path.replace("/", "-"), {path: text})
    want = {n: IMPACTED if n in readers else SKIP for n in ALL}
    assert {n: labels[f"tests/test_channels.py::test_{n}"] for n in ALL} == want
