"""The base is the contract (issue 11 items 2-5): after the band, judge what head did with
the base's tests. A range that touches a test file or the harness pays for it, and so does
an import-closure band (whole files): the base's inventory of its files, cached per base,
shows a test code under test made vanish; a witnessed band names its tests itself.

The base inventory names the base's tests in the touched files; the band's own outcome data
says what head did with each; the base oracle runs the base's form of each suppressed or
edited test (and, when the harness changed, the selection under the base's harness) on
head's code. Reasons: ``suppressed-failure`` and ``harness-hid-failure`` block (4);
``rewritten-test`` blocks or is reported per ``rewritten_tests``; harmless suppressions are
notes. A base test head skipped with its base form unchanged runs on the base itself
(``skipped-by-code`` when the base ran it), and with ``--doctest-modules`` a docstring
example the patch rewrote is a ``rewritten-test`` (``run.docexamples``).
"""

from __future__ import annotations

import ast
import dataclasses
import fnmatch
import posixpath
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from agentgate.core import pysource
from agentgate.core.config import (
    PYTEST_CONFIG_FILES,
    Config,
    DoctestOptions,
    pytest_doctests,
)
from agentgate.core.model import DELETED, Change, Reason, Result, Verdict
from agentgate.core.paths import TestFiles, under_any
from agentgate.core.text import listed
from agentgate.flows import test_side
from agentgate.gate import agents, govern, trust
from agentgate.gate.checks import RangeCheck
from agentgate.git import gitio
from agentgate.graph.types import module_name
from agentgate.plan import harness, planner
from agentgate.run import docexamples, inventory, oracle, suppress
from agentgate.run.band import BandReport
from agentgate.run.oracle import OracleInput, OracleReport
from agentgate.witness import presence


def judge(root: Path, checked: RangeCheck, selection: tuple[str, ...] | None,
          report: BandReport, result: Result, *, base_given: bool,
          vouched: frozenset[str] = frozenset()) -> OracleReport | None:
    """The base oracle after the band, its reasons and notes added to ``result``; nothing
    without a base (the whole suite ran and there is no base form to judge by).
    ``vouched``: the base tests a witness left out of the band."""
    if not base_given:
        return None
    found = judge_range(root, checked, selection, report, vouched)
    asked = skipped_by_code_candidates(root, checked, report, found)
    examples = rewritten_examples(root, checked)
    ok = accepted(root, checked) if found is not None or asked or examples else frozenset()
    if found is not None:
        # A suppression the base itself ran is no harmless one: ``skipped_by_code`` says it.
        shown = dataclasses.replace(found, suppressed=tuple(
            j for j in found.suppressed if j.oracle not in _SKIPS or j.nodeid not in asked))
        more, notes = reasons(shown, policy(checked), ok, _changed_test_code(checked))
        result.reasons += more
        result.notes += notes
    if asked:
        more, notes = skipped_by_code(root, checked, asked, ok)
        result.reasons += more
        result.notes += notes
    rule = policy(checked)
    result.reasons += [_rewritten_example(e, rule) for e in examples if e.nodeid not in ok]
    result.notes += [f"accepted in {trust.ACCEPTED_FILE}: {e.nodeid} (rewritten example)"
                     for e in examples if e.nodeid in ok]
    return found


def rewritten_examples(root: Path, checked: RangeCheck) -> list[docexamples.Rewritten]:
    """With the base's ``--doctest-modules``, the docstring examples of the changed modules
    whose expected output the patch changed (``run.docexamples``)."""
    wanted = [c for c in checked.changes if c.old_blob and c.new_blob
              and c.old_blob != c.new_blob and c.path.endswith(".py")]
    if not wanted:
        return []
    base_pytest = gitio.read_many_at(root, checked.merge_base, list(PYTEST_CONFIG_FILES))
    if not pytest_doctests(base_pytest).modules:
        return []
    found: list[docexamples.Rewritten] = []
    for path, (base, head) in sorted(_texts(root, wanted).items()):
        module = module_name(checked.config, path)
        if base is not None and head is not None and module is not None and ">>>" in base:
            found += docexamples.rewritten(path, module, base, head)
    return found


