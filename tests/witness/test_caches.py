"""State across tests: a result one test computed and a later test read from a
``functools.lru_cache`` ran the function's body in the first test only, so a change to the
body skipped the second test, which reads the new result at head (red-team). The recording
empties the repository's caches as each test begins, but the one entry of a function of no
arguments, which is computed once and charged to every context that reads it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentgate.witness.select import ESCALATE, IMPACTED, SKIP
from tests.support.git_repo import GitRepo
from tests.witness.recorded import labelled, recorded_repo

CFG = ("import functools\nfrom functools import lru_cache\n\n\n"
       "@functools.lru_cache\ndef rate():\n    return 2\n\n\n"
       "@lru_cache(maxsize=8)\ndef scaled(x):\n    return x * 10\n\n\n"
       "@functools.cache\ndef name():\n    return 'shop'\n\n\n"
       "def other():\n    return 1\n")
FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "pyproject.toml": "[tool.agentgate]\nshadow_percent = 0\n",
    "app/__init__.py": "",
    "app/cfg.py": CFG,
    # file order: every "first" test fills the caches the "second" one reads
    "tests/test_cfg.py": "from app import cfg\n\nWANT = (2, 10, 'shop')\n\n\n"
    "def test_first():\n    assert (cfg.rate(), cfg.scaled(1), cfg.name()) == WANT\n\n\n"
    "def test_second():\n    assert (cfg.rate(), cfg.scaled(1), cfg.name()) == WANT\n\n\n"
    "def test_other():\n    assert cfg.other() == 1\n",
}
BOTH = ("tests/test_cfg.py::test_first", "tests/test_cfg.py::test_second")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GitRepo, str]]:
    yield from recorded_repo(tmp_path_factory, FILES)


@pytest.mark.parametrize(("old", "new"), [
    ("return 2", "return 3"),  # @functools.lru_cache
    ("return x * 10", "return x * 11"),  # @lru_cache(maxsize=8), imported by name
    ("return 'shop'", "return 'store'"),  # @functools.cache
], ids=["lru_cache", "lru_cache-args", "cache"])
def test_a_cached_function_reruns_every_test_that_reads_it(
    recorded: tuple[GitRepo, str], old: str, new: str, request: pytest.FixtureRequest
) -> None:
    branch = "cached-" + request.node.callspec.id
    labels = labelled(recorded, branch, {"app/cfg.py": CFG.replace(old, new)})
    assert {n: labels[n] for n in BOTH} == dict.fromkeys(BOTH, IMPACTED)
    assert labels["tests/test_cfg.py::test_other"] == SKIP


def test_a_function_no_test_reads_from_a_cache_stays_with_its_callers(
    recorded: tuple[GitRepo, str],
) -> None:
    labels = labelled(recorded, "other", {"app/cfg.py": CFG.replace("return 1", "return 0 + 1")})
    assert {n: labels[n] for n in BOTH} == dict.fromkeys(BOTH, SKIP)
    assert labels["tests/test_cfg.py::test_other"] == IMPACTED


# A function of no arguments keeps its one entry while recording (Markdown's tests each
# rescanned every installed distribution when it was emptied): computed once, in a context
# of its own, charged to every context that reads it -- a test, a module's import, a shared
# fixture -- with what that computation was flagged for (native code here).
ONCE = ("import ctypes\nimport functools\n\n\n"
        "def base():\n    return 2\n\n\n"
        "@functools.cache\ndef rate():\n    return base()\n\n\n"
        "@functools.lru_cache(maxsize=None)\ndef native():\n    ctypes.CDLL(None)\n"
        "    return 1\n\n\n"
        "def other():\n    return 1\n\n\n"
        "@functools.cache\ndef order():\n    return 0\n")
ONCE_FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "pyproject.toml": "[tool.agentgate]\nshadow_percent = 0\n",
    "app/__init__.py": "",
    "app/once.py": ONCE,
    "app/prices.py": "from app import once\n\nRATE = once.rate()\n",
    "tests/conftest.py": "import pytest\n\nfrom app import once\n\n\n"
    "@pytest.fixture(scope='module')\ndef rate_now():\n    return once.rate()\n\n\n"
    "def pytest_collection_modifyitems(items):\n"
    "    items.sort(key=lambda item: once.order())\n",
    # file order: test_computes fills both entries, the others read them
    "tests/test_once.py": "from app import once\n\n\n"
    "def test_computes():\n    assert (once.rate(), once.native()) == (2, 1)\n\n\n"
    "def test_reads():\n    assert once.rate() == 2\n\n\n"
    "def test_imports_a_reader():\n    from app import prices\n    assert prices.RATE == 2\n\n\n"
    "def test_uses_the_reader():\n    from app import prices\n    assert prices.RATE - 1 == 1\n\n\n"
    "def test_fixture_reads(rate_now):\n    assert rate_now == 2\n\n\n"
    "def test_native():\n    assert once.native() == 1\n\n\n"
    "def test_other():\n    assert once.other() == 1\n",
}
READERS = tuple(f"tests/test_once.py::test_{n}" for n in (
    "reads", "imports_a_reader", "uses_the_reader", "fixture_reads"))


@pytest.fixture(scope="module")
def once_recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GitRepo, str]]:
    yield from recorded_repo(tmp_path_factory, ONCE_FILES)


def test_an_entry_computed_once_reruns_every_context_that_read_it(
    once_recorded: tuple[GitRepo, str],
) -> None:
    labels = labelled(once_recorded, "base", {"app/once.py": ONCE.replace(
        "return 2", "return 3")})
    assert {n: labels[n] for n in READERS} == dict.fromkeys(READERS, IMPACTED)
    assert labels["tests/test_once.py::test_other"] == SKIP
    # What the computation was flagged for counts for its readers as for the test it ran in.
    assert labels["tests/test_once.py::test_native"] == ESCALATE
    assert labels["tests/test_once.py::test_computes"] == ESCALATE


def test_an_entry_computed_once_leaves_the_other_changes_to_their_callers(
    once_recorded: tuple[GitRepo, str],
) -> None:
    labels = labelled(once_recorded, "other", {"app/once.py": ONCE.replace(
        "def other():\n    return 1", "def other():\n    return 0 + 1")})
    assert {n: labels[n] for n in READERS} == dict.fromkeys(READERS, SKIP)
    assert labels["tests/test_once.py::test_other"] == IMPACTED


def test_an_entry_computed_while_collecting_counts_for_every_test(
    once_recorded: tuple[GitRepo, str],
) -> None:
    labels = labelled(once_recorded, "order", {"app/once.py": ONCE.replace(
        "return 0\n", "return 0 * 2\n")})
    assert set(labels.values()) <= {IMPACTED, ESCALATE}
    assert labels["tests/test_once.py::test_other"] == IMPACTED


# Hand-written caches: a module dict, a closure's WeakKeyDictionary (click's stream cache), a
# class attribute, a mutable default, a dict on a module-level instance. Each "compute"
# function runs only when its cache misses.
HAND = '''import weakref

_RATES = {}


def load_rate(region):
    return {"eu": 20, "us": 7}[region]


def rate(region):
    if region not in _RATES:
        _RATES[region] = load_rate(region)
    return _RATES[region]


def _cached(make):
    cache = weakref.WeakKeyDictionary()

    def get(key):
        found = cache.get(key)
        if found is None:
            found = cache[key] = make(key)
        return found
    return get


class Key:
    name = "k"


KEY = Key()


def wrap(key):
    return "wrapped-" + key.name


wrapped = _cached(wrap)


def measure(n):
    return n * 2


class Table:
    _memo = {}

    @classmethod
    def width(cls, n):
        if n not in cls._memo:
            cls._memo[n] = measure(n)
        return cls._memo[n]


def describe(n):
    return "#%d" % n


def label(n, _seen={}):
    if n not in _seen:
        _seen[n] = describe(n)
    return _seen[n]


def resolve(name):
    return name.upper()


class Registry:
    def __init__(self):
        self.found = {}

    def lookup(self, name):
        if name not in self.found:
            self.found[name] = resolve(name)
        return self.found[name]


REGISTRY = Registry()


class _Getter:  # dateutil's tests: ``gettz = staticmethod(tz.gettz)``, an instance
    def __call__(self, name):
        return name


class Tools:
    get = staticmethod(_Getter())


class Touchy(dict):  # measuring it runs the repository's code, which raises
    def __len__(self):
        raise RuntimeError("not now")


TOUCHY = Touchy()


_LOADED = []


def read_scale():
    return 4


def scale():  # red-team: a memo in a module-level list
    if not _LOADED:
        _LOADED.append(read_scale())
    return _LOADED[0]


_TARIFF = None


def read_tariff():
    return 7


def tariff():  # a memo in a module global the function rebinds
    global _TARIFF
    if _TARIFF is None:
        _TARIFF = read_tariff()
    return _TARIFF


def load_settings():
    return "strict"


import functools


def read_currency():
    return "EUR"


class Shop:
    @functools.cached_property
    def currency(self):  # computed by one test, read by the next from SHOP's namespace
        return read_currency()


SHOP = Shop()


class Settings:  # a singleton made on first use, in a class attribute
    _instance = None

    @classmethod
    def get(cls):
        if cls._instance is None:
            cls._instance = load_settings()
        return cls._instance
'''
# What legitimately fills an empty container for the tests after it: a session fixture, and
# a module registering itself as a test imports it.
PLUGINS = ("HANDLERS = {}\nKINDS = {}\nORDER = []\nLAST = None\n\n\n"
           "def register(name, handler):\n    global LAST\n    HANDLERS[name] = handler\n"
           "    ORDER.append(name)\n    LAST = name\n")
CSV = "from app import plugins\n\nplugins.KINDS['csv'] = ','\n"
HAND_FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "pyproject.toml": "[tool.agentgate]\nshadow_percent = 0\n",
    "app/__init__.py": "",
    "app/hand.py": HAND,
    "app/plugins.py": PLUGINS,
    "app/kinds_csv.py": CSV,
    "tests/conftest.py": "import pytest\n\nfrom app import plugins\n\n\n"
    "@pytest.fixture(scope='session')\ndef handlers():\n"
    "    plugins.register('x', len)\n    return plugins.HANDLERS\n",
    # file order: "first" fills every cache "second" reads
    "tests/test_hand.py": "from app import hand\n\n"
    "WANT = (20, 'wrapped-k', 6, '#3', 'NAME', 4, 7, 'strict', 'EUR')\n\n\n"
    "def read():\n    return (hand.rate('eu'), hand.wrapped(hand.KEY), hand.Table.width(3),\n"
    "            hand.label(3), hand.REGISTRY.lookup('name'), hand.scale(), hand.tariff(),\n"
    "            hand.Settings.get(), hand.SHOP.currency)\n\n\n"
    "def test_first():\n    assert read() == WANT\n\n\n"
    "def test_second():\n    assert read() == WANT\n",
    "tests/test_plugins.py": "from app import plugins\n\n\n"
    "def test_session_fixture(handlers):\n    assert handlers['x']('ab') == 2\n\n\n"
    "def test_session_fixture_again(handlers):\n    assert plugins.HANDLERS['x']('abc') == 3\n"
    "    assert plugins.ORDER == ['x'] and plugins.LAST == 'x'\n\n\n"
    "def test_lazy_import():\n    import app.kinds_csv  # noqa: F401\n"
    "    assert plugins.KINDS['csv'] == ','\n\n\n"
    "def test_lazy_import_again():\n    import app.kinds_csv  # noqa: F401\n"
    "    assert plugins.KINDS == {'csv': ','}\n",
}
HAND_BOTH = ("tests/test_hand.py::test_first", "tests/test_hand.py::test_second")
KEPT = tuple(f"tests/test_plugins.py::test_{n}" for n in (
    "session_fixture", "session_fixture_again", "lazy_import", "lazy_import_again"))


@pytest.fixture(scope="module")
def hand_recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GitRepo, str]]:
    yield from recorded_repo(tmp_path_factory, HAND_FILES)


@pytest.mark.parametrize(("old", "new"), [
    ('{"eu": 20, "us": 7}', '{"eu": 21, "us": 7}'),  # a module-level dict
    ('"wrapped-" + key.name', '"wrap-" + key.name'),  # a closure's WeakKeyDictionary
    ("return n * 2", "return n * 3"),  # a class attribute
    ('"#%d" % n', '"no. %d" % n'),  # a mutable default
    ("name.upper()", "name.lower()"),  # a dict on a module-level instance
    ("return 4", "return 5"),  # a module-level list
    ("return 7", "return 8"),  # a module global a function rebinds
    ('return "strict"', 'return "lenient"'),  # a class attribute a classmethod rebinds
    ('return "EUR"', 'return "USD"'),  # a cached_property of a module-level instance
], ids=["module-dict", "closure-weak", "class-attribute", "default", "instance", "module-list",
        "global", "class-singleton", "cached-property"])
def test_a_hand_written_cache_reruns_every_test_that_reads_it(
    hand_recorded: tuple[GitRepo, str], old: str, new: str, request: pytest.FixtureRequest
) -> None:
    branch = "hand-" + request.node.callspec.id
    labels = labelled(hand_recorded, branch, {"app/hand.py": HAND.replace(old, new)})
    assert {n: labels[n] for n in HAND_BOTH} == dict.fromkeys(HAND_BOTH, IMPACTED)
    assert {n: labels[n] for n in KEPT} == dict.fromkeys(KEPT, SKIP)


def test_what_a_shared_fixture_or_an_import_registered_stays_for_later_tests(
    hand_recorded: tuple[GitRepo, str],
) -> None:
    """The twin: containers a session fixture or a module's import filled are not emptied
    before the next test (it would fail while recording, and always run)."""
    labels = labelled(hand_recorded, "unrelated", {"app/hand.py": HAND + "\nEXTRA = 1\n"})
    assert {n: labels[n] for n in KEPT} == dict.fromkeys(KEPT, SKIP)
    changed = labelled(hand_recorded, "register", {"app/plugins.py": PLUGINS.replace(
        "HANDLERS[name] = handler", "HANDLERS[name] = handler or handler")})
    assert changed["tests/test_plugins.py::test_session_fixture_again"] == IMPACTED
