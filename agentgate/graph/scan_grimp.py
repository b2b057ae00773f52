"""grimp's Rust import scanner over in-memory source texts: where the imports are.

grimp has no public per-file API; ``grimp._rustgrimp.scan_for_imports`` (grimp 3.x) takes
module files, a found package and a file system, and ``FakeBasicFileSystem`` serves texts
from memory, so blobs read from git never touch the disk. Each file becomes a module of one
fake package ``_ag.d.d...`` deep enough that relative imports resolve inside it; with
``include_external_packages`` every import then comes back as its top-level name and line.

Every batch carries a canary file with known imports: if grimp's private API or its
behaviour changes, the canary comes back wrong and the caller parses with ``ast`` instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

FAKE_PACKAGE = "_ag"
_FAKE_DIR = f"/{FAKE_PACKAGE}/" + "/".join(["d"] * 16)
_FAKE_MODULE = FAKE_PACKAGE + "." + ".".join(["d"] * 16)
# FakeBasicFileSystem unindents and trims what it is given (it is a test double): a first
# and a last line at column 0 make both no-ops, and every line shifts down by exactly one.
_HEAD, _TAIL = "#\n", "\n#\n"
_CHUNK = 256  # a syntax error re-scans only its own chunk
_CANARY_KEY = "\0canary"
_CANARY = (
    "import _agc0\nif x:\n    from _agc1.y import (z,\n        w)\ntry: import _agc2\nexcept: 0\n"
)
_CANARY_TOPS = {1: {"_agc0"}, 3: {"_agc1"}, 5: {"_agc2"}}


class ImportLine(NamedTuple):
    contents: str  # the line's text, stripped
    tops: set[str] | frozenset[str]  # top-level names the statements starting there import


Lines = dict[int, ImportLine]


class GrimpMisbehaved(Exception):
    pass


def grimp_lines(texts: Mapping[str, str]) -> tuple[dict[str, Lines], str | None]:
    """Per file, its import lines; files grimp cannot parse are left out (the caller's ast
    pass reports them), and everything is when grimp is missing or has changed (with a note).
    """
    try:
        scanner = _Scanner()
    except ImportError as exc:
        return {}, f"grimp's scanner is unavailable ({exc}); imports were parsed with ast (slower)"
    keys = list(texts)
    found: dict[str, Lines] = {}
    try:
        with scanner.lean_objects():
            for i in range(0, len(keys), _CHUNK):
                found.update(scanner.scan({k: texts[k] for k in keys[i : i + _CHUNK]}))
    except GrimpMisbehaved as exc:
        return {}, f"grimp's scanner misbehaved ({exc}); imports were parsed with ast"
    return found, None


class _Scanner:
    def __init__(self) -> None:
        import grimp.domain.valueobjects as valueobjects
        from grimp import _rustgrimp  # type: ignore[attr-defined]
        from grimp.application.ports.modulefinder import FoundPackage, ModuleFile

        self.rust: Any = _rustgrimp
        self.valueobjects: Any = valueobjects
        self.module_class: Any = valueobjects.Module
        self.found_package: Any = FoundPackage
        self.module_file: Any = ModuleFile

    def scan(self, texts: Mapping[str, str]) -> dict[str, Lines]:
        batch = {_CANARY_KEY: _CANARY, **texts}
        while True:
            try:
                found = self._scan_once(batch)
            except Exception as exc:
                culprit = _culprit(exc, list(batch))
                if culprit is None:
                    raise GrimpMisbehaved(f"{type(exc).__name__}: {exc}") from None
                del batch[culprit]  # the ast pass reports it, or recovers it
                continue
            except BaseException as exc:
                if type(exc).__name__ != "PanicException":  # pyo3 panics are BaseException
                    raise
                raise GrimpMisbehaved("panic") from None
            canary = found.pop(_CANARY_KEY, {})
            if {n: line.tops for n, line in canary.items()} != _CANARY_TOPS:
                raise GrimpMisbehaved("its canary file came back wrong")
            return found

    def _scan_once(self, batch: Mapping[str, str]) -> dict[str, Lines]:
        keys = list(batch)
        content = {f"{_FAKE_DIR}/m{i}.py": _HEAD + batch[k] + _TAIL for i, k in enumerate(keys)}
        files = tuple(
            self.module_file(self.module_class(f"{_FAKE_MODULE}.m{i}"), 0.0)
            for i in range(len(keys))
        )
        package = self.found_package(
            name=FAKE_PACKAGE, directory=f"/{FAKE_PACKAGE}", module_files=frozenset(files)
        )
        out = self.rust.scan_for_imports(
            module_files=files,
            found_packages={package},
            include_external_packages=True,
            exclude_type_checking_imports=False,
            file_system=self.rust.FakeBasicFileSystem(content_map=content),
        )
        found = {}
        for module, imports in out.items():
            index = int(str(module).rsplit(".m", 1)[1])
            found[keys[index]] = _by_line(imports)
        for key in keys:  # a file with no imports at all comes back empty, or not at all
            found.setdefault(key, {})
        return found

    def lean_objects(self) -> _LeanObjects:
        return _LeanObjects(self.valueobjects)


def _by_line(imports: Iterable[tuple[str, int, str]]) -> Lines:
    lines: Lines = {}
    for imported, number, text in imports:
        top = imported.partition(".")[0]
        line = lines.get(number)
        if line is None:
            lines[number] = ImportLine(text, {top})
        else:
            line.tops.add(top)  # type: ignore[union-attr]
    # _HEAD shifted every line down by one
    return {number - 1: line for number, line in lines.items()}


def _culprit(exc: Exception, keys: list[str]) -> str | None:
    """The file a grimp SourceSyntaxError names (its args: filename, line, text)."""
    if type(exc).__name__ != "SourceSyntaxError" or not exc.args:
        return None
    index = str(exc.args[0]).rsplit("/m", 1)[-1].removesuffix(".py")
    if not index.isdigit() or int(index) >= len(keys) or keys[int(index)] == _CANARY_KEY:
        return None
    return keys[int(index)]


def _lean_import(**fields: Any) -> tuple[str, int, str]:
    return fields["imported"], fields["line_number"], fields["line_contents"]


class _LeanObjects:
    """grimp's scanner builds a frozen-dataclass Module and DirectImport per import and hashes
    them into sets: about 7 µs an import, half its time on 20,000 small modules. While
    scanning, plain ``str`` and tuples carry the same facts (grimp looks both classes up
    by name on every call); the real classes are put back afterwards, even on error."""

    def __init__(self, valueobjects: Any) -> None:
        self.vo = valueobjects
        self.saved: tuple[Any, Any] = (valueobjects.Module, valueobjects.DirectImport)

    def __enter__(self) -> None:
        self.vo.Module, self.vo.DirectImport = str, _lean_import

    def __exit__(self, *exc: object) -> None:
        self.vo.Module, self.vo.DirectImport = self.saved