def _rewritten_example(e: docexamples.Rewritten, rule: str) -> Reason:
    verdict = Verdict.BLOCKED if rule == "block" else Verdict.SCOPED
    what = ("no longer has it as the base wrote it" if e.head == docexamples.GONE
            else "runs it after other examples than the base's" if e.head == docexamples.MOVED
            else f"changed what it expects ({e.base!r} -> {e.head!r})")
    return Reason("rewritten-test", verdict, f"REWRITTEN TEST: {e.nodeid}: its example "
                  f"`{e.source}` (expecting {e.base!r}): the patch {what}. A human "
                  f"accepts it by listing it in {trust.ACCEPTED_FILE} in a commit of its own",
                  path=e.nodeid.split("::", 1)[0])


def judge_range(root: Path, checked: RangeCheck, selection: tuple[str, ...] | None,
                report: BandReport, vouched: frozenset[str] = frozenset()
                ) -> OracleReport | None:
    """The base oracle over a range, or None when the range touches no test nor harness."""
    inp = oracle_input(root, checked, selection)
    if inp is None:
        return None
    if selection is not None and vouched:
        inp = dataclasses.replace(inp, vouched=vouched)
    seen = [d for label, d in report.seen.items() if label != "shadow"]
    return oracle.run_oracle(root, checked.config, inp, seen)


def oracle_input(root: Path, checked: RangeCheck, selection: tuple[str, ...] | None
                 ) -> OracleInput | None:
    config, mb, changes = checked.config, checked.merge_base, checked.changes
    base_paths = gitio.ls_tree(root, mb)
    tests = _ContractTests(config, config.python_files, pytest_doctests(
        gitio.read_many_at(root, mb, list(PYTEST_CONFIG_FILES))))
    files = inventory.touched_tests(changes, tests, base_paths)
    texts = _texts(root, changes)
    changed_harness = harness.harness_changes(changes, config, texts)
    plugins = _plugin_files(root, base_paths, config, mb)
    changed_harness += [harness.HarnessChange(p, "a plugin the base's harness loads")
                        for c in changes for p in c.paths if p in plugins]
    support = _support(changes, tests, config.tests)
    helpers, helped = test_side_helpers(root, checked, tests, plugins,
                                        {p: base for p, (base, _head) in texts.items()})
    data = test_side.test_data(changes, tests, config)
    if data:  # any base test may read it: those the band ran are judged
        helped |= {p for p in base_paths if tests.match(p)}
    read, readers = _docs_tests_read(root, checked, tests)
    data |= read
    helped |= readers
    support = tuple(sorted({*support, *helpers, *data}))
    # A changed helper or data file of a test root may rewrite any base test of that root
    # (red-team, helper-8: a weakened assertion helper, expected values moved with the code,
    # a correct copy of the app module under tests/ shadowing the broken one).
    # Those the band ran: the rest did not run at head, so head's outcome hid nothing.
    served = set(inventory.support_served(support, tests, base_paths, config.tests)
                 ) | helped
    served &= set(_selected_files(selection, tests, base_paths))
    # A changed test module another selected test file imports is that file's helper: it
    # ran beside the band's base tests even though the range's own test files run apart.
    imported = _imported_tests(root, changes, tests, base_paths,
                               _selected_files(selection, tests, base_paths))
    if imported:
        served |= set(imported)
        support = tuple(sorted({*support, *(c.old_path or c.path for c in changes
                                            if c.status != DELETED and tests.match(
                                                c.old_path or c.path))}))
    # The files the band ran whole (an import-closure band) that the range left alone: a
    # base test in one that head did not collect vanished through code under test.
    whole = {f for f in _whole_files(selection, tests, base_paths)} - set(files) - served
    if not files and not changed_harness and not served and not whole:
        return None
    files = tuple(sorted({*files, *served, *whole}))
    if changed_harness:  # the selection runs under the base's harness: its base tests count
        files = tuple(sorted({*files, *_selected_files(selection, tests, base_paths)}))
    every = set(base_paths) | set(gitio.ls_tree(root, checked.head))
    recorded, skipped = recorded_base(root, mb, files)
    skipped = _skips_kept(skipped, _edited(changes), texts)
    return OracleInput(
        merge_base=mb, head=checked.head,
        inventory=recorded or inventory.inventory(root, config, mb, files),
        skipped_at_base=skipped,
        renames=_renames(changes),
        edited=(_edited(changes) | frozenset(served)) & frozenset(files),
        harness=tuple(sorted({*harness.harness_paths(every, config), *plugins})),
        harness_changed=bool(changed_harness), selection=selection, support=support,
        # Under a changed harness every base test of the selection is judged whole.
        untouched=frozenset() if changed_harness else frozenset(whole) - _edited(changes))


