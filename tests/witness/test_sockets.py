"""Tests that talk over sockets (issue 12: a witness narrows them where it can follow them).

A test that serves from a thread of its own process and connects to it (a server on
``127.0.0.1:0``, a Unix socket, asyncio's and http.server's usual test set-up) runs no code
the witness cannot see: the server's code runs in a traced thread. Such a test was
``escalate:incomplete-witness`` and ran for every patch (on boltons a quarter of the suite's
time). Now it is narrowed like any other. Whatever another process may answer stays
incomplete: an address no socket of the process bound, and a socket bound before a process
was started that may have inherited it. A name lookup alone asks the machine, not code.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentgate.witness.select import ESCALATE, IMPACTED, SKIP
from tests.support.git_repo import GitRepo
from tests.witness.recorded import labelled, recorded_repo

ECHO = "def reply(data):\n    return data.upper()\n\n\ndef unused():\n    return 0\n"
SERVE = (
    "import socket\nimport threading\n\nfrom app import echo\n\n\n"
    "def serve(family=socket.AF_INET, where=('127.0.0.1', 0)):\n"
    "    server = socket.socket(family, socket.SOCK_STREAM)\n"
    "    server.bind(where)\n    server.listen()\n\n"
    "    def run():\n        conn, _ = server.accept()\n"
    "        with conn:\n            conn.sendall(echo.reply(conn.recv(64)))\n\n"
    "    thread = threading.Thread(target=run, daemon=True)\n    thread.start()\n"
    "    return server, thread\n\n\n"
    "def ask(server, data=b'hi'):\n"
    "    with socket.socket(server.family, socket.SOCK_STREAM) as client:\n"
    "        client.connect(server.getsockname())\n        client.sendall(data)\n"
    "        return client.recv(64)\n"
)
FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "pyproject.toml": "[tool.agentgate]\nshadow_percent = 0\n",
    "app/__init__.py": "",
    "app/echo.py": ECHO,
    "tests/serving.py": SERVE,
    "tests/test_tcp.py": "import socket\n\nfrom serving import serve\n\n\n"
    "def test_tcp():\n    server, thread = serve()\n"
    "    with socket.create_connection(('localhost', server.getsockname()[1])) as client:\n"
    "        client.sendall(b'hi')\n        assert client.recv(64) == b'HI'\n"
    "    thread.join()\n    server.close()\n",
    "tests/test_unix.py": "import os\nimport socket\nimport tempfile\n\n"
    "from serving import ask, serve\n\n\n"
    "def test_unix():\n    where = os.path.join(tempfile.mkdtemp(), 's')\n"
    "    server, thread = serve(socket.AF_UNIX, where)\n"
    "    assert ask(server) == b'HI'\n    thread.join()\n    server.close()\n",
    "tests/test_lookup.py": "import socket\n\n\n"
    "def test_lookup():\n    assert socket.getaddrinfo('localhost', 80)\n",
    # This process listens, but not there: another process would answer.
    "tests/test_foreign.py": "import socket\n\n\n"
    "def test_foreign():\n    mine = socket.socket()\n    mine.bind(('127.0.0.1', 0))\n"
    "    mine.listen()\n    with socket.socket() as client:\n"
    "        try:\n            client.connect(('127.0.0.1', 9))\n"
    "        except OSError:\n            pass\n    mine.close()\n",
    # A UDP socket of this process holds the port; a TCP listener there would be another's.
    "tests/test_foreign_type.py": "import socket\n\n\n"
    "def test_foreign_type():\n    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
    "    udp.bind(('127.0.0.1', 0))\n    with socket.socket() as client:\n"
    "        try:\n            client.connect(udp.getsockname())\n"
    "        except OSError:\n            pass\n    udp.close()\n",
    # A port shared with SO_REUSEPORT: another process may listen on it too.
    "tests/test_reuse.py": "import socket\nimport threading\n\n\n"
    "def test_reuse():\n    server = socket.socket()\n"
    "    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)\n"
    "    server.bind(('127.0.0.1', 0))\n    server.listen()\n"
    "    with socket.create_connection(server.getsockname()):\n        pass\n"
    "    server.close()\n",
    # Bound by one test, then a process started that may have inherited the listening
    # socket: it may be the one that answers the next test.
    "tests/test_i1_spawn.py": "import subprocess\nimport sys\n\nimport serving\n\n\n"
    "def test_spawn():\n    serving.SHARED = serving.serve()\n"
    "    subprocess.run([sys.executable, '-c', 'pass'], check=True)\n",
    "tests/test_i2_inherited.py": "import serving\n\n\n"
    "def test_inherited():\n    server, thread = serving.SHARED\n"
    "    assert serving.ask(server) == b'HI'\n    thread.join()\n    server.close()\n",
    "tests/test_plain.py": "def test_plain():\n    assert 1 + 1 == 2\n",
    # The client is closed and collected before the server accepts (boltons' netstring
    # test): still this process's connection.
    "tests/test_closed_first.py": "import gc\nimport socket\n\nfrom app import echo\n\n\n"
    "def test_closed_first():\n    server = socket.socket()\n"
    "    server.bind(('127.0.0.1', 0))\n    server.listen()\n"
    "    client = socket.create_connection(server.getsockname())\n"
    "    client.sendall(b'hi')\n    client.close()\n    del client\n    gc.collect()\n"
    "    conn, _ = server.accept()\n    with conn:\n"
    "        assert echo.reply(conn.recv(64)) == b'HI'\n    server.close()\n",
    # Another loopback address than the one this process listens on: another process's.
    "tests/test_alias.py": "import socket\n\n\n"
    "def test_alias():\n    mine = socket.socket()\n    mine.bind(('127.0.0.1', 0))\n"
    "    mine.listen()\n    with socket.socket() as client:\n        try:\n"
    "            client.connect(('127.0.0.2', mine.getsockname()[1]))\n"
    "        except OSError:\n            pass\n    mine.close()\n",
    # Bound but not listening: with SO_REUSEADDR another process may listen on the port.
    "tests/test_unlistened.py": "import socket\n\n\n"
    "def test_unlistened():\n    mine = socket.socket()\n"
    "    mine.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
    "    mine.bind(('127.0.0.1', 0))\n    with socket.socket() as client:\n        try:\n"
    "            client.connect(mine.getsockname())\n"
    "        except OSError:\n            pass\n    mine.close()\n",
    # A relative Unix path names another socket from another folder.
    "tests/test_relative.py": "import os\nimport socket\nimport tempfile\n\n\n"
    "def test_relative():\n    here = os.getcwd()\n"
    "    mine_dir, other_dir = tempfile.mkdtemp(), tempfile.mkdtemp()\n"
    "    mine = socket.socket(socket.AF_UNIX)\n    try:\n        os.chdir(mine_dir)\n"
    "        mine.bind('s')\n        mine.listen()\n        os.chdir(other_dir)\n"
    "        with socket.socket(socket.AF_UNIX) as client:\n            try:\n"
    "                client.connect('s')\n            except OSError:\n                pass\n"
    "    finally:\n        os.chdir(here)\n        mine.close()\n",
    # A helper process an earlier test started connects in, or sends a datagram, to what the
    # later test bound: that test reads what another process's code wrote.
    "tests/helper.py": "import socket\nimport sys\n\n"
    "for line in sys.stdin:\n    kind, port = line.split()\n"
    "    if kind == 'tcp':\n"
    "        with socket.create_connection(('127.0.0.1', int(port))) as c:\n"
    "            c.sendall(b'42')\n"
    "    else:\n        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as c:\n"
    "            c.sendto(b'42', ('127.0.0.1', int(port)))\n",
    "tests/test_k1_helper.py": "import subprocess\nimport sys\nfrom pathlib import Path\n\n"
    "import serving\n\n\n"
    "def test_helper():\n    serving.HELPER = subprocess.Popen(\n"
    "        [sys.executable, str(Path(__file__).with_name('helper.py'))],\n"
    "        stdin=subprocess.PIPE, text=True)\n",
    "tests/test_k2_accept.py": "import socket\n\nimport serving\n\n\n"
    "def test_accept():\n    server = socket.socket()\n    server.bind(('127.0.0.1', 0))\n"
    "    server.listen()\n"
    "    serving.HELPER.stdin.write(f'tcp {server.getsockname()[1]}\\n')\n"
    "    serving.HELPER.stdin.flush()\n    conn, _ = server.accept()\n"
    "    with conn:\n        assert conn.recv(64) == b'42'\n    server.close()\n",
    "tests/test_k3_datagram.py": "import socket\n\nimport serving\n\n\n"
    "def test_datagram():\n    mine = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
    "    mine.bind(('127.0.0.1', 0))\n"
    "    serving.HELPER.stdin.write(f'udp {mine.getsockname()[1]}\\n')\n"
    "    serving.HELPER.stdin.close()\n    assert mine.recvfrom(64)[0] == b'42'\n"
    "    serving.HELPER.wait()\n    mine.close()\n",
    # multiprocessing's forkserver starts its process with no audit event, and answers on a
    # Unix socket this process bound: the child it forks runs reply. (Its spawn start
    # method is followed like any Python child: tests/witness/test_children.py.)
    "tests/test_mp_forkserver.py": "import multiprocessing\n\nfrom app import echo\n\n\n"
    "def test_mp():\n    context = multiprocessing.get_context('forkserver')\n"
    "    with context.Pool(1) as pool:\n"
    "        assert pool.apply(echo.reply, (b'hi',)) == b'HI'\n",
}
TCP = "tests/test_tcp.py::test_tcp"
UNIX = "tests/test_unix.py::test_unix"
LOOKUP = "tests/test_lookup.py::test_lookup"
FOREIGN = "tests/test_foreign.py::test_foreign"
INHERITED = "tests/test_i2_inherited.py::test_inherited"
PLAIN = "tests/test_plain.py::test_plain"
FOREIGN_TYPE = "tests/test_foreign_type.py::test_foreign_type"
REUSE = "tests/test_reuse.py::test_reuse"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GitRepo, str]]:
    yield from recorded_repo(tmp_path_factory, FILES)


def test_a_server_in_a_thread_of_the_test_is_followed_not_escalated(
    recorded: tuple[GitRepo, str],
) -> None:
    labels = labelled(recorded, "reply", {"app/echo.py": ECHO.replace(".upper()", ".upper()[:64]")})
    # The server thread ran reply for them: they rerun, as impacted, not as incomplete.
    assert labels[TCP] == labels[UNIX] == IMPACTED
    assert labels["tests/test_closed_first.py::test_closed_first"] == IMPACTED
    assert labels[LOOKUP] == labels[PLAIN] == SKIP
    labels = labelled(recorded, "unused", {"app/echo.py": ECHO.replace("return 0", "return 1")})
    assert labels[TCP] == labels[UNIX] == labels[LOOKUP] == SKIP


def test_what_another_process_may_answer_stays_incomplete(
    recorded: tuple[GitRepo, str],
) -> None:
    labels = labelled(recorded, "other", {"app/echo.py": ECHO.replace("return 0", "return 2")})
    assert labels[FOREIGN] == ESCALATE
    assert labels[INHERITED] == ESCALATE
    assert labels[FOREIGN_TYPE] == ESCALATE
    assert labels[REUSE] == ESCALATE
    assert labels["tests/test_alias.py::test_alias"] == ESCALATE
    assert labels["tests/test_unlistened.py::test_unlistened"] == ESCALATE
    assert labels["tests/test_relative.py::test_relative"] == ESCALATE
    assert labels["tests/test_k2_accept.py::test_accept"] == ESCALATE
    assert labels["tests/test_k3_datagram.py::test_datagram"] == ESCALATE
    assert labels["tests/test_mp_forkserver.py::test_mp"] == ESCALATE
    assert labels[PLAIN] == SKIP
