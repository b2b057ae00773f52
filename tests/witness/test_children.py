"""Python processes a test starts are recorded for that test (``agentgate.witness.children``).

A test that runs the project's command line in a subprocess ran repository code the
recording process never saw: it was ``escalate:incomplete-witness`` and ran for every
patch. Now the child records itself and the test is narrowed like any other: it reruns when
what the child ran or read changes, not otherwise. A child that cannot prove it is the
process the test started (a shell in between, a cleared environment, killed, ended by
``os._exit``, code run in a forked child) leaves the test incomplete, and so does whatever
the child itself could not follow. One recording, real patches, real ``witness record``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentgate.witness import children
from agentgate.witness.select import ESCALATE, IMPACTED, SKIP
from agentgate.witness.store import Store
from tests.support.git_repo import GitRepo, run_agentgate
from tests.witness.recorded import isolate, labelled, plan, recorded_repo

CORE = ("RATE = 2\n\n\ndef double(x):\n    return 2 * x\n\n\n"
        "def triple(x):\n    return 3 * x\n")
CLI = (
    "import sys\n\nfrom app import core\n\n\n"
    "def main(argv):\n"
    "    if argv[0] == 'table':\n"
    "        with open('data/table.txt') as fh:\n            print(fh.read().strip())\n"
    "        return\n"
    "    print(core.double(int(argv[0])))\n\n\n"
    "if __name__ == '__main__':\n    main(sys.argv[1:])\n"
)
SETTINGS = ("import sys\nimport types\n\n\nclass _Settings(types.ModuleType):\n    pass\n\n\n"
            "LIMIT = 5\nsys.modules[__name__].__class__ = _Settings\n")
LATE = (
    "import functools\nimport io\nimport logging\nimport threading\nimport time\n\n"
    "from app import core\n\n\n"
    "class Late:\n    def __del__(self):\n        core.double(1)\n\n\n"
    "def gen():\n    try:\n        yield 1\n    finally:\n        core.double(1)\n\n\n"
    "def linger():\n    threading.Thread(target=time.sleep, args=(0.2,), daemon=True).start()\n\n\n"
    "class Handler(logging.Handler):\n    def emit(self, record):\n        pass\n\n"
    "    def flush(self):\n        core.double(1)\n\n\n"
    "class Upper:  # sys.stdout, buffered: written out when the interpreter flushes it\n"
    "    def __init__(self, stream):\n        self.stream, self.kept = stream, []\n\n"
    "    def write(self, text):\n        self.kept.append(text)\n\n"
    "    def flush(self):\n        self.stream.write(str(core.double(1)))\n\n\n"
    "class Report(io.StringIO):  # closed by the file object's own finalizer\n"
    "    def close(self):\n        core.double(1)\n        super().close()\n\n\n"
    "class LateWarning(UserWarning):\n    pass\n\n\n"
    "class Partial:\n    __del__ = functools.partial(core.double)\n\n\n"
    "class Sink:  # no file object, no finalizer: only what wraps it writes at exit\n"
    "    closed = False\n\n    def readable(self):\n        return False\n\n"
    "    def writable(self):\n        return True\n\n"
    "    def seekable(self):\n        return False\n\n"
    "    def flush(self):\n        pass\n\n"
    "    def write(self, data):\n        core.double(1)\n        return len(data)\n"
)
RUN = ("import subprocess\nimport sys\nfrom pathlib import Path\n\n"
       "HERE = Path(__file__).parent\n\n\n")
CLI_ARGS = "[sys.executable, '-m', 'app.cli', '4']"
FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "pyproject.toml": "[tool.agentgate]\nshadow_percent = 0\n",
    "app/__init__.py": "",
    "app/core.py": CORE,
    "app/cli.py": CLI,
    "data/table.txt": "a 1\n",
    # Read by names computed at run time: seen by the child's watcher (core), or not seen
    # at all (settings has a module class of its own, which the watcher cannot replace).
    "app/show.py": "from app import core, settings\n\n\n"
    "def rate():\n    return getattr(core, 'RA' + 'TE')\n\n\n"
    "def limit():\n    return getattr(settings, 'LIM' + 'IT')\n",
    "app/settings.py": SETTINGS,
    "app/late.py": LATE,
    # Followed: the command line as a module, a script of the tests, a grandchild, a data
    # file only the child reads, multiprocessing's spawn start method.
    "tests/test_cli.py": RUN
    + f"def test_cli():\n    out = subprocess.run({CLI_ARGS}, capture_output=True,\n"
    "                         text=True, check=True).stdout\n    assert out.split() == ['8']\n\n\n"
    "def test_table():\n    out = subprocess.run([sys.executable, '-m', 'app.cli', 'table'],\n"
    "                         capture_output=True, text=True, check=True).stdout\n"
    "    assert out.strip() == 'a 1'\n\n\n"
    "SHOW = 'from app import show; print(show.'\n\n\n"
    "def test_dynamic_rate():\n"
    "    out = subprocess.run([sys.executable, '-c', SHOW + 'rate())'],\n"
    "                         capture_output=True, text=True, check=True).stdout\n"
    "    assert out.strip() == '2'\n\n\n"
    "def test_dynamic_limit():\n"
    "    out = subprocess.run([sys.executable, '-c', SHOW + 'limit())'],\n"
    "                         capture_output=True, text=True, check=True).stdout\n"
    "    assert out.strip() == '5'\n\n\n"
    "def test_script():\n"
    "    subprocess.run([sys.executable, str(HERE / 'helper.py')], check=True)\n\n\n"
    "def test_nested():\n"
    "    subprocess.run([sys.executable, str(HERE / 'nested.py')], check=True)\n\n\n"
    "def test_path_as_pythonpath():  # the child's PYTHONPATH is this process's sys.path\n"
    "    import os\n\n    env = {**os.environ, 'PYTHONPATH': os.pathsep.join(sys.path)}\n"
    f"    subprocess.run({CLI_ARGS}, env=env, check=True, capture_output=True)\n\n\n"
    "def test_no_such_program():  # nothing ran: nothing to follow\n"
    "    try:\n        subprocess.run([str(HERE / 'no-such-program')])\n"
    "    except FileNotFoundError:\n        pass\n\n\n"
    "def test_in_process():\n    from app import core\n\n    assert core.triple(1) == 3\n",
    "tests/helper.py": "import os\nimport sys\n\n"
    "sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))\n"
    "from app import core  # noqa: E402\n\nassert core.triple(2) == 6\n",
    "tests/linked.py": "import os\nimport sys\n\n"
    "sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))\n"
    "from app import core  # noqa: E402\n\ncore.double(1)\n",
    # A test leaves a Python process running, fed through a pipe, for a later test: what
    # the later test has it run is charged to the first; the later test is incomplete. A
    # session fixture's server is charged to the fixture, which its users depend on.
    "tests/test_pipe_1_start.py": "import subprocess\nimport sys\n\nfrom tests import pipe\n\n\n"
    "def test_start():\n    pipe.CHILD = subprocess.Popen(\n"
    "        [sys.executable, '-c', 'import sys\\nfrom app import core\\n'\n"
    "         'for line in sys.stdin:\\n    print(core.triple(int(line)), flush=True)'],\n"
    "        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)\n",
    "tests/test_pipe_2_use.py": "from tests import pipe\n\n\n"
    "def test_use():\n    pipe.CHILD.stdin.write('2\\n')\n    pipe.CHILD.stdin.flush()\n"
    "    assert pipe.CHILD.stdout.readline() == '6\\n'\n"
    "    pipe.CHILD.stdin.close()\n    pipe.CHILD.wait()\n",
    "tests/__init__.py": "",
    # The same, its argv naming multiprocessing's resource tracker (which is exempt).
    "tests/test_pipe_3_disguised.py": "import subprocess\nimport sys\n\n"
    "from tests import pipe\n\n\n"
    "def test_start():\n    pipe.DISGUISED = subprocess.Popen(\n"
    "        [sys.executable, '-c', 'import sys\\nfrom app import core\\n'\n"
    "         'for line in sys.stdin:\\n    print(core.triple(int(line)), flush=True)',\n"
    "         'from multiprocessing.resource_tracker import main;main(3)'],\n"
    "        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)\n",
    "tests/test_pipe_4_fed.py": "from tests import pipe\n\n\n"
    "def test_fed():\n    pipe.DISGUISED.stdin.write('2\\n')\n    pipe.DISGUISED.stdin.flush()\n"
    "    assert pipe.DISGUISED.stdout.readline() == '6\\n'\n"
    "    pipe.DISGUISED.stdin.close()\n    pipe.DISGUISED.wait()\n",
    "tests/pipe.py": "CHILD = None\nSERVER = None\nDISGUISED = None\n",
    "tests/conftest.py": "import subprocess\nimport sys\n\nimport pytest\n\n"
    "from tests import pipe\n\n\n"
    "@pytest.fixture(scope='session')\ndef server():\n    pipe.SERVER = subprocess.Popen(\n"
    "        [sys.executable, '-c', 'import sys\\nfrom app import core\\n'\n"
    "         'for line in sys.stdin:\\n    print(core.triple(int(line)), flush=True)'],\n"
    "        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)\n"
    "    yield pipe.SERVER\n    pipe.SERVER.stdin.close()\n    pipe.SERVER.wait()\n",
    # A module imported in-process by one test and run by its path (a script, unwatched in
    # that child) by another: only the second test's child left its reads unseen.
    "app/tool.py": "WIDTH = 3\nLIMIT = 5\n\n\ndef width():\n    return WIDTH\n\n\n"
    "if __name__ == '__main__':\n    print(LIMIT)\n",
    "tests/test_tool.py": "import subprocess\nimport sys\nfrom pathlib import Path\n\n"
    "from app import tool\n\nROOT = Path(__file__).parent.parent\n\n\n"
    "def test_width():\n    assert tool.width() == 3\n\n\n"
    "def test_run_as_script():\n"
    "    out = subprocess.run([sys.executable, str(ROOT / 'app' / 'tool.py')],\n"
    "                         capture_output=True, text=True, check=True).stdout\n"
    "    assert out.strip() == '5'\n",
    "tests/test_server_1.py": "def test_asks(server):\n    server.stdin.write('1\\n')\n"
    "    server.stdin.flush()\n    assert server.stdout.readline() == '3\\n'\n",

    "app/blob.txt": "x\n",
    "tool/__main__.py": "import os\nimport sys\n\n"
    "sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))\n"
    "from app import core  # noqa: E402\n\ncore.double(1)\n",
    "tests/test_loader_data.py": "import pkgutil\n\n\n"
    "def test_get_data():\n    assert pkgutil.get_data('app', 'blob.txt') == b'x\\n'\n",
    "tests/nested.py": "import subprocess\nimport sys\n\n"
    f"subprocess.run({CLI_ARGS}, check=True, capture_output=True)\n",
    # The first start of the spawn method also starts multiprocessing's resource tracker,
    # a process that lives until this one ends: it leaves no record by then.
    **{
        f"tests/test_mp_{n}.py": "import multiprocessing\n\nfrom app import core\n\n\n"
        "def test_mp():\n    process = multiprocessing.get_context('spawn').Process(\n"
        "        target=core.double, args=(1,))\n"
        "    process.start()\n    process.join()\n    assert process.exitcode == 0\n"
        for n in ("1_tracker", "2_spawn")
    },
    # Each one an attack: a child that does not prove it is the process the test started,
    # or that did what the witness cannot follow. Each runs double; the patches change
    # triple, which none of them runs.
    "tests/test_unproven.py": RUN
    + "CODE = 'from app import core; core.double(1)'\n\n\n"
    "def test_shell():  # the shell execs python: the same pid, the shell's reads unseen\n"
    "    subprocess.run(f'exec {sys.executable} -c \"{CODE}\"', shell=True, check=True)\n\n\n"
    "def test_reexec():  # the same interpreter, exec'd with other arguments: what ran before\n"
    "    subprocess.run([sys.executable, '-c', CODE + '; import os, sys; '\n"
    "                    'os.execv(sys.executable, [sys.executable, \"-c\", \"pass\"])'],\n"
    "                   check=True)\n\n\n"
    "def test_cleared_env():\n"
    "    subprocess.run([sys.executable, '-c', CODE], env={}, check=True)\n\n\n"
    "def test_killed():\n"
    "    child = subprocess.Popen([sys.executable, '-c', CODE + '; input()'],\n"
    "                             stdin=subprocess.PIPE)\n    child.kill()\n    child.wait()\n\n\n"
    "def test_exit_early():\n"
    "    subprocess.run([sys.executable, '-c', CODE + '; import os; os._exit(0)'],\n"
    "                   check=True)\n\n\n"
    "def test_preexec():\n"
    "    subprocess.run([sys.executable, '-c', CODE], preexec_fn=lambda: None, check=True)\n\n\n"
    "def test_child_network():\n"
    "    subprocess.run([sys.executable, '-c', CODE + '; import socket; s = socket.socket()\\n'\n"
    "                    'try: s.connect((\"127.0.0.1\", 9))\\nexcept OSError: pass'],\n"
    "                   check=True)\n\n\n"
    "def test_late_del():  # a finalizer of the repository's runs after the record\n"
    "    subprocess.run([sys.executable, '-c', 'from app import late; KEEP = late.Late()'],\n"
    "                   check=True)\n\n\n"
    "def test_late_generator():  # closing a suspended generator runs its finally\n"
    "    subprocess.run([sys.executable, '-c', 'from app import late; G = late.gen(); next(G)'],\n"
    "                   check=True)\n\n\n"
    "def test_late_thread():\n"
    "    subprocess.run([sys.executable, '-c', 'from app import late; late.linger()'],\n"
    "                   check=True)\n\n\n"
    "def test_late_logging():  # logging's exit handler, registered first, flushes ours\n"
    "    subprocess.run([sys.executable, '-c', 'import logging; from app import late; '\n"
    "                    'logging.getLogger().addHandler(late.Handler())'], check=True)\n\n\n"
    "def test_reexec_same():  # runs itself again with the very same argv\n"
    "    subprocess.run([sys.executable, '-c', 'import os, sys\\n'\n"
    "                    'if \"AGAIN\" not in os.environ:\\n'\n"
    "                    '    from app import core; core.double(1)\\n'\n"
    "                    '    os.environ[\"AGAIN\"] = \"1\"\\n'\n"
    "                    '    os.execv(sys.executable, sys.orig_argv)'], check=True)\n\n\n"
    "def test_late_stdout():\n"
    "    subprocess.run([sys.executable, '-c', 'import sys; from app import late; '\n"
    "                    'sys.stdout = late.Upper(sys.stdout); print(1)'], check=True)\n\n\n"
    "def test_late_file():\n"
    "    subprocess.run([sys.executable, '-c', 'from app import late; R = late.Report()'],\n"
    "                   check=True)\n\n\n"
    "def test_linked(tmp_path):  # a script of the repository, through a link outside it\n"
    "    (tmp_path / 'run.py').symlink_to(HERE / 'linked.py')\n"
    "    subprocess.run([sys.executable, str(tmp_path / 'run.py')], check=True)\n\n\n"
    "def test_preloaded():  # imported to resolve a warning category, before site runs\n"
    "    import os\n\n    root = str(HERE.parent)\n"
    "    env = {**os.environ, 'PYTHONPATH': os.pathsep.join([root, os.environ['PYTHONPATH']])}\n"
    "    subprocess.run([sys.executable, '-W', 'error::app.late.LateWarning', '-c', CODE],\n"
    "                   env=env, check=True)\n\n\n"
    "def test_thread_first():  # the repository's first code runs in a thread of the child\n"
    "    subprocess.run([sys.executable, '-c', 'import threading\\n'\n"
    "                    'def work():\\n    from app import core; core.double(1)\\n'\n"
    "                    't = threading.Thread(target=work); t.start(); t.join()'],\n"
    "                   check=True)\n\n\n"
    "def test_wrapper(tmp_path):  # a script that execs Python under its own name\n"
    "    wrapper = tmp_path / 'py'\n"
    "    wrapper.write_text(f'#!/bin/bash\\nexec -a \"$0\" {sys.executable} \"$@\"\\n')\n"
    "    wrapper.chmod(0o755)\n"
    "    subprocess.run([str(wrapper), '-c', CODE], check=True)\n\n\n"
    "def test_child_settrace():\n"
    "    subprocess.run([sys.executable, '-c', CODE + '; import sys; sys.settrace(None); '\n"
    "                    'core.triple(1)'],\n"
    "                   check=True)\n\n\n"
    "def test_late_text_del():  # a finalizer the -c text defines calls the repository\n"
    "    subprocess.run([sys.executable, '-c', 'from app import core\\n'\n"
    "                    'class K:\\n    def __del__(self):\\n        core.double(1)\\n'\n"
    "                    'k = K()'], check=True)\n\n\n"
    "def test_late_sink():  # a file object flushed at exit into a class of the repository\n"
    "    subprocess.run([sys.executable, '-c', 'import io, sys; from app import late; '\n"
    "                    'OUT = io.TextIOWrapper(late.Sink()); OUT.write(\"x\")'],\n"
    "                   check=True)\n\n\n"
    "def test_late_partial():  # a __del__ that is no function\n"
    "    subprocess.run([sys.executable, '-c', 'from app import late; P = late.Partial()'],\n"
    "                   check=True)\n\n\n"
    "def test_folder_main():  # python FOLDER: runpy takes __main__ out while tracing starts\n"
    "    subprocess.run([sys.executable, str(HERE.parent / 'tool')], check=True)\n\n\n"
    "def test_child_program():  # ls lists the working folder: no recorder sees it\n"
    "    subprocess.run([sys.executable, '-c', CODE + '; import subprocess; '\n"
    "                    'subprocess.run([\"ls\"], stdout=subprocess.DEVNULL)'], check=True)\n",
}
CLI_TEST = "tests/test_cli.py::test_cli"
TABLE = "tests/test_cli.py::test_table"
DYNAMIC = "tests/test_cli.py::test_dynamic_rate"
LIMIT = "tests/test_cli.py::test_dynamic_limit"
SCRIPT = "tests/test_cli.py::test_script"
NESTED = "tests/test_cli.py::test_nested"
AS_PATH = "tests/test_cli.py::test_path_as_pythonpath"
IN_PROCESS = "tests/test_cli.py::test_in_process"
TRACKER = "tests/test_mp_1_tracker.py::test_mp"
SPAWN = "tests/test_mp_2_spawn.py::test_mp"
UNPROVEN = tuple(f"tests/test_unproven.py::test_{name}" for name in (
    "shell", "reexec", "cleared_env", "killed", "exit_early", "preexec", "child_network",
    "child_program", "late_del", "late_generator", "late_thread", "reexec_same", "late_stdout",
    "late_file", "linked", "preloaded", "thread_first", "wrapper", "child_settrace",
    "late_text_del", "late_sink", "late_partial", "folder_main"))
SERVED = "tests/test_pipe_2_use.py::test_use"
FED = "tests/test_pipe_4_fed.py::test_fed"
FIXTURE_USER = "tests/test_server_1.py::test_asks"
LOGGING = "tests/test_unproven.py::test_late_logging"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GitRepo, str]]:
    yield from recorded_repo(tmp_path_factory, FILES)


def test_a_patch_the_children_did_not_run_skips_them(recorded: tuple[GitRepo, str]) -> None:
    labels = labelled(recorded, "triple", {"app/core.py": CORE.replace("3 * x", "x * 3")})
    assert labels[SCRIPT] == labels[IN_PROCESS] == labels[FIXTURE_USER] == IMPACTED
    assert labels[CLI_TEST] == labels[TABLE] == labels[NESTED] == labels[SPAWN] == SKIP
    assert labels[DYNAMIC] == labels[AS_PATH] == SKIP
    assert labels["tests/test_cli.py::test_no_such_program"] == SKIP


def test_what_a_child_ran_reruns_its_test(recorded: tuple[GitRepo, str]) -> None:
    labels = labelled(recorded, "double", {"app/core.py": CORE.replace("2 * x", "x * 2")})
    assert labels[CLI_TEST] == labels[NESTED] == labels[SPAWN] == labels[AS_PATH] == IMPACTED
    assert labels[TABLE] == labels[SCRIPT] == labels[IN_PROCESS] == SKIP


def test_what_a_child_read_reruns_its_test(recorded: tuple[GitRepo, str]) -> None:
    labels = labelled(recorded, "data", {"data/table.txt": "a 2\n"})
    assert labels[TABLE] == IMPACTED
    assert labels[CLI_TEST] == labels[NESTED] == SKIP
    # A module attribute only the child read, by a name it computed (``core.RATE``),
    # rebound by the patch: the child's watcher saw the read.
    labels = labelled(recorded, "rate", {"app/core.py": CORE.replace("RATE = 2", "RATE = 3")})
    assert labels[DYNAMIC] == IMPACTED
    assert labels[CLI_TEST] == labels[NESTED] == labels[IN_PROCESS] == labels[SCRIPT] == SKIP
    assert labels[LIMIT] == SKIP
    # A module whose reads no watcher saw: every reader of a changed name of it reruns.
    labels = labelled(recorded, "limit", {"app/settings.py": SETTINGS.replace("5", "6")})
    assert labels[LIMIT] == IMPACTED
    assert labels[IN_PROCESS] == labels[SCRIPT] == SKIP


def test_a_script_run_by_its_path_counts_whole_for_its_test_alone(
    recorded: tuple[GitRepo, str],
) -> None:
    """The child ran ``app/tool.py`` as ``__main__``, with no import its watcher saw, so it
    did not see what read the module's names there: any change of the file reruns the test
    that started it. The test that imported the module in-process was watched: a name it
    does not read changes, and it skips (it ran every patch while one list of unwatched
    modules served every test)."""
    tool = dict(FILES)["app/tool.py"]
    labels = labelled(recorded, "tool", {"app/tool.py": tool.replace("LIMIT = 5", "LIMIT = 6")})
    assert labels["tests/test_tool.py::test_run_as_script"] == IMPACTED
    assert labels["tests/test_tool.py::test_width"] == SKIP
    labels = labelled(recorded, "width", {"app/tool.py": tool.replace("WIDTH = 3", "WIDTH = 4")})
    assert labels["tests/test_tool.py::test_width"] == IMPACTED
    assert labels["tests/test_tool.py::test_run_as_script"] == IMPACTED


def test_exit_handlers_of_a_child_are_traced(recorded: tuple[GitRepo, str]) -> None:
    labels = labelled(recorded, "double", {"app/core.py": CORE.replace("2 * x", "x * 2")})
    assert labels[LOGGING] == IMPACTED
    labels = labelled(recorded, "triple", {"app/core.py": CORE.replace("3 * x", "x * 3")})
    assert labels[LOGGING] == SKIP


def test_a_child_that_proves_nothing_stays_incomplete(recorded: tuple[GitRepo, str]) -> None:
    labels = labelled(recorded, "unproven", {"app/core.py": CORE.replace("3 * x", "x * 3")})
    assert {n: labels[n] for n in (*UNPROVEN, TRACKER, SERVED, FED)} == dict.fromkeys(
        (*UNPROVEN, TRACKER, SERVED, FED), ESCALATE)


def test_a_child_whose_tracing_cannot_start_fails_no_test(recorded: tuple[GitRepo, str]) -> None:
    """``python FOLDER``: runpy takes ``__main__`` out of ``sys.modules`` while the first
    module is found, and coverage, starting then, could not: the child went on, its
    recording marked unusable, rather than dying with a traceback."""
    repo, w = recorded
    witness = Store.for_repo(repo.path).load(w)
    assert witness is not None
    entry = witness.tests["tests/test_unproven.py::test_folder_main"]
    assert entry.outcome == "passed" and entry.incomplete


def test_a_data_file_read_through_a_loader_reruns_its_test(
    recorded: tuple[GitRepo, str],
) -> None:
    """Not about children: ``pkgutil.get_data`` reads through the import system's loader,
    whose frames were taken for the import system's own reads."""
    labels = labelled(recorded, "blob", {"app/blob.txt": "y\n"})
    assert labels["tests/test_loader_data.py::test_get_data"] == IMPACTED
    assert labels[IN_PROCESS] == SKIP