class _ContractTests(TestFiles):
    """The base's test files: those pytest's ``python_files`` names, and the text files its
    doctest glob collects (``test*.txt`` by default; red-team: a doctest file whose expected
    output the patch rewrote with the bug was no test of the contract, so no base form ran)."""

    def __init__(self, config: Config, patterns: tuple[str, ...],
                 doctests: DoctestOptions) -> None:
        super().__init__(config, patterns)
        self.globs, self.doc_roots = doctests.globs, doctests.roots

    def match(self, path: str) -> bool:
        if path.endswith(".py"):
            return super().match(path)
        name = posixpath.basename(path)
        return (any(fnmatch.fnmatchcase(name, g) for g in self.globs)
                and ("." in self.doc_roots or under_any(path, self.doc_roots)))


def _skips_kept(skipped: frozenset[str], edited: frozenset[str],
                texts: dict[str, tuple[str | None, str | None]]) -> frozenset[str]:
    """The recording's skips that still speak for head: a test's in a file the range did not
    edit, or one whose own definition (decorators included) and its file's other top-level
    code the range left as they were. The recording's environment is not this run's (a
    ``skipif`` on a variable it set): a skip the patch may have written on the test is judged
    by its base form, as before."""
    changed: dict[str, set[str] | None] = {}
    kept = []
    for nodeid in skipped:
        path, _, rest = nodeid.partition("::")
        if path in edited and path not in changed:
            changed[path] = _changed_definitions(*texts.get(path, (None, None)))
        tops = changed.get(path, set())
        if tops is not None and rest.split("::", 1)[0].split("[", 1)[0] not in tops:
            kept.append(nodeid)
    return frozenset(kept)


def _changed_definitions(base: str | None, head: str | None) -> set[str] | None:
    """The top-level functions and classes whose definition differs between two texts of a
    file; None when its other top-level code differs too, or a text is missing or does not
    parse (then every test of the file counts as changed)."""
    found: list[tuple[dict[str, str], list[str]]] = []
    for text in (base, head):
        tree = pysource.parse(text)
        if tree is None:
            return None
        defs = {n.name: ast.dump(n) for n in tree.body
                if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}
        found.append((defs, [ast.dump(n) for n in tree.body if getattr(n, "name", None)
                             not in defs]))
    (old, old_rest), (new, new_rest) = found
    if old_rest != new_rest:
        return None
    return {n for n in old.keys() | new.keys() if old.get(n) != new.get(n)}


def _imported_tests(root: Path, changes: list[Change], tests: TestFiles,
                    base_paths: dict[str, str], selected: list[str]) -> list[str]:
    """The selected base test files that import a test module the range modified (by its
    file's name, in an import statement of their base text)."""
    stems = {posixpath.splitext(posixpath.basename(c.old_path or c.path))[0]
             for c in changes if c.status != DELETED and c.old_blob and c.old_blob != c.new_blob
             and tests.match(c.old_path or c.path)}
    changed = {c.old_path or c.path for c in changes}
    if not stems:
        return []
    candidates = [f for f in selected if f not in changed and f in base_paths]
    blobs = gitio.cat_blobs(root, [base_paths[f] for f in candidates])
    found = []
    for path in candidates:
        text = blobs.get(base_paths[path], b"").decode("utf-8", "surrogateescape")
        if any(s in text for s in stems) and stems & _imported_names(text):
            found.append(path)
    return found


def _imported_names(text: str) -> set[str]:
    """Every dotted part of every module a text imports (``from tests.test_a import x``:
    tests, test_a; ``from . import test_a``: test_a); none for text that does not parse (it
    collects nothing at the base)."""
    tree = pysource.parse(text)
    if tree is None:
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(p for a in node.names for p in a.name.split("."))
        elif isinstance(node, ast.ImportFrom):
            names.update((node.module or "").split("."))
            names.update(a.name for a in node.names)
    return names


