"""What ``bindings.analyse`` found in a module text, kept between plans (new-user trial).

With a witness, every plan judges a module-level change by the names it rebinds, and that
reads every module the witness saw run: on marshmallow, 29 texts parsed and walked on each
plan, about three quarters of its time and half of collecting the suite. The texts are the
witness revision's, so they are the same from one plan to the next: each analysis is kept
under ``.git/agentgate/analysed.json``, keyed by the text's digest and the options it was
made with.

JSON, not pickle: a file under ``.git/agentgate`` may have been written by the code a check
ran (``run.tamper`` checks what changed during a check's runs; between checks, the state
is as trustworthy as the witness store beside it), and unpickling runs what the data names.
An entry that does not decode as an analysis is dropped and made again. Entries no plan
used for ``MAX_AGE_DAYS`` are dropped, and never more than ``MAX_ENTRIES`` are kept.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentgate.git import gitio
from agentgate.run import tamper
from agentgate.witness.bindings import Module, Reads, Statement
from agentgate.witness.syntax import Import

VERSION = 1  # bump when bindings.analyse's findings change meaning
FILE = "analysed.json"
MAX_ENTRIES = 4000
MAX_AGE_DAYS = 30
_TYPES: dict[str, type[Any]] = {t.__name__: t for t in (Module, Reads, Statement, Import)}


class Analysed:
    """The kept analyses of one repository: ``get`` one, made with ``make`` when missing;
    ``save`` writes what changed."""

    def __init__(self, root: Path) -> None:
        self.path = gitio.state_dir(root) / FILE
        self.entries: dict[str, list[Any]] = _read(self.path)
        self.decoded: dict[str, Module | None] = {}
        self.dirty = False
        self.now = int(time.time())

    def get(self, text: bytes, options: str, make: Callable[[], Module | None]) -> Module | None:
        key = hashlib.sha256(b"%d\0%s\0" % (VERSION, options.encode()) + text).hexdigest()
        if key in self.decoded:
            return self.decoded[key]
        entry = self.entries.get(key)
        found: Module | None = None
        known = False
        if entry is not None:
            with contextlib.suppress(Exception):  # anything malformed: made again
                found, known = _decode(entry[1]), True
                if found is not None and not isinstance(found, Module):
                    found, known = None, False
        if not known:
            found = make()
            self.entries[key] = [self.now, _encode(found)]
            self.dirty = True
        elif self.now - int(entry[0]) > 86400:  # type: ignore[index]
            entry[0] = self.now  # type: ignore[index]
            self.dirty = True
        self.decoded[key] = found
        return found

    def save(self) -> None:
        if not self.dirty:
            return
        oldest = self.now - MAX_AGE_DAYS * 86400
        kept = sorted(((k, e) for k, e in self.entries.items() if int(e[0]) >= oldest),
                      key=lambda item: -int(item[1][0]))[:MAX_ENTRIES]
        data = json.dumps({"version": VERSION, "entries": dict(kept)},
                          separators=(",", ":")).encode()
        with contextlib.suppress(OSError):  # a cache that cannot be written is no error
            tamper.write(self.path, data)


def _read(path: Path) -> dict[str, list[Any]]:
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("version") != VERSION:
        return {}
    entries = data.get("entries")
    if not isinstance(entries, dict):
        return {}
    return {k: e for k, e in entries.items() if isinstance(e, list) and len(e) == 2
            and isinstance(e[0], int)}


def _encode(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {"t": type(value).__name__,
                "f": {f.name: _encode(getattr(value, f.name))
                      for f in dataclasses.fields(value)}}
    if isinstance(value, frozenset):
        return {"s": sorted((_encode(v) for v in value), key=json.dumps)}
    if isinstance(value, tuple):
        return {"u": [_encode(v) for v in value]}
    if isinstance(value, dict):
        return {"d": [[k, _encode(v)] for k, v in value.items()]}
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise TypeError(f"cannot keep {type(value).__name__}")


def _decode(value: Any) -> Any:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if not isinstance(value, dict) or len(value) not in (1, 2):
        raise ValueError("not an analysis")
    if "t" in value:
        kind = _TYPES[value["t"]]
        fields = {f.name for f in dataclasses.fields(kind)}
        given = value["f"]
        if set(given) != fields:
            raise ValueError("fields differ")
        return kind(**{k: _decode(v) for k, v in given.items()})
    if "s" in value:
        return frozenset(_decode(v) for v in value["s"])
    if "u" in value:
        return tuple(_decode(v) for v in value["u"])
    if "d" in value:
        return {str(k): _decode(v) for k, v in value["d"]}
    raise ValueError("not an analysis")