def test_nested_recordings_chain_to_the_environment_sitecustomize(tmp_path: Path) -> None:
    """A recorded test that records in turn: two of these folders on a child's path. Each
    ``sitecustomize`` chains past both to the environment's own, once."""
    own = tmp_path / "own"
    own.mkdir()
    (own / "sitecustomize.py").write_text("import os\nos.environ['OWN_SITE'] += 'x'\n")
    outer = children.Following(str(tmp_path))
    inner = children.Following(str(tmp_path))
    try:
        env = {**os.environ, "OWN_SITE": "",
               "PYTHONPATH": os.pathsep.join([inner.folder, outer.folder, str(own)])}
        done = subprocess.run(
            [sys.executable, "-c", "import os; print(os.environ['OWN_SITE'])"],
            env=env, capture_output=True, text=True, check=True)
    finally:
        inner.stop()
        outer.stop()
        inner.remove()
        outer.remove()
    assert (done.stdout, done.stderr) == ("x\n", "")


def test_a_tracked_link_to_the_interpreter_is_the_tests_dependency(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The program a test starts, where it is a file of the repository (a tracked link to
    the interpreter): a patch that points it elsewhere changes what the test runs."""
    with pytest.MonkeyPatch.context() as mp:
        isolate(mp, tmp_path_factory)
        repo = GitRepo.init(tmp_path_factory.mktemp("linked") / "repo")
        repo.files({**{k: FILES[k] for k in (".gitignore", "pyproject.toml", "app/__init__.py",
                                             "app/core.py")},
                    "tests/test_link.py": RUN + "def test_link():\n    subprocess.run(\n"
                    "        [str(HERE.parent / 'bin' / 'python'), '-c', 'import app.core'],\n"
                    "        check=True)\n\n\ndef test_plain():\n    assert True\n"})
        (repo.path / "bin").mkdir()
        (repo.path / "bin" / "python").symlink_to(os.path.realpath(sys.executable))
        w = repo.commit("initial")
        done = run_agentgate("witness", "record", cwd=repo.path)
        assert done.returncode == 0, done.stdout + done.stderr
        witness = Store.for_repo(repo.path).load(w)
        assert witness is not None and not witness.tests["tests/test_link.py::test_link"].incomplete
        repo.git("checkout", "-q", "-f", "-B", "retarget", w)
        (repo.path / "bin" / "python").unlink()
        (repo.path / "bin" / "python").symlink_to("/bin/false")
        repo.commit("retarget")
        labels = {d.nodeid: d.label for d in plan(repo, w).decisions}
    assert labels["tests/test_link.py::test_link"] == IMPACTED
    assert labels["tests/test_link.py::test_plain"] == SKIP