def _support(changes: list[Change], tests: TestFiles, roots: tuple[str, ...]
             ) -> tuple[str, ...]:
    """The changed paths (base or head) under a test root that are neither test files nor
    conftests (those have rules of their own)."""
    return tuple(sorted({
        p for c in changes for p in c.paths
        if under_any(p, roots) and not tests.match(p) and posixpath.basename(p) != "conftest.py"
    }))


def recorded_base(root: Path, merge_base: str, files: tuple[str, ...]
                  ) -> tuple[inventory.Inventory | None, frozenset[str]]:
    """From a witness recorded at the merge-base itself: the base inventory (issue 11 item
    2), or None (no store, no witness there, or one that did not collect every file
    cleanly); and the base tests it saw skipped or xfailed there."""
    if not files or not presence.store_path(root).is_file():
        return None, frozenset()
    from agentgate.witness.depgraph import WHOLE_SUITE
    from agentgate.witness.store import Store  # sqlite and the decoder: only when a store exists

    witness = Store.for_repo(root).load(merge_base)
    if witness is None or witness.info.get(WHOLE_SUITE) is not True:
        return None, frozenset()  # narrowed (-k, -x): it may not name every base test
    outcomes = {n: t.outcome for n, t in witness.tests.items()}
    skipped = frozenset(n for n, o in outcomes.items() if o in ("skipped", "xfailed"))
    return inventory.from_recording(files, outcomes, witness.collected,
                                    witness.collect_errors), skipped


def _selected_files(selection: tuple[str, ...] | None, tests: TestFiles,
                    base_paths: dict[str, str]) -> list[str]:
    """The base's test files the band selected (every one for the whole suite)."""
    if selection is None:
        return [p for p in base_paths if tests.match(p)]
    return [f for f in {s.split("::", 1)[0] for s in selection} if f in base_paths
            and tests.match(f)]


def _whole_files(selection: tuple[str, ...] | None, tests: TestFiles,
                 base_paths: dict[str, str]) -> list[str]:
    """The base's test files a narrowed band selected whole (not by node id)."""
    if selection is None:
        return []
    return [s for s in selection if "::" not in s and s in base_paths and tests.match(s)]


def _renames(changes: list[Change]) -> dict[str, str]:
    """Base path -> head path of renamed files; deleted files map to ""."""
    moved = {c.old_path: c.path for c in changes if c.old_path and c.old_path != c.path
             and c.status.startswith("R")}
    return {**moved, **{c.path: "" for c in changes if c.status == DELETED}}


def _edited(changes: list[Change]) -> frozenset[str]:
    return frozenset(c.old_path or c.path for c in changes
                     if c.status != DELETED and c.old_blob and c.old_blob != c.new_blob)


_BASE_FORM = {"passed": "passes", "xfailed": "xfails, as its base marker expects,"}
_TEXT_NAMES = (*harness.ENTRY_POINT_FILES, *PYTEST_CONFIG_FILES)


def _plugin_files(root: Path, base_paths: dict[str, str], config: Config,
                  merge_base: str) -> set[str]:
    """The base's tree modules pytest loads as plugins: what its conftests and test modules
    name in ``pytest_plugins``, and what its ``addopts`` load with ``-p`` (red-team round 4:
    a fixture of an ``-p app.testing`` plugin was loosened with the bug), with their
    helpers. Harness, laid over as at the base like the conftests themselves."""
    return _plugins_named(root, _plugin_names(root, merge_base), lambda: base_paths, config,
                          merge_base)


def _plugins_named(root: Path, names: list[str], base_paths: Callable[[], dict[str, str]],
                   config: Config, merge_base: str) -> set[str]:
    if not names:
        return set()
    plugins = harness.plugin_files(names, base_paths(), config.sources)
    if not plugins:
        return plugins
    tests = TestFiles(config)
    return plugins | _test_side(root, config, merge_base, tests, plugins).plugin_helpers()


