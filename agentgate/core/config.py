"""``[tool.agentgate]`` loading, defaults and validation.

Every problem in the table is collected and reported in one line (exit 64), as import-linter
does for its contracts; nothing here raises a traceback on bad input.
"""

from __future__ import annotations

import configparser
import difflib
import itertools
import shlex
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentgate.core.errors import ConfigError
from agentgate.core.paths import DEFAULT_PYTHON_FILES

PYPROJECT = "pyproject.toml"
DEFAULT_AMBIENT = ("TZ", "LANG", "LC_ALL", "PYTHONHASHSEED", "SOURCE_DATE_EPOCH")
# Files no test can read (fnmatch patterns on the repo path; ``*`` crosses folders). Any
# other file outside the packages and test roots may be read by any code (rates/vat.json
# read by app/tax.py): a change to it runs the tests that could read it (issue 12).
DEFAULT_INERT = ("docs/*", "doc/*", "*.md", "*.rst", "LICENSE*", "COPYING*", "AUTHORS*",
                 "CHANGELOG*", ".gitignore", ".gitattributes", ".editorconfig", ".github/*",
                 ".gitlab-ci.yml", ".pre-commit-config.yaml")

# Agents with public evidence of the environment variables they set in the shells they run,
# the identities they commit as, and the trailers they add. Patterns are fnmatch-style and
# case-insensitive. The README lists them; config adds more.
DEFAULT_AGENT_ENV = (
    "AI_AGENT",
    "CLAUDECODE",
    "CODEX_SANDBOX",
    "CODEX_THREAD_ID",
    "GEMINI_CLI",
    "CURSOR_AGENT",
    "COPILOT_MODEL",
    "GOOSE_PROVIDER",
    "CLINE_ACTIVE",
    "OPENCODE",
    "AUGMENT_AGENT",
)
DEFAULT_AGENT_IDENTITIES = (
    "* (aider) <*>",
    "*<198982749+copilot@users.noreply.github.com>",
    "*<*+copilot@users.noreply.github.com>",
    "*<openhands@all-hands.dev>",
    "*[[]bot[]] <*>",  # fnmatch: [[] and []] are literal brackets
    "*<*[[]bot[]]@users.noreply.github.com>",
    "claude <noreply@anthropic.com>",
)
DEFAULT_AGENT_TRAILERS = (
    "co-authored-by: * <noreply@anthropic.com>",
    "co-authored-by: * <noreply@aider.dev>",
    "co-authored-by: * <*+copilot@users.noreply.github.com>",
    "co-authored-by: * <openhands@all-hands.dev>",
    "co-authored-by: * <*cursoragent@cursor.com>",
    "co-authored-by: * <*@openai.com>",
    "generated-by: *",
    "ai-agent: *",
)


@dataclass(frozen=True)
class AgentPatterns:
    env: tuple[str, ...] = DEFAULT_AGENT_ENV
    identities: tuple[str, ...] = DEFAULT_AGENT_IDENTITIES
    trailers: tuple[str, ...] = DEFAULT_AGENT_TRAILERS


