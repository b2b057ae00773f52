"""A module-level change judged by the names it rebinds (``witness.rebind``), on a real
repository with a real recording: each way a changed name reaches a test is played as a
patch the test must still run for (an attack on the rule when that way is ignored), next to
the tests that read nothing changed and are skipped.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest

from agentgate.core import config
from agentgate.witness import bindings, depgraph, rebind, store
from agentgate.witness.blocks import MODULE
from agentgate.witness.patch import compute
from agentgate.witness.rebind import REBOUND
from agentgate.witness.select import ESCALATE, IMPACTED, SKIP, WitnessPlan
from tests.support.git_repo import GitRepo
from tests.witness.recorded import patch, plan, recorded_repo

LIMITS = '''"""Limits."""
LIMIT = 3
OTHER = 10


class Policy:
    RETRIES = 2

    def retries(self):
        return self.RETRIES


def clamp(x):
    return min(x, LIMIT)


def other():
    return OTHER
'''
DOC = '''"""Documented.

>>> 1 + 1
2
"""


def add(a, b):
    return a + b
'''
# Stores into app.knobs.ALIASED through names the module binds itself (red-team: judged
# stores into objects it made, binding-only, so ALIASED's readers were skipped), and into
# tables it did make.
THROUGH = """from app import knobs
from app.knobs import ALIASED

_t = ALIASED
_t['a'] = 1
_all = [knobs.ALIASED]
_all[0]['b'] = 1
OWN = {}
OWN['t'] = knobs.ALIASED
OWN['t']['c'] = 1
MINE = {}
MINE['x'] = [1]
MINE['x'][0] = 1


def _fill(key):
    t = knobs.ALIASED
    t[key] = 1
    return key


def _append(key):
    own = []
    own.append(knobs.ALIASED)
    own[0][key] = 1
    return key


def _mine(key):
    mine = {}
    mine[key] = [1]
    mine[key][0] = 2
    return len(mine)