def _plugin_names(root: Path, merge_base: str) -> list[str]:
    """The module names the base gives pytest as plugins: one ``git grep`` for the files
    that say ``pytest_plugins``, one read of them, and the pytest configuration's ``-p``."""
    declaring = sorted(p for p in gitio.files_matching(root, merge_base, "pytest_plugins",
                                                       fixed=True) if p.endswith(".py"))
    blobs = gitio.ls_tree(root, merge_base, tuple(declaring)) if declaring else {}
    texts = gitio.cat_blobs(root, list(blobs.values()))
    names = [n for p in declaring if blobs.get(p) in texts
             for n in harness.plugins_declared(
                 texts[blobs[p]].decode("utf-8", "surrogateescape")) or ()]
    return names + harness.addopts_plugins(gitio.read_many_at(root, merge_base,
                                                              list(PYTEST_CONFIG_FILES)))


def warm(root: Path, checked: RangeCheck) -> None:
    """What the judgement after the runs reads of the base and caches, read now: the runs
    may not see agentgate write its state (``run.tamper``), and the base's import graph for
    the plugins' and the tests' helpers is such state. Nothing when the base loads no
    plugin and the range changes no module named or written for tests."""
    mb = checked.merge_base
    plugins = _plugins_named(root, _plugin_names(root, mb), lambda: gitio.ls_tree(root, mb),
                             checked.config, mb)
    test_side_helpers(root, checked, TestFiles(checked.config), plugins)


def test_side_helpers(root: Path, checked: RangeCheck, tests: TestFiles,
                      plugins: Iterable[str] = (), known: Mapping[str, str | None] | None = None
                      ) -> tuple[set[str], set[str]]:
    """The changed modules outside the test roots that are test-side at the base
    (``flows.test_side``), and the base's test files they serve. A test's helper is the
    base's too, wherever it lives (red-team round 4: an assertion helper in
    ``app/testing.py``, ``tests/helpers.py`` above ``testpaths``, each loosened with the
    bug): the base forms of the test files it serves run with it as at the base."""
    config, mb = checked.config, checked.merge_base
    changed = sorted({p for c in checked.changes for p in c.paths
                      if p.endswith(".py") and not tests.match(p) and not under_any(
                          p, config.tests) and posixpath.basename(p) != harness.CONFTEST})
    if not changed:
        return set(), set()
    read = test_side.base_text(root, mb, prefetch=[p for p in changed
                                                    if not test_side.named_for_tests(p)],
                               known=known)  # ``_texts``: the range's base texts, read once
    bound = test_side.bound_as_tests(root, mb, tests)
    if not any(test_side.named_for_tests(p) or module_name(config, p) in bound
               or test_side.acts_for_tests(read(p)) for p in changed):
        return set(), set()  # the base's graph is built only when a candidate changed
    side = _test_side(root, config, mb, tests, plugins, read, bound)
    helpers: set[str] = set()
    helped: set[str] = set()
    for path in changed:
        module = side.module(path)
        users = None if module is None else side.users(module)  # None: new at head, or code
        if users is None:
            continue
        served = side.served(users)
        if served:
            helpers.add(path)
            helped |= served
    return helpers, helped


def _docs_tests_read(root: Path, checked: RangeCheck, tests: TestFiles
                     ) -> tuple[set[str], set[str]]:
    """The changed inert files (docs, Markdown) that a base test file names, and those test
    files: a README whose examples ``doctest.testfile`` runs is that test's data, the base's
    like a helper (red-team round 5: its expected output edited with the bug). One ``git
    grep`` of the base for all of them, and one read of the test files it finds."""
    docs = sorted({p for c in checked.changes for p in c.paths if not p.endswith(".py")
                   and planner.inert(checked.config, p)})
    names = {posixpath.basename(p) for p in docs}
    naming = sorted(f for f in (gitio.files_matching(root, checked.merge_base, tuple(names),
                                                     fixed=True) if names else ())
                    if tests.match(f))
    texts = gitio.read_many_at(root, checked.merge_base, naming) if naming else {}
    read: set[str] = set()
    readers: set[str] = set()
    for path in docs:
        found = {f for f, text in texts.items() if posixpath.basename(path) in (text or "")}
        if found:
            read.add(path)
            readers |= found
    return read, readers