@dataclass(frozen=True)
class Config:
    root: Path
    scope_file: str = ".agentgate/scope"
    manifest: str = ".agentgate/fixtures.sha256"
    ledger: str = ".agentgate/freezes"
    fixtures: tuple[str, ...] = ("tests/fixtures",)
    protected: tuple[str, ...] = ()
    tests: tuple[str, ...] = ("tests",)
    sources: tuple[str, ...] = (".",)
    agents: AgentPatterns = field(default_factory=AgentPatterns)
    base_branch: str | None = None
    python: str | None = None
    property_band: tuple[str, ...] = ()
    hypothesis_seed: int = 0
    pythonhashseed: int = 0
    tz: str = "UTC"
    lc_all: str = "C.UTF-8"
    max_freeze_days: int = 30
    shadow_percent: float = 10.0
    ambient: tuple[str, ...] = DEFAULT_AMBIENT
    timeout: int = 600
    trust_paths: tuple[str, ...] = ()  # more trust files or folders (CI definitions, ...)
    inert: tuple[str, ...] = DEFAULT_INERT  # files no test reads
    # Bounds on the caches under .git/agentgate (issue 13: worktrees piled up), applied after
    # each run and by ``agentgate gc``.
    keep_worktrees: int = 4
    cache_days: int = 14
    keep_witnesses: int = 10
    # A test whose base form fails on head while its edited form passes (issue 11 item 5):
    # "block" or "report"; None: block when the range has an agent's commit, else report.
    rewritten_tests: str | None = None
    # An allowed-signers file (git's SSH format) in the repository, read at the base: a
    # trust-only commit in a range governs the scope after it only when signed by a key it
    # lists (issue 11 item 8). None: no signature is required.
    trust_signers: str | None = None
    has_section: bool = False  # whether [tool.agentgate] exists at all
    # pytest's ``testpaths`` is unset, so pytest collects test modules anywhere under the
    # root, whatever ``tests`` says (``core.paths.TestFiles``); set by ``load``
    collect_anywhere: bool = False
    # pytest's ``python_files``, from the same configuration file; set by ``load``
    python_files: tuple[str, ...] = DEFAULT_PYTHON_FILES
    # pytest-xdist for the band and the full suite: "auto", a worker count, or 0 (never)
    workers: int | str = "auto"

    def pinned_env(self) -> dict[str, str]:
        """The ambient inputs every test run is pinned to, recorded in reports."""
        return {"PYTHONHASHSEED": str(self.pythonhashseed), "TZ": self.tz, "LC_ALL": self.lc_all}


_STR_KEYS = ("scope_file", "manifest", "ledger", "base_branch", "python", "tz", "lc_all",
             "trust_signers")
_LIST_KEYS = ("fixtures", "protected", "tests", "sources", "property_band", "ambient",
              "trust_paths", "inert")
_INT_KEYS = ("hypothesis_seed", "pythonhashseed", "max_freeze_days", "timeout",
             "keep_worktrees", "cache_days", "keep_witnesses")
# Keys naming places in the repository. agentgate writes to some of them (``fixtures record``,
# ``freeze``, ``init``) and trusts all of them, so a committed config must not point them
# outside the repository (issue 11: ``manifest = "../../x"`` made ``init`` write there).
_REPO_PATH_KEYS = ("scope_file", "manifest", "ledger", "fixtures", "protected", "tests",
                   "sources", "property_band", "trust_paths", "trust_signers")
_AGENT_KEYS = ("env", "identities", "trailers", "defaults")
REWRITTEN_POLICIES = ("report", "block")
KNOWN_KEYS = frozenset((*_STR_KEYS, *_LIST_KEYS, *_INT_KEYS, "shadow_percent", "agents",
                        "rewritten_tests", "workers"))