FILLED = _fill('d')
APPENDED = _append('e')
MINE_SIZE = _mine('m')
"""
FILES = {
    ".gitignore": "__pycache__/\n.pytest_cache/\n",
    "pyproject.toml": "[tool.pytest.ini_options]\ntestpaths = [\"tests\", \"app\"]\n"
                      "addopts = \"--doctest-modules\"\n",
    "app/doc.py": DOC,
    "app/__init__.py": "",
    "app/limits.py": LIMITS,
    "app/derived.py": "from app.limits import LIMIT\n\nDOUBLE = LIMIT * 2\n\n\n"
                      "def double():\n    return DOUBLE\n",
    "app/defaults.py": "from app.limits import LIMIT\n\n\n"
                       "def cap(x, limit=LIMIT):\n    return min(x, limit)\n",
    "app/star.py": "from app.limits import *  # noqa: F403\n",
    "app/registry.py": "REGISTRY = {}\n\n\n"
                       "def add(key, value):\n    REGISTRY[key] = value\n",
    "app/plugins.py": "from app import registry\nfrom app.limits import OTHER\n\n"
                      "registry.add('other', OTHER)\n",
    "tests/test_clamp.py": "from app.limits import clamp\n\n\n"
                           "def test_clamp():\n    assert clamp(5) == 3\n",
    "tests/test_other.py": "from app.limits import other\n\n\n"
                           "def test_other():\n    assert other() == 10\n",
    "tests/test_derived.py": "from app.derived import double\n\n\n"
                             "def test_double():\n    assert double() == 6\n",
    "tests/test_attr.py": "import app.limits\n\n\n"
                          "def test_attr():\n    assert app.limits.LIMIT == 3\n",
    "tests/test_dynamic.py": "import app.limits\n\n\n"
                             "def test_dynamic():\n    name = 'LIM' + 'IT'\n"
                             "    assert getattr(app.limits, name) == 3\n",
    # Reads no code of the repository spells: a library's (``OUTSIDE``), the standard
    # library's on a test's behalf, a whole namespace, evaluated text.
    "tests/test_library.py": "import sys\nfrom pathlib import Path\n\n"
                             "sys.path.insert(0, str(Path(__file__).parents[2] / 'outside'))\n"
                             "import settingslib  # noqa: E402\n\n\n"
                             "def test_library():\n"
                             "    assert settingslib.setting('app.limits', 'LIMIT') == 3\n",
    "tests/test_resolve.py": "import pkgutil\n\n\n"
                             "def test_resolve():\n"
                             "    assert pkgutil.resolve_name('app.limits:LIMIT') == 3\n",
    "tests/test_namespace.py": "import app.limits\n\n\n"
                               "def test_namespace():\n    assert 'LIMIT' in vars(app.limits)\n",
    "tests/test_evaluated.py": "import app.limits  # noqa: F401\n\n\n"
                               "def test_evaluated():\n"
                               "    assert eval('app.limits.' + 'LIMIT') == 3\n",
    # Text evaluated in the test module's own globals: what it reads of a module object is
    # seen as it happens; what it reads by name is the module's own namespace.
    "tests/test_fromtext.py": "import app.limits  # noqa: F401\n\n\n"
                          "def make():\n    scratch = {}\n"
                          "    exec('def f(x):\\n    return x', globals(), scratch)\n"
                          "    return scratch['f']\n\n\n"
                          "def test_made():\n    assert make()(2) == 2\n",
    "tests/test_evalname.py": "from app.limits import LIMIT  # noqa: F401\n\n\n"
                              "def test_evalname():\n    assert eval('LIM' + 'IT') == 3\n",
    "tests/test_elsewhere.py": "import app.limits\n\n\n"
                               "def test_elsewhere():\n"
                               "    assert eval('LIMIT', dict(vars(app.limits))) == 3\n",
    # Lookups past the module's class, which no recording sees: in the test's own code, in
    # evaluated text, and in a code object compiled under a repository file's name.
    "tests/test_bypass.py": "import inspect\nfrom inspect import getattr_static\n"
                            "from inspect import getattr_static as gs\n\n"
                            "import app.limits\n\n\n"
                            "def test_static_alias():\n"
                            "    assert gs(app.limits, 'LIMIT') == 3\n\n\n"
                            "def test_static_name():\n"
                            "    assert getattr_static(app.limits, 'LIMIT') == 3\n\n\n"
                            "def test_bypass():\n"
                            "    assert object.__getattribute__(app.limits, 'LIMIT') == 3\n\n\n"
                            "def test_static():\n"
                            "    assert inspect.getattr_static(app.limits, 'LIMIT') == 3\n",
    "tests/test_evalbypass.py": "import app.limits  # noqa: F401\n\n\n"
                                "def test_evalbypass():\n"
                                "    assert eval(\"object.__getattribute__(app.limits, 'LIMIT')\")"
                                " == 3\n",
    "tests/test_compiled.py": "import app.limits  # noqa: F401\n\n\n"
                              "def test_compiled():\n"
                              "    code = compile('assert app.limits.LIMIT == 3', 'app/fake.py', "
                              "'exec')\n    exec(code, globals())\n",
    # A class of a library's base (``OUTSIDE``): making it hands it to the library.
    "app/items.py": "from reglib import Model\n\n\nclass Item(Model):\n    size = 1\n",
    "tests/test_items.py": "import sys\nfrom pathlib import Path\n\n"
                           "sys.path.insert(0, str(Path(__file__).parents[2] / 'outside'))\n"
                           "import app.items  # noqa: E402,F401\nimport reglib  # noqa: E402\n\n\n"
                           "def test_items():\n    assert reglib.sizes()['Item'] == 1\n",
    # The same, its base made by a call to the library (``Base = declarative_base()``).
    "app/made.py": "from reglib import make_base\n\nBase = make_base()\n\n\n"
                   "class Thing(Base):\n    size = 1\n",
    "tests/test_made.py": "import sys\nfrom pathlib import Path\n\n"
                          "sys.path.insert(0, str(Path(__file__).parents[2] / 'outside'))\n"
                          "import app.made  # noqa: E402,F401\nimport reglib  # noqa: E402\n\n\n"
                          "def test_made():\n    import time\n\n"
                          "    time.sleep(0.05)  # not the quickest importer\n"
                          "    assert reglib.sizes()['Thing'] == 1\n",
    "tests/test_made_imported.py": "import sys\nfrom pathlib import Path\n\n"
                                   "sys.path.insert(0, str(Path(__file__).parents[2] / 'outside'))"
                                   "\nimport app.made  # noqa: E402,F401\n\n\n"
                                   "def test_made_imported():\n    pass\n",
    "tests/test_items_imported.py": "import sys\nfrom pathlib import Path\n\n"
                                    "sys.path.insert(0, str(Path(__file__).parents[2] / 'outside'))"
                                    "\nimport app.items  # noqa: E402,F401\n\n\n"
                                    "def test_imported():\n    pass\n",
    # A module with a class of its own (a lazy module's trick): its reads cannot be watched.
    "app/own_class.py": "import sys\nimport types\n\nFLAG = 1\nOTHER_FLAG = 2\n\n\n"
                        "class _Module(types.ModuleType):\n    pass\n\n\n"
                        "sys.modules[__name__].__class__ = _Module\n",
    "tests/test_own_class.py": "from app import own_class\n\n\n"
                               "def test_own_class():\n    assert own_class.OTHER_FLAG == 2\n",
    # A module ``__getattr__`` (PEP 562) that warns for its caller: run inside a watched
    # lookup, the warning would name the lookup's frame and the test's check fail while
    # recording (mutation benchmark round 6, jsonschema): such a module is left unwatched.
    "app/lazy.py": "import warnings\n\nFLAG = 1\nOTHER_FLAG = 2\n\n\n"
                   "def __getattr__(name):\n    if name == 'OLD':\n"
                   "        warnings.warn('OLD is gone', DeprecationWarning, stacklevel=2)\n"
                   "        return 1\n    raise AttributeError(name)\n",
    "tests/test_lazy.py": "import warnings\n\nfrom app import lazy\n\n\n"
                          "def test_lazy_warns_for_its_caller():\n"
                          "    with warnings.catch_warnings(record=True) as caught:\n"
                          "        warnings.simplefilter('always')\n"
                          "        assert lazy.OLD == 1\n"
                          "    assert [w.filename for w in caught] == [__file__]\n\n\n"
                          "def test_lazy_other():\n    assert lazy.OTHER_FLAG == 2\n",
    "tests/test_star.py": "from app.star import LIMIT as L\n\n\n"
                          "def test_star():\n    assert L == 3\n",
    "tests/test_cap.py": "from app.defaults import cap\n\n\n"
                         "def test_cap():\n    assert cap(9) == 3\n",
    "tests/test_policy.py": "from app.limits import Policy\n\n\n"
                            "def test_retries():\n    assert Policy().retries() == 2\n",
    # Not empty as the first test begins: a table, which the recording leaves as tests fill
    # it (``carriers``), so the second test reads what the first made.
    "app/cache.py": "_SEEN = [None]\n\n\ndef remember(p):\n    _SEEN.append(p)\n\n\n"
                    "def recall():\n    return _SEEN[-1]\n",
    "tests/test_cache.py": "from app.cache import recall, remember\nfrom app.limits import Policy\n"
                           "\n\ndef test_a_remember():\n    remember(Policy())\n\n\n"
                           "def test_b_recall():\n    assert recall().RETRIES == 2\n",
    # The module handed to a helper: no import names the receiver, only the read shows it.
    # Two tests make the same read from the same code: each is charged with it.
    "tests/test_handed.py": "import app.limits\n\n\ndef read(m):\n    return m.LIMIT\n\n\n"
                            "def test_handed():\n    assert read(app.limits) == 3\n\n\n"
                            "def test_handed_again():\n    assert read(app.limits) == 3\n",
    # A library's module with an attribute of the changed name, next to a use of app.limits.
    "tests/test_foreign.py": "import sys\nfrom pathlib import Path\n\n"
                             "sys.path.insert(0, str(Path(__file__).parents[2] / 'outside'))\n"
                             "import verlib  # noqa: E402\n\n"
                             "from app.limits import other  # noqa: E402\n\n\n"
                             "def test_foreign():\n"
                             "    assert verlib.LIMIT == 99 and other() == 10\n",
    # A constructor that only sets its instance's attributes: a module-level call of it
    # with a changed value rebinds what it binds. One whose attribute store runs a setter
    # that registers the value elsewhere keeps the module rule.
    "app/box.py": "class Box(object):\n    def __init__(self, value):\n"
                  "        self.value = value\n",
    "app/boxes.py": "from app.box import Box\nfrom app.limits import LIMIT\n\n"
                    "BOXED = Box(LIMIT)\nPLAIN = Box(1)\n",
    "app/regbox.py": "_ALL = []\n\n\nclass RegBox:\n"
                     "    def __init__(self, value):\n        self.value = value\n\n"
                     "    @property\n    def value(self):\n        return self._value\n\n"
                     "    @value.setter\n    def value(self, v):\n        self._value = v\n"
                     "        _ALL.append(v)\n\n\n"
                     "def total():\n    return sum(_ALL)\n",
    "app/regboxes.py": "from app.limits import LIMIT\nfrom app.regbox import RegBox\n\n"
                       "KEPT = RegBox(LIMIT)\n",
    # A plain constructor replaced after the class (``PBox.__init__ = _init``).
    "app/patchedbox.py": "from app import registry\n\n\nclass PBox:\n"
                         "    def __init__(self, value):\n        self.value = value\n\n\n"
                         "def _init(self, value):\n    self.value = value\n"
                         "    registry.add('pbox', value)\n\n\nPBox.__init__ = _init\n",
    "app/pboxes.py": "from app.limits import LIMIT\nfrom app.patchedbox import PBox\n\n"
                     "KEPT = PBox(LIMIT)\n",
    "tests/test_pbox.py": "import app.pboxes  # noqa: F401\nfrom app import registry\n\n\n"
                          "def test_pbox():\n    assert registry.REGISTRY['pbox'] == 3\n",
    # A library's callable whose name and module's name a pure function of the repository
    # shares (``app/vendor/somelib.py``): the library's registers what it is called with.
    "app/vendor/__init__.py": "",
    "app/vendor/somelib.py": "from app.limits import OTHER  # noqa: F401\n\n\n"
                             "def make(value):\n    return value\n",
    "app/libmade.py": "from somelib import make\n\nfrom app.limits import LIMIT\n\n"
                      "KEPT = make(LIMIT)\n",
    "tests/test_libmade.py": "import sys\nfrom pathlib import Path\n\n"
                             "sys.path.insert(0, str(Path(__file__).parents[2] / 'outside'))\n"
                             "import app.libmade  # noqa: E402,F401\n"
                             "import app.vendor.somelib  # noqa: E402,F401\n"
                             "import somelib  # noqa: E402\n\n\n"
                             "def test_libmade():\n    assert somelib.MADE == [3]\n",
    "tests/test_boxes.py": "from app.boxes import BOXED, PLAIN\n\n\n"
                           "def test_boxed():\n    assert BOXED.value == 3\n\n\n"
                           "def test_plain():\n    assert PLAIN.value == 1\n",
    "tests/test_regbox.py": "import app.regboxes  # noqa: F401\nfrom app.regbox import total\n\n\n"
                            "def test_total():\n    assert total() == 3\n",
    # Module-level code listing a standard-library module, or its own namespace, next to
    # a registration: no changed name is read there; with one of its own, it is.
    "app/listing.py": "import json\n\nfrom app import registry\n"
                      "from app.limits import OTHER  # noqa: F401\n\n"
                      "registry.add('json', len(vars(json)))\n"
                      "registry.add('own', len(globals()))\n"
                      "locals().update({'json_' + k: 1 for k in vars(json)})\n",
    # A package's module named like the standard library's hides nothing (``app.json``);
    # a top-level one does (``colorsys.py``: ``import colorsys`` gets the repository's), and
    # so does a package's whose folder the project puts on sys.path (vendored/sched.py).
    "app/json.py": "KIND = 'app'\n",
    "tests/test_pkgjson.py": "from app import json as app_json\n\n\n"
                             "def test_pkgjson():\n    assert app_json.KIND == 'app'\n",
    "colorsys.py": "SHADE = 3\n",
    "app/shading.py": "import colorsys\n\nfrom app import registry\n\n"
                      "registry.add('shade', vars(colorsys).get('SHADE'))\n",
    "tests/test_shading.py": "import app.shading  # noqa: F401\nfrom app import registry\n\n\n"
                             "def test_shading():\n    assert registry.REGISTRY['shade'] == 3\n",
    # A helper that tunes another module when imported (while test_a_tuner.py is collected):
    # the tests of another file read what it set.
    "app/knobs.py": "SPEED = 1\nOTHER_KNOB = 5\nTABLE = {}\nALIASED = {}\n",
    "app/through.py": THROUGH,
    "app/filler.py": "from app import knobs\n\nknobs.TABLE['k'] = 1\n",
    "app/tuner.py": "from app import knobs\n\nknobs.SPEED = 2\n",
    "app/retuner.py": "from app import knobs\n\nname = 'OTHER' + '_KNOB'\n"
                      "setattr(knobs, name, 5)\n",
    "tests/test_a_tuner.py": "import app.through  # noqa: F401\n"
                             "import app.filler  # noqa: F401\nimport app.retuner  # noqa: F401\n"
                             "import app.tuner  # noqa: F401\n\n\n"
                             "def test_tuner():\n    pass\n",
    "tests/test_knobs.py": "import app.knobs\n\n\n"
                           "def test_knobs():\n    assert app.knobs.SPEED == 2\n\n\n"
                           "def test_other_knob():\n    assert app.knobs.OTHER_KNOB == 5\n\n\n"
                           "def test_table():\n    assert app.knobs.TABLE == {'k': 1}\n",
    # A user of app.through slower than test_tuner: not the one a binding-only change that
    # may raise runs.
    "tests/test_through.py": "import time\n\nimport app.knobs\nimport app.through  # noqa: F401\n"
                             "\n\ndef test_aliased():\n    time.sleep(0.05)\n"
                             "    assert app.knobs.ALIASED['a'] == 1\n",
    "vendored/__init__.py": "",
    "vendored/sched.py": "PERIOD = 3\n",
    "tests/conftest.py": "import os\nimport sys\n\n"
                         "sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', "
                         "'vendored'))\n",
    "app/scheduling.py": "import sched\n\nfrom app import registry\n\n"
                         "registry.add('period', vars(sched).get('PERIOD'))\n",
    "tests/test_scheduling.py": "import app.scheduling  # noqa: F401\nfrom app import registry\n"
                                "\n\ndef test_scheduling():\n"
                                "    assert registry.REGISTRY['period'] == 3\n",
    "app/own_listing.py": "from app import registry\nfrom app.limits import LIMIT  # noqa: F401\n\n"
                          "registry.add('own_limit', globals()['LIMIT'])\n",
    "tests/test_listing.py": "import app.listing  # noqa: F401\nfrom app import registry\n\n\n"
                             "def test_listing():\n    assert registry.REGISTRY['json'] > 0\n",
    "tests/test_own_listing.py": "import app.own_listing  # noqa: F401\nfrom app import registry\n"
                                 "\n\ndef test_own_listing():\n"
                                 "    assert registry.REGISTRY['own_limit'] == 3\n",
    # Whole namespaces read at run time: one holding the changed name (re-exported by a star
    # import), one without it.
    "tests/test_spaces.py": "import app.kinds\nimport app.star\nfrom app.limits import other\n\n\n"
                            "def test_star_space():\n    assert 'LIMIT' in vars(app.star)\n\n\n"
                            "def test_kinds_space():\n"
                            "    assert 'Fast' in vars(app.kinds) and other() == 10\n",
    # Module-level reads through a name that holds the module: an alias, the namespace.
    "app/aliased.py": "import app.limits\n\nm = app.limits\nALIASED = m.LIMIT + 0\n",
    "app/spaced.py": "import app.limits  # noqa: F401\n\n"
                     "FROM_SPACE = globals()['app'].limits.LIMIT\n"
                     "FROM_VARS = vars(globals()['app'].limits)['LIMIT']\n",
    "tests/test_aliased.py": "from app.aliased import ALIASED\n\n\n"
                             "def test_aliased():\n    assert ALIASED == 3\n",
    "tests/test_spaced.py": "from app.spaced import FROM_SPACE, FROM_VARS\n\n\n"
                            "def test_spaced():\n    assert FROM_SPACE == 3\n\n\n"
                            "def test_spaced_vars():\n    assert FROM_VARS == 3\n",
    "tests/test_unrelated.py": "import json\n\n\n"
                               "def test_unrelated():\n    assert not hasattr(json, 'LIMIT')\n",
    "app/tables.py": "from app import registry\n\n\ndef _build():\n    return {'x': 1}\n\n\n"
                     "registry.add('built', _build())\n",
    "tests/test_built.py": "import app.tables  # noqa: F401\nfrom app import registry\n\n\n"
                           "def test_built():\n    assert registry.REGISTRY['built'] == {'x': 1}\n",
    "app/base.py": "class Base:\n    KIND = 'base'\n",
    "app/kinds.py": "from app.base import Base\n\n\nclass Fast(Base):\n    SPEED = 'fast'\n\n\n"
                    "class Slow(Base):\n    KIND = 'slow'\n\n\n"
                    "def fast_kind():\n    return Fast.SPEED\n",
    "app/plugin.py": "REGISTRY = {}\n\n\nclass Plugin:\n"
                     "    def __init_subclass__(cls, **kw):\n"
                     "        super().__init_subclass__(**kw)\n"
                     "        REGISTRY[cls.__name__] = dict(cls.__annotations__)\n",
    "app/alpha.py": "from app.plugin import Plugin\n\n\nclass Alpha(Plugin):\n"
                    "    size: int = 1\n",
    "tests/test_kinds.py": "from app.kinds import Slow, fast_kind\n\n\n"
                           "def test_fast():\n    assert fast_kind() == 'fast'\n\n\n"
                           "def test_slow():\n    assert Slow.KIND == 'slow'\n",
    "tests/test_plugins.py": "import app.alpha  # noqa: F401\nfrom app.plugin import REGISTRY\n\n\n"
                             "def test_names():\n"
                             "    assert REGISTRY == {'Alpha': {'size': int}}\n",
    "tests/test_local.py": "def test_local():\n    from app.limits import LIMIT\n\n"
                           "    assert LIMIT == 3\n",
    "tests/test_param.py": "import pytest\n\nfrom app.limits import LIMIT\n\n\n"
                           "@pytest.mark.parametrize('n', [LIMIT])\n"
                           "def test_param(n):\n    assert n == 3\n",
    "tests/test_registry.py": "import app.plugins  # noqa: F401\nfrom app import registry\n\n\n"
                              "def test_registry():\n"
                              "    assert registry.REGISTRY['other'] == 10\n",
}
# Libraries installed outside the tree (no code of theirs is the repository's): one reads a
# module's names by getattr, like a settings loader; one keeps every subclass of its base
# class, like an ORM's models, and reads what the class holds with no name of it.
OUTSIDE = {
    "settingslib.py": "import importlib\n\n\n"
                      "def setting(module, name):\n"
                      "    return getattr(importlib.import_module(module), name)\n",
    "verlib.py": "LIMIT = 99\n",
    "somelib.py": "MADE = []\n\n\ndef make(value):\n    MADE.append(value)\n    return value\n",
    "reglib.py": "KEPT = []\n\n\nclass Model:\n"
                 "    def __init_subclass__(cls, **kw):\n"
                 "        super().__init_subclass__(**kw)\n"
                 "        KEPT.append(cls)\n\n\n"
                 "def make_base():\n    return type('Made', (Model,), {})\n\n\n"
                 "def sizes():\n"
                 "    return {c.__name__: c.size for c in KEPT if hasattr(c, 'size')}\n",
}
T = {name: f"tests/test_{file}.py::test_{name}" for file, name in (
    ("clamp", "clamp"), ("other", "other"), ("derived", "double"), ("attr", "attr"),
    ("dynamic", "dynamic"), ("star", "star"), ("cap", "cap"), ("policy", "retries"),
    ("registry", "registry"), ("local", "local"), ("unrelated", "unrelated"),
    ("library", "library"), ("resolve", "resolve"), ("namespace", "namespace"),
    ("evaluated", "evaluated"), ("handed", "handed"), ("foreign", "foreign"),
)}


# Tests reading app.limits's names past its class: any changed name may be what they read.
UNSEEN = ("tests/test_bypass.py::test_bypass", "tests/test_bypass.py::test_static",
          "tests/test_bypass.py::test_static_name", "tests/test_bypass.py::test_static_alias",
          "tests/test_compiled.py::test_compiled")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GitRepo, str]]:
    yield from recorded_repo(tmp_path_factory, FILES, OUTSIDE)


def _impacted(found: WitnessPlan) -> dict[str, str]:
    return {d.nodeid: d.detail for d in found.labelled(IMPACTED)}


def _skipped(found: WitnessPlan) -> set[str]:
    return {d.nodeid for d in found.labelled(SKIP)}


def test_a_changed_constant_runs_every_test_that_reads_it_and_skips_the_rest(
    recorded: tuple[GitRepo, str],
) -> None:
    repo, w = recorded
    patch(repo, w, "limit", {"app/limits.py": LIMITS.replace("LIMIT = 3", "LIMIT = 4")})
    found = plan(repo, w)
    impacted = _impacted(found)
    # Each of these reaches LIMIT another way; dropping that way from the rule skips it.
    assert "reads LIMIT" in impacted[T["clamp"]]  # a function of the module reads it
    assert T["double"] in impacted  # DOUBLE = LIMIT * 2 in another module rebinds DOUBLE
    # Read as they happened (``watch``): an attribute (app.limits.LIMIT), the module handed
    # to a helper (m.LIMIT: no import names m), getattr with a computed name, a library's
    # getattr, the standard library's on the test's behalf.
    for name in ("attr", "handed", "dynamic", "library", "resolve"):
        assert "LIMIT read at run time" in impacted[T[name]], name
    # The same read by the same code in the next test is that test's too (``watch`` judges
    # a read once per test, not once per recording).
    assert "LIMIT read at run time" in impacted["tests/test_handed.py::test_handed_again"]
    assert "__dict__ read at run time" in impacted[T["namespace"]]  # vars(module)
    # eval of text in the test's own globals: its read of app.limits.LIMIT was seen; a name
    # the module's own namespace holds (from app.limits import LIMIT) is read unseen; text
    # evaluated in a namespace that is not the module's own reads what no recording sees.
    assert "LIMIT read at run time" in impacted[T["evaluated"]]
    assert "names it computes" in impacted["tests/test_evalname.py::test_evalname"]
    assert "tests/test_elsewhere.py::test_elsewhere" in impacted
    for name in ("test_bypass.py::test_bypass", "test_bypass.py::test_static",
                 "test_bypass.py::test_static_name", "test_bypass.py::test_static_alias",
                 "test_compiled.py::test_compiled"):
        assert "names it computes, which may be a changed one (" in impacted[
            "tests/" + name], (name, impacted["tests/" + name])
    # Evaluated text that reads past the module's class: the recording cannot vouch for it.
    assert "tests/test_evalbypass.py::test_evalbypass" in {
        d.nodeid for d in found.labelled(ESCALATE)}
    assert T["star"] in impacted  # from app.limits import * re-exports it
    # Module level, through a name holding the module: m = app.limits; ALIASED = m.LIMIT
    # rebinds ALIASED; globals()['app'].limits.LIMIT is read by a call no rule knows.
    assert "tests/test_aliased.py::test_aliased" in impacted
    assert "tests/test_spaced.py::test_spaced" in impacted
    # vars() of a value the namespace holds, next to globals(): a module's names.
    assert "tests/test_spaced.py::test_spaced_vars" in impacted
    assert "imports LIMIT" in impacted[T["local"]]  # imported inside the test function
    assert T["cap"] in impacted  # def cap(x, limit=LIMIT): the default is the old value
    # @parametrize('n', [LIMIT]): the test's own definition changed, its body reads only n.
    assert "definition changed" in impacted["tests/test_param.py::test_param[3]"]
    # What reads nothing the change rebound is skipped (the module rule ran all of them).
    assert {T["other"], T["retries"], T["registry"]} <= _skipped(found)
    # exec of text in its own globals that reads nothing of app.limits (a function made
    # from text): skipped, where evaluated text once counted as reading every module.
    assert "tests/test_fromtext.py::test_made" in _skipped(found)
    # json.LIMIT is the name of another module's attribute: only a test that used
    # app/limits.py (the module rule's tests) can read its LIMIT.
    assert T["unrelated"] in _skipped(found)
    # verlib.LIMIT is a library module's attribute, read by a test that used app.limits: the
    # recording saw no read of app.limits.LIMIT, whatever the text's attribute names.
    assert T["foreign"] in _skipped(found)


def test_a_call_that_only_makes_an_instance_rebinds_what_it_binds(
    recorded: tuple[GitRepo, str],
) -> None:
    """``BOXED = Box(LIMIT)``: Box's ``__init__`` only sets its own attribute, so the
    statement rebinds BOXED and PLAIN's readers are skipped. RegBox's store runs a property
    setter that registers the value: its module keeps the module rule."""
    repo, w = recorded
    patch(repo, w, "limit-boxes", {"app/limits.py": LIMITS.replace("LIMIT = 3", "LIMIT = 4")})
    found = plan(repo, w)
    impacted = _impacted(found)
    assert "tests/test_boxes.py::test_boxed" in impacted
    assert "tests/test_boxes.py::test_plain" in _skipped(found)
    assert "tests/test_regbox.py::test_total" in impacted  # the setter ran _ALL.append
    assert "tests/test_pbox.py::test_pbox" in impacted  # __init__ replaced: it registers
    # from somelib import make: the library's, not app/vendor/somelib.py's pure one.
    assert "tests/test_libmade.py::test_libmade" in impacted


def test_code_listing_other_namespaces_reads_only_theirs(recorded: tuple[GitRepo, str]) -> None:
    """``vars(json)`` reads the standard library's names and ``globals()`` the module's own:
    a registration doing either reads no changed name unless the module holds one; a whole
    namespace read at run time counts only where that module holds a changed name."""
    repo, w = recorded
    patch(repo, w, "limit-spaces", {"app/limits.py": LIMITS.replace("LIMIT = 3", "LIMIT = 4")})
    found = plan(repo, w)
    impacted = _impacted(found)
    # Also ``locals().update(... vars(json) ...)``, with a package module named app/json.py.
    assert "tests/test_listing.py::test_listing" in _skipped(found)
    assert "tests/test_own_listing.py::test_own_listing" in impacted  # its globals hold LIMIT
    assert "tests/test_spaces.py::test_star_space" in impacted  # app.star re-exports LIMIT
    assert "tests/test_spaces.py::test_kinds_space" in _skipped(found)


def test_a_name_a_side_effect_read_runs_every_test_that_used_that_module(
    recorded: tuple[GitRepo, str],
) -> None:
    """``registry.add('other', OTHER)`` at module level puts the changed value where no
    name shows it (a test reads REGISTRY): app/plugins.py falls back to the module rule."""
    repo, w = recorded
    patch(repo, w, "other", {"app/limits.py": LIMITS.replace("OTHER = 10", "OTHER = 11")})
    found = plan(repo, w)
    impacted = _impacted(found)
    assert T["registry"] in impacted and "app/plugins.py" in impacted[T["registry"]]
    assert T["other"] in impacted
    assert T["clamp"] in _skipped(found)


def test_a_class_body_change_runs_the_tests_that_used_the_class(
    recorded: tuple[GitRepo, str],
) -> None:
    repo, w = recorded
    patch(repo, w, "retries", {"app/limits.py": LIMITS.replace("RETRIES = 2", "RETRIES = 5")})
    found = plan(repo, w)
    impacted = _impacted(found)
    assert T["retries"] in impacted
    # An instance made by an earlier test, read by this one: only its attribute shows it.
    assert "reads .RETRIES" in impacted["tests/test_cache.py::test_b_recall"]
    assert {T["clamp"], T["other"], T["double"]} <= _skipped(found)


def test_a_new_function_runs_only_what_could_read_it(recorded: tuple[GitRepo, str]) -> None:
    """Adding a function changes the module level (a new name) and nothing any test ran:
    only code that reads a whole namespace, or names no recording sees, could see it. A
    computed ``getattr`` was seen reading LIMIT alone (``watch``)."""
    repo, w = recorded
    patch(repo, w, "newfunc", {"app/limits.py": LIMITS + "\n\ndef extra():\n    return 1\n"})
    found = plan(repo, w)
    # vars(app.star): the star import re-exports the new name there too. app/spaced.py's
    # vars(globals()['app'].limits) reads every name of app.limits at module level.
    # eval('app.limits.' + 'LIMIT') was seen reading LIMIT alone; vars(app.limits), handed
    # to eval as its globals, reads every name.
    assert set(_impacted(found)) == {T["namespace"], "tests/test_elsewhere.py::test_elsewhere",
                                     *UNSEEN, "tests/test_spaces.py::test_star_space",
                                     "tests/test_spaced.py::test_spaced",
                                     "tests/test_spaced.py::test_spaced_vars"}
    assert {T["clamp"], T["dynamic"], T["library"]} <= _skipped(found)


def test_a_change_that_is_not_binding_only_keeps_the_module_rule(
    recorded: tuple[GitRepo, str],
) -> None:
    """A call with effects at module level (here: logging's configuration) reaches what no
    name shows: every test that used the module runs."""
    repo, w = recorded
    text = LIMITS.replace('"""Limits."""', '"""Limits."""\nimport logging\n\n'
                                           'logging.basicConfig()')
    patch(repo, w, "effect", {"app/limits.py": text})
    impacted = _impacted(plan(repo, w))
    assert {T["clamp"], T["other"], T["retries"], T["registry"], T["double"]} <= set(impacted)


def test_a_comment_or_docstring_edit_runs_nothing_but_what_reads_the_docstring(
    recorded: tuple[GitRepo, str],
) -> None:
    repo, w = recorded
    text = LIMITS.replace('"""Limits."""', '"""Limits, documented."""\n# a comment')
    patch(repo, w, "doc", {"app/limits.py": text})
    # vars(app.limits) at run time and at app/spaced.py's module level read __doc__ too.
    assert set(_impacted(plan(repo, w))) == {T["namespace"], *UNSEEN,
                                             "tests/test_elsewhere.py::test_elsewhere",
                                             "tests/test_spaced.py::test_spaced",
                                             "tests/test_spaced.py::test_spaced_vars"}


def test_a_module_whose_reads_cannot_be_watched_keeps_the_module_rule(
    recorded: tuple[GitRepo, str],
) -> None:
    """app/own_class.py gives itself a class of its own, so what reads its names was not
    seen: a change to FLAG runs the test that read only OTHER_FLAG."""
    repo, w = recorded
    text = FILES["app/own_class.py"]
    patch(repo, w, "own", {"app/own_class.py": text.replace("FLAG = 1", "FLAG = 3")})
    impacted = _impacted(plan(repo, w))
    assert "tests/test_own_class.py::test_own_class" in impacted
    assert T["clamp"] not in impacted


def test_a_module_getattr_is_left_unwatched_and_keeps_the_module_rule(
    recorded: tuple[GitRepo, str],
) -> None:
    repo, w = recorded
    text = FILES["app/lazy.py"]
    patch(repo, w, "lazy", {"app/lazy.py": text.replace("FLAG = 1", "FLAG = 3")})
    impacted = _impacted(plan(repo, w))
    # Recorded as it runs without agentgate (it passed): complete, so judged, not escalated.
    assert {"tests/test_lazy.py::test_lazy_warns_for_its_caller",
            "tests/test_lazy.py::test_lazy_other"} <= impacted.keys()


def test_a_class_a_library_base_was_given_keeps_the_module_rule(
    recorded: tuple[GitRepo, str],
) -> None:
    """``class Item(Model)``: the library's ``__init_subclass__`` keeps the class, and the
    test reads its size through the library, no name of it: the module rule runs it."""
    repo, w = recorded
    text = FILES["app/items.py"]
    patch(repo, w, "items", {"app/items.py": text.replace("size = 1", "size = 2")})
    assert "tests/test_items.py::test_items" in _impacted(plan(repo, w))
    made = FILES["app/made.py"]
    patch(repo, w, "made", {"app/made.py": made.replace("size = 1", "size = 2")})
    assert "tests/test_made.py::test_made" in _impacted(plan(repo, w))


def test_a_witness_that_did_not_watch_reads_keeps_the_module_rule(
    recorded: tuple[GitRepo, str],
) -> None:
    """A recording from before reads were watched cannot vouch that no library read a
    changed name: without its list of unwatched modules, no change is judged by names."""
    repo, w = recorded
    patch(repo, w, "older", {"app/limits.py": LIMITS.replace("LIMIT = 3", "LIMIT = 4")})
    witness = store.Store.for_repo(repo.path).load(w)
    assert witness is not None
    unwatched = depgraph.unwatched(witness)
    assert unwatched is not None and "app/own_class.py" in unwatched
    settings = config.load(repo.path)
    paths = depgraph.paths(witness)
    watched = compute(repo.path, w, "HEAD", settings, paths, unwatched=unwatched)
    assert watched.changed["app/limits.py"] >= {REBOUND} and watched.rebound
    older = compute(repo.path, w, "HEAD", settings, paths, unwatched=None)
    assert older.changed["app/limits.py"] == {MODULE} and not older.rebound


def test_a_witness_that_did_not_watch_evaluated_text_keeps_the_module_rule(
    recorded: tuple[GitRepo, str],
) -> None:
    """Before evaluated text's reads were watched, a recording took ``<string>`` code for
    the repository's module level and saw none of its reads: ``rebind`` now trusts them
    (``exec`` in a module's own globals), so such a witness vouches for no names."""
    repo, w = recorded
    witness = store.Store.for_repo(repo.path).load(w)
    assert witness is not None and depgraph.unwatched(witness) is not None
    older = dataclasses.replace(
        witness, info={k: v for k, v in witness.info.items() if k != depgraph.EVAL_READS})
    assert depgraph.unwatched(older) is None
    key = depgraph.EVAL_READS
    assert depgraph.merged_evidence({key: []}, {}) == {}  # one older part: none of it


def test_a_witness_made_of_parts_watched_reads_only_if_every_part_did() -> None:
    """Shards merged, or tests carried from an older witness (incremental): one part that
    did not watch reads makes the whole a witness that did not."""
    key = depgraph.UNWATCHED
    assert depgraph.merged_evidence({key: ["a.py"]}, {key: ["b.py"]}) == {key: ["a.py", "b.py"]}
    assert depgraph.merged_evidence({key: ["a.py"]}, {}) == {}


def test_a_doctest_runs_when_its_module_changes(recorded: tuple[GitRepo, str]) -> None:
    """A module's doctest runs its docstring's examples: no code of the module, no name it
    binds (the docstring is text), yet the edit is the test's own."""
    repo, w = recorded
    patch(repo, w, "doctest", {"app/doc.py": DOC.replace(">>> 1 + 1\n2", ">>> 1 + 2\n2")})
    impacted = _impacted(plan(repo, w))
    assert "doctests" in impacted["app/doc.py::app.doc"]
    assert T["clamp"] not in impacted


def test_a_change_that_may_raise_at_import_runs_one_test_that_imports_the_module(
    recorded: tuple[GitRepo, str],
) -> None:
    """A new name no test reads, whose statement raises when the module is imported: every
    test importing app/derived.py would fail, so one of them runs (the quickest)."""
    repo, w = recorded
    text = FILES["app/derived.py"]
    patch(repo, w, "raises", {"app/derived.py": text + "\nBROKEN = {}['gone']\n"})
    impacted = _impacted(plan(repo, w))
    assert "one test that imports it runs" in impacted.pop(T["double"])
    assert impacted == {}
    patch(repo, w, "literal", {"app/derived.py": text + "\nFINE = {'a': 1}\n"})
    assert _impacted(plan(repo, w)) == {}  # binding a literal cannot raise


def test_a_pure_function_a_side_effect_calls_at_import_keeps_the_module_rule(
    recorded: tuple[GitRepo, str],
) -> None:
    """``registry.add('built', _build())``: _build only computes, but what it computed went
    into another module's registry, which no name shows."""
    repo, w = recorded
    text = FILES["app/tables.py"].replace("{'x': 1}", "{'x': 2}")
    patch(repo, w, "built", {"app/tables.py": text})
    impacted = _impacted(plan(repo, w))
    assert impacted["tests/test_built.py::test_built"] == "app/tables.py::_build"


def test_names_python_reads_unseen_and_writes_through_the_stdlib_keep_the_module_rule(
    recorded: tuple[GitRepo, str],
) -> None:
    """``__eq__`` in a class is read by ``==``, not by any code that names it; writing a file
    through pathlib at import is an effect, though pathlib makes paths purely."""
    repo, w = recorded
    users = {T["clamp"], T["other"], T["retries"]}
    eq = LIMITS.replace("    def retries(self):",
                        "    def __eq__(self, other):\n        return True\n\n"
                        "    def retries(self):")
    patch(repo, w, "eq", {"app/limits.py": eq})
    assert users <= set(_impacted(plan(repo, w)))
    write = LIMITS.replace('"""Limits."""', '"""Limits."""\nimport pathlib\n\n'
                           'pathlib.Path.write_text(pathlib.Path("limits.txt"), "3")')
    patch(repo, w, "write", {"app/limits.py": write})
    assert users <= set(_impacted(plan(repo, w)))


def test_a_subclass_body_change_is_judged_by_names_only_where_making_it_ran_no_project_code(
    recorded: tuple[GitRepo, str],
) -> None:
    """Making ``class Alpha(Plugin)`` runs Plugin.__init_subclass__, which files its
    annotations in a registry no name shows: the recording saw project code run at that
    import, so a change there keeps the module rule. Making ``class Slow(Base)`` ran none."""
    repo, w = recorded
    kinds = FILES["app/kinds.py"]
    patch(repo, w, "slow", {"app/kinds.py": kinds.replace("'slow'", "'slower'")})
    found = plan(repo, w)
    assert "tests/test_kinds.py::test_slow" in _impacted(found)
    assert "tests/test_kinds.py::test_fast" in _skipped(found)
    alpha = FILES["app/alpha.py"]
    patch(repo, w, "alpha", {"app/alpha.py": alpha.replace("size: int", "size: str")})
    assert _impacted(plan(repo, w))["tests/test_plugins.py::test_names"] == "app/alpha.py"


def test_a_top_level_module_named_like_the_standard_librarys_is_the_repositorys(
    recorded: tuple[GitRepo, str],
) -> None:
    """``import colorsys`` gets the repository's colorsys.py (the tree's top is on
    ``sys.path`` before the standard library): ``vars(colorsys)`` at module level reads its
    changed name, so the registration's users run; a package's app/json.py hides nothing."""
    repo, w = recorded
    patch(repo, w, "shade", {"colorsys.py": "SHADE = 4\n"})
    found = plan(repo, w)
    assert "tests/test_shading.py::test_shading" in _impacted(found)
    assert "tests/test_pkgjson.py::test_pkgjson" in _skipped(found)


def test_a_package_module_on_the_projects_own_sys_path_is_the_repositorys(
    recorded: tuple[GitRepo, str],
) -> None:
    """tests/conftest.py puts the package folder vendored/ on sys.path: ``import sched``
    gets vendored/sched.py. The recording saw it imported as ``sched``, so ``vars(sched)``
    reads the repository's module, whatever its folder holds."""
    repo, w = recorded
    patch(repo, w, "period", {"vendored/sched.py": "PERIOD = 4\n"})
    assert "tests/test_scheduling.py::test_scheduling" in _impacted(plan(repo, w))


def test_a_module_setting_another_modules_name_reruns_its_readers(
    recorded: tuple[GitRepo, str],
) -> None:
    """app/tuner.py sets app.knobs.SPEED when test_a_tuner.py's collection imports it:
    test_knobs reads it from app.knobs (another file, never importing the tuner). The
    tuner's users run by the module rule; the readers of SPEED run too, not OTHER_KNOB's."""
    repo, w = recorded
    patch(repo, w, "tune", {"app/tuner.py": "from app import knobs\n\nknobs.SPEED = 3\n"})
    found = plan(repo, w)
    impacted = _impacted(found)
    assert "tests/test_knobs.py::test_knobs" in impacted
    assert "tests/test_a_tuner.py::test_tuner" in impacted
    labels = {d.nodeid: (d.label, d.detail) for d in found.decisions}
    assert "tests/test_knobs.py::test_other_knob" in _skipped(found), labels[
        "tests/test_knobs.py::test_other_knob"]
    assert "tests/test_knobs.py::test_table" in _skipped(found)
    # An item of a name it holds: that name's readers.
    patch(repo, w, "fill", {"app/filler.py": "from app import knobs\n\nknobs.TABLE['k'] = 2\n"})
    found = plan(repo, w)
    assert "tests/test_knobs.py::test_table" in _impacted(found)
    assert "tests/test_knobs.py::test_knobs" in _skipped(found)
    # A name it computes (setattr(knobs, name, 6)): every reader of app.knobs runs.
    patch(repo, w, "retune", {"app/retuner.py": "from app import knobs\n\n"
                              "name = 'OTHER' + '_KNOB'\nsetattr(knobs, name, 6)\n"})
    impacted = _impacted(plan(repo, w))
    assert {"tests/test_knobs.py::test_other_knob", "tests/test_knobs.py::test_knobs"} <= set(
        impacted)


@pytest.mark.parametrize("store", [
    "knobs.TABLE['a']['b'] = 2",  # inside what a name holds, however deep
    "knobs.TABLE['a'].x = 2",
    "class C:\n    knobs.TABLE = 2",  # a class body runs at import too
    "setattr(knobs, 'TABLE', 2)",
])
def test_the_module_a_changed_store_names_is_found(store: str) -> None:
    """``rebind.store_targets`` on the texts alone: each store reaches app/knobs.py, also
    when the alias may come from either of two imports (``try``/``except ImportError``)."""
    head = ("try:\n    from app.compat import knobs\nexcept ImportError:\n"
            "    from app import knobs\n\n")
    known = ["app/__init__.py", "app/knobs.py", "app/compat/__init__.py",
             "app/compat/knobs.py", "app/t.py"]
    found = rebind.store_targets({"app/t.py": (head.encode(), (head + store + "\n").encode())},
                                 known)
    assert {"app/knobs.py", "app/compat/knobs.py"} <= found


def test_a_witness_without_top_names_takes_any_stdlib_named_module_for_the_repositorys(
    recorded: tuple[GitRepo, str],
) -> None:
    """A recording from before top-level names were kept cannot say which standard-library
    names got the repository's module: vendored/sched.py counts as ``sched`` wherever it
    lies. With the evidence, what the recording saw decides."""
    repo, w = recorded
    patch(repo, w, "period-older", {"vendored/sched.py": "PERIOD = 4\n"})
    witness = store.Store.for_repo(repo.path).load(w)
    assert witness is not None
    seen = depgraph.top_names(witness)
    assert seen is not None and "sched" in seen
    settings, paths = config.load(repo.path), depgraph.paths(witness)
    unwatched = depgraph.unwatched(witness)
    older = compute(repo.path, w, "HEAD", settings, paths, unwatched=unwatched, top_names=None)
    assert MODULE in older.changed.get("app/scheduling.py", set())
    blind = compute(repo.path, w, "HEAD", settings, paths, unwatched=unwatched,
                    top_names=frozenset())
    assert "app/scheduling.py" not in blind.changed



@pytest.mark.parametrize(("old", "new"), [
    ("_t['a'] = 1", "_t['a'] = 2"),
    ("_all[0]['b'] = 1", "_all[0]['b'] = 2"),
    ("OWN['t']['c'] = 1", "OWN['t']['c'] = 2"),
    ("_fill('d')", "_fill('dd')"),  # judged by whether _fill only binds names
    ("_append('e')", "_append('ee')"),
], ids=["alias", "inside-a-new-list", "stored-into-its-own", "in-a-function",
        "appended-to-its-own"])
def test_a_store_through_a_name_for_another_modules_object_reruns_its_readers(
    recorded: tuple[GitRepo, str], old: str, new: str, request: pytest.FixtureRequest,
) -> None:
    """Red-team: ``_t = ALIASED; _t['a'] = 2`` stores into app.knobs's ALIASED, but it was
    judged a store into an object app.through made itself (binding-only), so test_aliased,
    which reads ALIASED from app.knobs, was skipped."""
    repo, w = recorded
    patch(repo, w, "alias-" + request.node.callspec.id,
          {"app/through.py": THROUGH.replace(old, new)})
    assert "tests/test_through.py::test_aliased" in _impacted(plan(repo, w))


@pytest.mark.parametrize(("old", "new"), [
    ("MINE['x'][0] = 1", "MINE['x'][0] = 2"),
    ("OWN['t'] = knobs.ALIASED", "OWN['t'] = dict(knobs.ALIASED)"),
], ids=["filled-with-its-own", "filled-with-a-copy"])
def test_a_table_a_module_makes_and_fills_itself_reruns_no_reader_of_another(
    recorded: tuple[GitRepo, str], old: str, new: str, request: pytest.FixtureRequest,
) -> None:
    """The twin: tables it made itself, filled with values it made, are read by no test."""
    repo, w = recorded
    patch(repo, w, "own-" + request.node.callspec.id,
          {"app/through.py": THROUGH.replace(old, new)})
    assert "tests/test_through.py::test_aliased" in _skipped(plan(repo, w))


def test_a_function_storing_into_what_another_name_holds_is_not_pure() -> None:
    """``t = knobs.ALIASED; t[key] = 1`` and ``own.append(knobs.ALIASED); own[0][key] = 1``
    store into another module's object; ``mine = {}; mine[key] = [1]; mine[key][0] = 2``
    into the function's own."""
    found = bindings.pure_functions(THROUGH.encode(), ["_fill", "_append", "_mine"])
    assert found == {"_mine"}


MESSAGES = ("class Message:\n    message = ''\n\n\n"
            "class UnusedImport(Message):\n    message = '%r imported but unused'\n")
# pyflakes' checker.py (new-user trial): the class attribute a message class rebinds reached
# every test through ``builtin_vars = dir(builtins)`` (names computed: any class attribute?)
# and ``names = dir()`` in a class body, and the module rule ran all 730 tests.
CHECKER = ("import builtins\n\nfrom app import messages\n\n"
           "builtin_vars = dir(builtins)\n\n\n"
           "class Magic:\n    names = dir()\n\n\n"
           "class Checker:\n    builtins = set(builtin_vars)\n\n"
           "    def report(self):\n        return messages.UnusedImport\n")


def test_names_a_standard_library_module_or_a_scope_lists_are_no_class_attribute_read() -> None:
    old = MESSAGES.encode()
    new = MESSAGES.replace("but unused", "but not used").encode()
    picker = (b"from app import messages\n\nFIELD = 'message'\n"
              b"PICKED = getattr(messages.Message, FIELD)\n")
    universe = {"app/__init__.py": b"", "app/messages.py": old, "app/checker.py": CHECKER.encode(),
                "app/picker.py": picker}
    found = rebind.judge({"app/messages.py": (old, new)}, universe, quiet_import=lambda _p: True,
                         unwatched=frozenset(), known=set(universe), top_names=frozenset({"app"}))
    assert found.fallback == frozenset()
    assert found.rebound.names["app/messages.py"] == {"UnusedImport"}
    assert "app/checker.py" not in found.rebound.names
    # The twin: a name computed on the project's class may read the changed attribute.
    assert found.rebound.names["app/picker.py"] == {"PICKED"}


# A function that looks as if it only computes, yet changes a module's list (red-team: the
# witness skipped the test that reads ``SIGNS`` when ``__version__ = _version()`` gained one).
HIDDEN = ("import functools\nimport operator\n\nSIGNS = [1]\n\n\n"
          "def _map():\n    list(map(SIGNS.append, [-1]))\n    return 1\n\n\n"
          "def _getattr():\n    getattr(SIGNS, 'app' + 'end')(-1)\n    return 1\n\n\n"
          "def _getattr_literal():\n    getattr(SIGNS, 'append')(-1)\n    return 1\n\n\n"
          "def _getattr_handed():\n    list(map(getattr(SIGNS, 'app' + 'end'), [-1]))\n"
          "    return 1\n\n\n"
          "def _methodcaller():\n    operator.methodcaller('append', -1)(SIGNS)\n    return 1\n\n\n"
          "def _partial():\n    functools.partial(SIGNS.append, -1)()\n    return 1\n\n\n"
          "def _reads():\n    out = []\n    name = 'real'\n"
          "    list(map(out.append, [getattr(SIGNS, 'real', 1), getattr(SIGNS, name, 0)]))\n"
          "    return operator.itemgetter(0)(sorted(SIGNS, key=abs)) + len(out)\n")


def test_a_bound_method_or_a_computed_getattr_handed_on_is_not_pure() -> None:
    """Each hidden store: a mutating method of a global passed as a value, a ``getattr``
    whose name is computed (or names one), what a call returned called; the twin fills its
    own list, reads with ``getattr`` and calls what ``itemgetter`` made."""
    names = ["_map", "_getattr", "_getattr_literal", "_getattr_handed", "_methodcaller",
             "_partial", "_reads"]
    assert bindings.pure_functions(HIDDEN.encode(), names) == {"_reads"}


@pytest.mark.parametrize(("statement", "pure"), [
    ("X = sorted([3, 1], key=lambda v: SIGNS.append(v) or v)", False),
    ("X = list(map(lambda v: SIGNS.append(v), [1]))", False),
    ("X = list(map(SIGNS.append, [1]))", False),
    ("HANDLERS = {'x': lambda: SIGNS.append(1)}", True),  # made, not run
    ("X = sorted([3, 1], key=lambda v: -v)", True),
])
def test_a_lambda_handed_to_a_call_at_import_runs_then(statement: str, pure: bool) -> None:
    """At import, a lambda's body runs when something calls it: a lambda handed to a call
    may run there and then; one only stored does not."""
    module = bindings.analyse(f"SIGNS = []\n{statement}\n".encode())
    assert module is not None
    assert module.statements[1].pure is pure