def _test_side(root: Path, config: Config, merge_base: str, tests: TestFiles,
               plugins: Iterable[str], read: Callable[[str], str | None] | None = None,
               bound: frozenset[str] = frozenset()) -> test_side.TestSide:
    from agentgate.graph import build as graph_build

    return test_side.TestSide(graph_build.build(root, config, merge_base), config, tests,
                              plugins, read or test_side.base_text(root, merge_base), bound)


def _texts(root: Path, changes: list[Change]) -> dict[str, tuple[str | None, str | None]]:
    """(base, head) text of the changed files ``harness_changes`` reads."""
    wanted = [c for c in changes if any(p.endswith(".py") or posixpath.basename(p) in
                                        _TEXT_NAMES for p in c.paths)]
    blobs = gitio.cat_blobs(root, [b for c in wanted for b in (c.old_blob, c.new_blob) if b])

    def text(blob: str | None) -> str | None:
        data = blobs.get(blob) if blob else None
        return None if data is None else data.decode("utf-8", errors="surrogateescape")

    return {p: (text(c.old_blob), text(c.new_blob)) for c in wanted for p in c.paths}


# --- skipped by the patch's code -------------------------------------------------------------

_SKIPS = ("skipped", "xfailed")


def skipped_by_code_candidates(root: Path, checked: RangeCheck, report: BandReport,
                               found: OracleReport | None) -> list[str]:
    """The base tests head skipped or xfailed that nothing else judges: their base form is
    what head ran (or is itself skipped on head's code, by the oracle), so the skip came from
    code under test or the harness -- a ``skipif`` on what the code says, an ``xfail``
    condition, ``importorskip`` of a module the patch broke. As the base names them; those a
    witness recorded at the base saw skipped (with their definition unchanged) are none."""
    head = suppress.merged(d for label, d in report.seen.items() if label != "shadow")
    back = {new: old for old, new in _renames(checked.changes).items() if new}
    judged = {j.nodeid: j.oracle for j in (found.suppressed if found else ())}
    skips: list[str] = []
    for nodeid, entry in sorted(head["tests"].items()):
        if entry.get("reported") not in _SKIPS or entry.get("hidden_by"):
            continue  # ran, or a skip code under test raised: the band failed it already
        path, sep, rest = nodeid.partition("::")
        base_id = back.get(path, path) + sep + rest
        if base_id not in judged:
            skips.append(base_id)
    # The oracle judges a test whose definition the patch changed (a marker it wrote), by its
    # base form on head's code; a base form that skips there is asked too.
    edited = _edited(checked.changes)
    texts = _texts(root, checked.changes) if edited & {n.split("::", 1)[0] for n in skips} \
        else {}
    asked = [n for n in skips if _unchanged_definition(n, edited, texts)]
    asked += [n for n, o in judged.items() if o in _SKIPS]
    if not asked:
        return []
    files = tuple(sorted({n.split("::", 1)[0] for n in asked}))
    _, skipped = recorded_base(root, checked.merge_base, files)
    if skipped:
        kept = _skips_kept(skipped, edited, texts or _texts(root, checked.changes))
        asked = [n for n in asked if n not in kept]
    return sorted(set(asked))


def _unchanged_definition(nodeid: str, edited: frozenset[str],
                          texts: dict[str, tuple[str | None, str | None]]) -> bool:
    """Whether the base's test is as head has it: its file unedited, or its own definition
    and the file's other top-level code unchanged."""
    path, _, rest = nodeid.partition("::")
    if path not in edited:
        return True
    changed = _changed_definitions(*texts.get(path, (None, None)))
    return changed is not None and rest.split("::", 1)[0].split("[", 1)[0] not in changed