def parse_toml(text: str, *, where: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{where}: malformed TOML ({exc}); fix the file and retry") from None


Reader = Callable[[str], "str | None"]


def load(root: Path, pyproject_text: str | None = None, *, read: Reader | None = None) -> Config:
    """Load the config for ``root`` from the work tree, or through ``read`` (a repo-relative
    path -> text or None) from a revision.

    Callers read the configuration at a revision (the base of a range) so the rules that
    govern a patch are never the ones the patch itself wrote.
    """
    read = read or (lambda name: _maybe_read(root / name))
    if pyproject_text is None:
        pyproject_text = read(PYPROJECT) or ""
    data = parse_toml(pyproject_text, where=PYPROJECT)
    tool = data.get("tool", {})
    section = tool.get("agentgate") if isinstance(tool, dict) else None
    options = _first_options(pytest_tables(read, data))
    testpaths = _words(options.get("testpaths"))
    defaults: dict[str, Any] = {
        "tests": tuple(_norm(p) for p in testpaths) or _detect_tests(root),
        "sources": _detect_sources(root),
        "collect_anywhere": not testpaths,
        "python_files": tuple(_words(options.get("python_files"))) or DEFAULT_PYTHON_FILES,
    }
    if section is None:
        return Config(root=root, **defaults)
    if not isinstance(section, dict):
        raise ConfigError(f"{PYPROJECT}: [tool.agentgate] must be a table")
    values, problems = _validate(section)
    if problems:
        raise ConfigError(f"{PYPROJECT} [tool.agentgate]: " + "; ".join(problems))
    return Config(root=root, **{**defaults, **values, "has_section": True})


def _validate(section: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    values: dict[str, Any] = {}
    problems = [unknown_key(k, KNOWN_KEYS) for k in sorted(section) if k not in KNOWN_KEYS]
    for key, value in section.items():
        if key not in KNOWN_KEYS:
            continue
        converted, problem = _convert(key, value)
        if problem:
            problems.append(problem)
        else:
            values[key] = converted
    return values, problems


def unknown_key(key: str, known: Iterable[str]) -> str:
    """``unknown key 'x'``, with the closest known key when one is close (issue 13: a typo
    in a committed config gave no way out)."""
    close = difflib.get_close_matches(key, sorted(known), n=1)
    return f"unknown key {key!r}" + (f" (did you mean {close[0]!r}?)" if close else "")


def _convert(key: str, value: Any) -> tuple[Any, str | None]:
    converted, problem = _convert_type(key, value)
    if problem is None and key in _REPO_PATH_KEYS:
        problem = _outside(key, converted)
    return converted, problem


def _outside(key: str, value: str | tuple[str, ...]) -> str | None:
    """A problem when a path key names a place outside the repository."""
    for path in (value,) if isinstance(value, str) else value:
        if key == "property_band" and path.startswith("marker:"):
            continue
        if not repo_relative(path):
            return (f"{key!r} must name a path inside the repository, relative to its root "
                    f"(got {path!r})")
    return None


def repo_relative(path: str) -> bool:
    """Whether ``path`` is relative and stays inside the folder it is relative to."""
    text = path.replace("\\", "/")
    if text.startswith("/") or (len(text) > 1 and text[1] == ":"):  # POSIX or drive-absolute
        return False
    depth = 0
    for part in text.split("/"):
        depth += -1 if part == ".." else 0 if part in ("", ".") else 1
        if depth < 0:
            return False
    return True


def _convert_type(key: str, value: Any) -> tuple[Any, str | None]:
    if key in _STR_KEYS:
        ok = isinstance(value, str) and value != ""
        return value, None if ok else f"{key!r} must be a non-empty string"
    if key in _LIST_KEYS:
        ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
        return tuple(_norm(v) for v in value) if ok else None, (
            None if ok else f"{key!r} must be a list of strings"
        )
    if key in _INT_KEYS:
        ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
        return value, None if ok else f"{key!r} must be a non-negative integer"
    if key == "shadow_percent":
        ok = isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 100
        return float(value) if ok else None, None if ok else "'shadow_percent' must be 0..100"
    if key == "rewritten_tests":
        ok = value in REWRITTEN_POLICIES
        return value, None if ok else "'rewritten_tests' must be \"report\" or \"block\""
    if key == "workers":
        return _convert_workers(value)
    return _convert_agents(value)


def _convert_workers(value: Any) -> tuple[Any, str | None]:
    if value == "auto" or (isinstance(value, int) and not isinstance(value, bool)
                           and value >= 0):
        return value, None
    return None, "'workers' must be \"auto\" or a non-negative integer"


def parse_workers(text: str) -> int | str:
    """``--workers``: "auto" or a count (0: one process); anything else is exit 64."""
    value: int | str = int(text) if text.strip().isdigit() else text.strip()
    if _convert_workers(value)[1]:
        raise ConfigError(f"--workers {text!r}: must be \"auto\" or a non-negative integer")
    return value


def parse_shard(text: str, option: str = "--shard") -> tuple[int, int]:
    """``I/N`` with 1 <= I <= N (a CI matrix's job I of N); anything else is exit 64."""
    index, sep, count = text.partition("/")
    if not (sep and index.strip().isdigit() and count.strip().isdigit()):
        raise ConfigError(f"{option} {text!r}: give I/N, e.g. {option} 1/4")
    i, n = int(index), int(count)
    if not 1 <= i <= n:
        raise ConfigError(f"{option} {text!r}: I must be from 1 to N")
    return i, n


def _convert_agents(value: Any) -> tuple[Any, str | None]:
    if not isinstance(value, dict):
        return None, "'agents' must be a table (env, identities, trailers, defaults)"
    unknown = sorted(k for k in value if k not in _AGENT_KEYS)
    if unknown:
        return None, unknown_key(unknown[0], _AGENT_KEYS) + " in 'agents'"
    use_defaults = value.get("defaults", True)
    if not isinstance(use_defaults, bool):
        return None, "'agents.defaults' must be true or false"
    merged: dict[str, tuple[str, ...]] = {}
    base = AgentPatterns()
    for key in ("env", "identities", "trailers"):
        extra = value.get(key, [])
        if not (isinstance(extra, list) and all(isinstance(v, str) for v in extra)):
            return None, f"'agents.{key}' must be a list of strings"
        start: tuple[str, ...] = getattr(base, key) if use_defaults else ()
        merged[key] = start + tuple(extra)
    return AgentPatterns(**merged), None


def _norm(value: str) -> str:
    """Normalise a path-like value: forward slashes, no leading ``./``, no trailing ``/``."""
    text = value.replace("\\", "/").strip()
    while text.startswith("./"):
        text = text[2:]
    return text.rstrip("/") or "."


# Where a project keeps its tests when pytest's ``testpaths`` does not say (new-user trial:
# tabulate's ``test/``; with ``tests`` for the only root its helpers and data were code).
_TEST_FOLDERS = ("tests", "test", "testing")


def _detect_tests(root: Path) -> tuple[str, ...]:
    found = tuple(name for name in _TEST_FOLDERS if (root / name).is_dir())
    return found or ("tests",)


def _detect_sources(root: Path) -> tuple[str, ...]:
    src = root / "src"
    return ("src",) if src.is_dir() else (".",)


def pytest_testpaths(read: Reader, pyproject: dict[str, Any]) -> list[str]:
    """pytest's ``testpaths`` from whichever config file pytest itself would read first."""
    return _words(_first_options(pytest_tables(read, pyproject)).get("testpaths"))


def _first_options(tables: Mapping[str, dict[str, Any]]) -> Mapping[str, Any]:
    # pytest reads one file, the first it finds: a later one's options never apply.
    table = next(iter(tables.values()), {})
    options = table.get("ini_options", table)
    return options if isinstance(options, dict) else {}


def _words(value: object) -> list[str]:
    if isinstance(value, str):
        return value.split()
    if isinstance(value, list):
        return [str(p) for p in value]
    return []


def pytest_python_files(texts: Mapping[str, str | None]) -> tuple[str, ...]:
    """pytest's ``python_files`` from the first root config file that has a pytest section
    (pytest reads that one file only), its default where none names them. Here, not in the
    planner, so the range gate, the planner and the witness gate read it the same way."""
    value = pytest_option(texts, "python_files")
    if isinstance(value, str) and value.split():
        return tuple(value.split())
    if isinstance(value, list) and value:
        return tuple(str(v) for v in value)
    return DEFAULT_PYTHON_FILES


@dataclass(frozen=True)
class DoctestOptions:
    """Where pytest collects doctests, by its ini options: modules (``--doctest-modules``),
    text files by name (``--doctest-glob``, ``test*.txt`` by default), under ``roots``
    (``testpaths``; ``.`` for the tree)."""

    modules: bool
    globs: tuple[str, ...]
    roots: tuple[str, ...]


def pytest_doctests(texts: Mapping[str, str | None]) -> DoctestOptions:
    """The doctest options of the first root config file that has a pytest section."""
    args = option_words(pytest_option(texts, "addopts"))
    globs = [a.split("=", 1)[1] for a in args if a.startswith("--doctest-glob=")]
    globs += [b for a, b in itertools.pairwise(args) if a == "--doctest-glob"]
    roots = [p for p in option_words(pytest_option(texts, "testpaths")) if p]
    return DoctestOptions("--doctest-modules" in args, tuple(globs or ["test*.txt"]),
                          tuple(roots or ["."]))


def option_words(value: object) -> list[str]:
    """An ini option as pytest splits it: a string by shell words, a list as it is."""
    if isinstance(value, str):
        try:
            return shlex.split(value)
        except ValueError:
            return value.split()
    return [str(v) for v in value] if isinstance(value, list) else []


def pytest_option(texts: Mapping[str, str | None], key: str) -> object:
    """One ini option from the first root config file that has a pytest section (pytest reads
    that one file only); None where it is unset or the file does not parse (the
    pytest-config reason promotes such a plan anyway)."""
    try:
        tables = pytest_tables_from_texts(dict(texts))
    except ConfigError:
        return None
    first = next((tables[n] for n in PYTEST_CONFIG_FILES if n in tables), None)
    options = first.get("ini_options", first) if first is not None else None
    return options.get(key) if isinstance(options, dict) else None


def pytest_tables(read: Reader, pyproject: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Parsed pytest configuration per file, in pytest's own precedence order."""
    tables: dict[str, dict[str, Any]] = {}
    for name in PYTEST_CONFIG_FILES:
        if name == PYPROJECT:
            table = pyproject_pytest_table(pyproject)
        else:
            text = read(name)
            table = _section(name, text) if text is not None else None
        if table is not None:
            tables[name] = table
    return tables


# pytest's own precedence order; pytest.toml and .pytest.toml are pytest 9's (issue 11: they
# were neither trust files nor pytest configuration to agentgate, at any depth).
PYTEST_CONFIG_FILES = ("pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini",
                       "pyproject.toml", "tox.ini", "setup.cfg")
_TOML_FILES = ("pytest.toml", ".pytest.toml")


def _maybe_read(path: Path) -> str | None:
    if not path.is_file():
        return None
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{path.name}: not valid UTF-8; re-save it as UTF-8") from None


def pyproject_pytest_table(pyproject: dict[str, Any]) -> dict[str, Any] | None:
    tool = pyproject.get("tool", {})
    pytest_section = tool.get("pytest") if isinstance(tool, dict) else None
    if not isinstance(pytest_section, dict):
        return None
    # pytest 9 reads native TOML from [tool.pytest]; older ones from [tool.pytest.ini_options].
    return dict(pytest_section)


def pytest_tables_from_texts(texts: dict[str, str | None]) -> dict[str, dict[str, Any]]:
    """Parse each pytest config file's pytest section; a file with none is left out.

    Raises ConfigError on a file that does not parse: a caller comparing trust files treats
    that as a change, a caller loading config reports it.
    """
    tables: dict[str, dict[str, Any]] = {}
    for name, text in texts.items():
        if text is None:
            continue
        if name.rpartition("/")[2] == PYPROJECT:
            table = pyproject_pytest_table(parse_toml(text, where=name))
        else:
            table = _section(name, text)
        if table is not None:
            tables[name] = table
    return tables


_INI_SECTIONS = {"pytest.ini": "pytest", ".pytest.ini": "pytest", "tox.ini": "pytest"}


def _section(name: str, text: str) -> dict[str, Any] | None:
    """The pytest table of one configuration file; ``name`` may be a path at any depth."""
    base = name.rpartition("/")[2]
    if base in _TOML_FILES:
        table = parse_toml(text, where=name).get("pytest", {})
        # pytest.toml is pytest's file even when empty or without a [pytest] table.
        return dict(table) if isinstance(table, dict) else {}
    return _ini_section(name, text)


def _ini_section(name: str, text: str) -> dict[str, Any] | None:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text, source=name)
    except configparser.Error as exc:
        first = str(exc).splitlines()[0]
        raise ConfigError(f"{name}: malformed INI ({first}); fix the file and retry") from None
    base = name.rpartition("/")[2]
    section = _INI_SECTIONS.get(base, "tool:pytest")
    if not parser.has_section(section):
        # pytest.ini is pytest's file even when the section is empty or missing.
        return {} if base in ("pytest.ini", ".pytest.ini") else None
    return {k: " ".join(v.split()) for k, v in parser.items(section)}
