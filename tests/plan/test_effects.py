"""Which top-level changes have an effect beyond the module's own names (pure)."""

from __future__ import annotations

import pytest

from agentgate.plan.effects import gained, registers, registrations

BASE = b"from app import calc\n\nLIMIT = 3\n\n\ndef f():\n    calc.mul = None\n"


@pytest.mark.parametrize(("head", "expected"), [
    (BASE + b"\ncalc.configure(fast=True)\n", True),
    (BASE + b"\ncalc.mul = lambda a, b: 0\n", True),
    (BASE + b"\ncalc.TABLE['x'] = 1\n", True),
    (BASE + b"\ndel calc.mul\n", True),
    (BASE + b"\nif True:\n    calc.configure(fast=True)\n", True),
    (BASE + b"\ntry:\n    import fast\nexcept ImportError:\n    setattr(calc, 'x', 1)\n", True),
    (BASE.replace(b"LIMIT = 3", b"LIMIT = 4"), False),  # a constant: the module's own name
    (BASE + b"\n\ndef g():\n    calc.configure(fast=True)\n", False),  # runs when called
    (BASE + b"\nimport os\n", False),
    (BASE + b"\ncalc.configure(  # the same call, another line\n", False),  # does not parse
])
def test_a_top_level_effect_is_one_the_base_did_not_have(head: bytes, expected: bool) -> None:
    assert gained(BASE, head) is expected


def test_an_added_module_with_an_effect_has_gained_it() -> None:
    assert gained(None, b"from app import calc\n\ncalc.mul = None\n")
    assert not gained(None, b"X = 1\n")
    assert not gained(BASE + b"\ncalc.configure()\n", BASE + b"\ncalc.configure()\n")


REGISTRY = b'''HANDLERS = {}


class Handler:
    name = ""


class Plugin:
    known = []

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        Plugin.known.append(cls)


class Checked:
    def __init_subclass__(cls, **kwargs):
        assert cls.__name__


class Meta(type):
    def __init__(cls, name, bases, ns):
        super().__init__(name, bases, ns)
        KINDS[name] = cls


class Kind(metaclass=Meta):
    pass


class Abstract(metaclass=ABCMeta):
    pass


class Derived(Plugin):
    pass


class Plain:
    pass


def handlers():
    return {c.name: c for c in Handler.__subclasses__()}


def register(name):
    def store(func):
        HANDLERS[name] = func
        return func
    return store


def wrap(func):
    return func


class Registry:
    def __init__(self):
        self.items = []

    def add(self, item):
        self.items.append(item)
        return item

    def show(self, item):
        return item


registry = Registry()
'''


@pytest.mark.parametrize(("kind", "name", "expected"), [
    ("base", "Handler", True),  # listed by __subclasses__()
    ("base", "Plugin", True),  # __init_subclass__
    ("base", "Derived", True),  # based on a registry class
    ("base", "Plain", False),
    ("base", "Checked", False),  # __init_subclass__ that keeps nothing
    ("base", "Kind", True),  # a metaclass of the module's that keeps each class
    ("base", "Abstract", False),  # ABCMeta lists no subclass
    ("call", "register", True),  # a decorator factory storing into HANDLERS
    ("call", "wrap", False),  # a wrapper keeps nothing
    ("call", "registry.add", True),  # a top-level object's method storing into it
    ("call", "registry.show", False),
    ("call", "handlers", False),
])
def test_what_counts_as_a_registry(kind: str, name: str, expected: bool) -> None:
    assert registers(REGISTRY, kind, name) is expected


def test_what_a_module_may_register_resolves_through_its_imports() -> None:
    text = (b"from app.registry import Handler, register as reg\nimport app.registry as r\n"
            b"from . import registry\nfrom .. import top\n\n\n"
            b"class Csv(Handler):\n    pass\n\n\nclass Tsv(r.Plugin, Local):\n    pass\n\n\n"
            b"@reg('csv')\ndef render(rows):\n    return rows\n\n\n"
            b"@registry.registry.add\ndef one():\n    pass\n\n\n"
            b"r.registry.add(Csv)\ntop.hook()\nlocal_call()\n")
    assert registrations(text, "app.plugins") == {
        ("base", "app.registry.Handler"), ("base", "app.registry.Plugin"),
        ("call", "app.registry.register"), ("call", "app.plugins.registry.registry.add"),
        ("call", "app.registry.registry.add"), ("call", "app.top.hook")}