def skipped_by_code(root: Path, checked: RangeCheck, asked: list[str], ok: frozenset[str]
                    ) -> tuple[list[Reason], list[str]]:
    """``asked`` run on the base itself: one the base ran to a pass or a failure that head
    skips blocks (4) as ``skipped-by-code``, unless accepted (a note); one the base skips or
    xfails too is nothing to say (platform skips would fill the report)."""
    at_base = oracle.outcomes_at_base(root, checked.config, checked.merge_base, asked)
    if at_base.problem:
        return [Reason("base-oracle-incomplete", Verdict.FAILED, at_base.problem)], []
    ran = [n for n in asked if at_base.outcomes.get(n) in ("passed", "failed")]
    notes = [f"accepted in {trust.ACCEPTED_FILE}: {n} (skipped at head, "
             f"{at_base.outcomes[n]} on the base)" for n in ran if n in ok]
    out: list[Reason] = []
    for test, ids in _by_test(n for n in ran if n not in ok).items():
        what = (f"{ids[0]} {at_base.outcomes[ids[0]]}" if len(ids) == 1 else
                f"{test}: {len(ids)} cases ({listed(ids, 3)}) ran")
        out.append(Reason(
            "skipped-by-code", Verdict.BLOCKED,
            f"{what} on the base and is skipped or xfailed at head, though its base form is "
            "what ran: the patch's code or harness decides it skips (a skipif or xfail "
            "condition on what the code says, importorskip of a module it broke). A human "
            f"accepts it by listing it in {trust.ACCEPTED_FILE} in a commit of its own",
            path=_file(test)))
    return out, notes


# --- reasons -----------------------------------------------------------------------------------

def policy(checked: RangeCheck) -> str:
    """``rewritten_tests``: the base's config, else block for a range with an agent's commit."""
    if checked.config.rewritten_tests is not None:
        return checked.config.rewritten_tests
    agent = any(agents.from_commit(c, checked.config.agents) for c in checked.commits)
    return "block" if agent else "report"


def accepted(root: Path, checked: RangeCheck) -> frozenset[str]:
    """Node ids a human accepted in ``.agentgate/accepted``: a trust file, so the range's
    trust check has already refused it from an agent or mixed with code. With
    ``trust_signers``, an id added in the range counts only when the commit that added it is
    signed by an allowed key, as a governing commit must be (found in review: identity alone
    accepted a hidden failure)."""
    at_head = suppress.accepted_ids(gitio.read_text_at(root, checked.head, trust.ACCEPTED_FILE))
    if checked.config.trust_signers is None or not at_head:
        return at_head
    ok = set(suppress.accepted_ids(
        gitio.read_text_at(root, checked.merge_base, trust.ACCEPTED_FILE)))
    for commit in checked.commits:
        if len(commit.parents) != 1 or not govern.vouched_for(
                root, checked.config, checked.merge_base, commit):
            continue
        before, after = (suppress.accepted_ids(gitio.read_text_at(root, rev, trust.ACCEPTED_FILE))
                         for rev in (commit.parents[0], commit.sha))
        ok |= after - before
    return at_head & frozenset(ok)


def _changed_test_code(checked: RangeCheck) -> frozenset[str]:
    """The Python files the range changed under the test roots (test files, helpers,
    conftests) and conftests anywhere."""
    roots = tuple(checked.config.tests)
    return frozenset(p for c in checked.changes for p in c.paths if p.endswith(".py") and (
        under_any(p, roots) or posixpath.basename(p) == "conftest.py"))


def reasons(found: OracleReport, rule: str, ok: frozenset[str],
            changed: frozenset[str] | None = None) -> tuple[list[Reason], list[str]]:
    """The oracle's findings as reasons and notes; ``changed``: the range's paths (None:
    not known), to say whether a rewritten test's own file was edited or its helpers."""
    out = [Reason("base-oracle-incomplete", Verdict.FAILED, p) for p in found.problems]
    passed = [j for j in found.suppressed if j.oracle != "failed"]
    notes = _harmless([j for j in passed if not j.stand_in])
    notes += [f"unstable case id: {j.nodeid} is collected under a new id in every run of the "
              f"base (a pid, a random or a time value in its parameters); its base form ran "
              f"as {_case(j.stand_in)} (of its function's cases new to the base, the worst) "
              f"and {_BASE_FORM.get(j.oracle, 'is skipped')} on head's code"
              for j in passed if j.stand_in]
    hidden = [j for j in found.suppressed if j.oracle == "failed"]
    notes += [f"accepted in {trust.ACCEPTED_FILE}: {j.nodeid} ({j.head} at head)"
              for j in hidden if j.nodeid in ok]
    out += _suppressed([j for j in hidden if j.nodeid not in ok])
    out += [_rewritten(j, rule, changed) for j in found.rewritten if j.nodeid not in ok]
    notes += [f"accepted in {trust.ACCEPTED_FILE}: {j.nodeid} (rewritten)"
              for j in found.rewritten if j.nodeid in ok]
    for test, ids in _by_test(found.harness_hidden).items():
        what = (f"{ids[0]} fails" if len(ids) == 1
                else f"{test}: {len(ids)} cases ({listed(ids, 3)}) fail")
        out.append(Reason("harness-hid-failure", Verdict.BLOCKED, f"{what} under the base's "
                          "harness on head's code but not under the patch's harness",
                          path=_file(test)))
    return out, notes


def _suppressed(judged: list[suppress.Judged]) -> list[Reason]:
    """One blocking reason per hidden failure; the cases of one parametrized test hidden
    alike in one reason, which names them (a conftest that deselected click's 35-case
    ``test_styling`` wrote 35 reasons)."""
    groups: dict[tuple[str, str], list[suppress.Judged]] = {}
    for j in judged:
        groups.setdefault((j.nodeid.split("[", 1)[0], j.head), []).append(j)
    out = []
    for (test, head), cases in groups.items():
        first = cases[0]
        if len(cases) == 1:
            detail = (f"{first.nodeid} fails in its base form on head's code ({first.failure}) "
                      f"and the patch hid it: {head} at head")
            if first.stand_in:
                detail += (f" (its id differs in every collection of the base: its base form "
                           f"ran as {_case(first.stand_in)})")
        else:
            detail = (f"{test}: {len(cases)} cases fail in their base form on head's code "
                      f"({listed([j.nodeid for j in cases], 3)}; the first: {first.failure}) and "
                      f"the patch hid them: {head} at head")
        # How a human means it (new-user trial: the reason did not say, where rewritten-test
        # does, and the text shows three of a test's cases).
        which = "it" if len(cases) == 1 else "each case id (--format json lists them)"
        detail += (f"; a human accepts {which} by listing it in {trust.ACCEPTED_FILE} in a "
                   "commit of its own")
        out.append(Reason("suppressed-failure", Verdict.BLOCKED, detail, path=_file(test)))
    return out


def _by_test(nodeids: Iterable[str]) -> dict[str, list[str]]:
    """Node ids by the test they are cases of (``test_f[1]``, ``test_f[2]`` -> ``test_f``)."""
    found: dict[str, list[str]] = {}
    for nodeid in nodeids:
        found.setdefault(nodeid.split("[", 1)[0], []).append(nodeid)
    return found


def _harmless(judged: list[suppress.Judged]) -> list[str]:
    """One note per harmless suppression; the cases of one parametrized test that ended
    alike in one note (a skip marker on a test of 18 cases wrote 18 notes)."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for j in judged:
        groups.setdefault((j.nodeid.split("[", 1)[0], j.head, j.oracle), []).append(j.nodeid)
    notes = []
    for (test, head, base_form), ids in groups.items():
        how = _BASE_FORM.get(base_form, "is skipped")
        if len(ids) == 1:
            notes.append(f"harmless suppression: {ids[0]} ({head} at head; its base form "
                         f"{how} on head's code)")
        else:
            notes.append(f"harmless suppression: {test}, {len(ids)} cases ({head} at head; "
                         f"the base form of each {how} on head's code)")
    return notes


def _rewritten(j: suppress.Judged, rule: str, changed: frozenset[str] | None = None
               ) -> Reason:
    verdict = Verdict.BLOCKED if rule == "block" else Verdict.SCOPED
    what = "was edited"
    if changed is not None and _file(j.nodeid) not in changed:
        # Its file is the base's: the test code it runs changed elsewhere (new-user trial:
        # "was edited" where only a helper module had).
        helpers = sorted(changed)
        what = (f"was not edited, but test code it runs was ({listed(helpers, 3)})" if helpers
                else "was not edited, but what it runs as test code was")
    return Reason("rewritten-test", verdict, f"REWRITTEN TEST: {j.nodeid} {what}; its "
                  f"base form fails on head's code ({j.failure}) while its new form passes. "
                  f"A human accepts it by listing it in {trust.ACCEPTED_FILE} "
                  "in a commit of its own", path=_file(j.nodeid))


def _case(nodeid: str) -> str:
    """``path::test[case]`` -> ``test[case]``."""
    return nodeid.rpartition("::")[2]


def _file(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]
