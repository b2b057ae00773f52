"""The planner's rules on hand-built import graphs: each test fails if its rule is removed."""

from __future__ import annotations

from pathlib import Path

from agentgate.core.config import Config
from agentgate.core.model import Change, Verdict
from agentgate.graph.types import Escalation, ImportGraph
from agentgate.plan import planner
from agentgate.plan.markers import AddedMarker
from agentgate.plan.planner import Plan, PlanInput, plan

CONFIG = Config(root=Path("."), tests=("tests",), sources=(".",))

# app.pricing.rates <- app.pricing.tax <- app.checkout.session <- tests/test_session.py
MODULES = {
    "app": "app/__init__.py",
    "app.pricing": "app/pricing/__init__.py",
    "app.pricing.rates": "app/pricing/rates.py",
    "app.pricing.tax": "app/pricing/tax.py",
    "app.checkout": "app/checkout/__init__.py",
    "app.checkout.session": "app/checkout/session.py",
    "app.util": "app/util.py",
    "tests.helpers": "tests/helpers.py",
    "tests.test_session": "tests/test_session.py",
    "tests.test_tax": "tests/test_tax.py",
    "tests.test_util": "tests/test_util.py",
    "tests.unit.conftest": "tests/unit/conftest.py",
    "tests.unit.test_fast": "tests/unit/test_fast.py",
}
IMPORTS = {
    "app.pricing.tax": {"app.pricing.rates"},
    "app.checkout.session": {"app.pricing.tax"},
    "tests.test_session": {"app.checkout.session"},
    "tests.test_tax": {"tests.helpers"},
    "tests.helpers": {"app.pricing.tax"},
    "tests.test_util": {"app.util"},
}


def graph(
    modules: dict[str, str] | None = None,
    imports: dict[str, set[str]] | None = None,
    escalations: tuple[Escalation, ...] = (),
) -> ImportGraph:
    """As graph.build makes them: every module also imports its parent packages."""
    mods = MODULES if modules is None else modules
    imps = IMPORTS if imports is None else imports
    return ImportGraph(
        modules=dict(mods),
        imports={m: frozenset(imps.get(m, set()) | _parents(m, mods)) for m in mods},
        escalations=escalations,
        files={path: name for name, path in mods.items()},
    )


def _parents(name: str, modules: dict[str, str]) -> set[str]:
    parts = name.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))} & set(modules)


def run(*changes: Change, config: Config = CONFIG, g: ImportGraph | None = None,
        **fields: object) -> Plan:
    inp = PlanInput(config=config, changes=changes, graph=g or graph(), **fields)  # type: ignore[arg-type]
    return plan(inp)


def M(path: str) -> Change:
    return Change(status="M", path=path)


def codes(p: Plan) -> list[str]:
    assert all(r.verdict is Verdict.PROMOTE for r in p.reasons)
    return [r.code for r in p.reasons]


def test_three_link_chain_and_its_why() -> None:
    p = run(M("app/pricing/rates.py"))
    assert p.tests == ("tests/test_session.py", "tests/test_tax.py")
    assert p.why["tests/test_session.py"] == (
        "tests/test_session.py", "app/checkout/session.py", "app/pricing/tax.py",
        "app/pricing/rates.py",
    )
    assert p.why["tests/test_tax.py"] == (  # through a test helper
        "tests/test_tax.py", "tests/helpers.py", "app/pricing/tax.py", "app/pricing/rates.py",
    )
    assert codes(p) == []
    assert p.suite == tuple(sorted(p for p in MODULES.values() if "/test_" in p))


def test_unrelated_module_selects_only_its_importers() -> None:
    p = run(M("app/util.py"))
    assert p.tests == ("tests/test_util.py",)


def test_changed_test_file_runs_itself() -> None:
    p = run(M("tests/test_util.py"))
    assert p.tests == ("tests/test_util.py",)
    assert p.why["tests/test_util.py"] == ("tests/test_util.py",)


def test_deleted_module_still_imported_impacts_its_importers() -> None:
    g = graph(imports={**IMPORTS, "tests.test_util": {"app.util", "app.gone"}})
    p = run(Change(status="D", path="app/gone.py"), g=g)
    assert p.tests == ("tests/test_util.py",)
    assert p.why["tests/test_util.py"] == ("tests/test_util.py", "app/gone.py")


def test_renamed_module_seeds_old_and_new_names() -> None:
    modules = {**MODULES, "app.fresh": "app/fresh.py", "tests.test_fresh": "tests/test_fresh.py"}
    imports = {**IMPORTS, "tests.test_util": {"app.stale"}, "tests.test_fresh": {"app.fresh"}}
    p = run(Change(status="R", path="app/fresh.py", old_path="app/stale.py"),
            g=graph(modules, imports))
    assert p.tests == ("tests/test_fresh.py", "tests/test_util.py")


def test_conftest_impacts_every_test_at_and_below_its_folder() -> None:
    p = run(M("tests/unit/conftest.py"))
    assert p.tests == ("tests/unit/test_fast.py",)
    assert p.why["tests/unit/test_fast.py"] == ("tests/unit/test_fast.py", "tests/unit/conftest.py")
    assert codes(p) == []
    upper = run(M("tests/conftest.py"))
    assert upper.tests == upper.suite


def test_conftest_importing_changed_code_impacts_its_folder() -> None:
    g = graph(imports={**IMPORTS, "tests.unit.conftest": {"app.util"}})
    p = run(M("app/util.py"), g=g)
    assert p.tests == ("tests/test_util.py", "tests/unit/test_fast.py")
    assert p.why["tests/unit/test_fast.py"] == (
        "tests/unit/test_fast.py", "tests/unit/conftest.py", "app/util.py")


def test_root_conftest_changed_promotes_and_reaching_a_change_runs_every_test() -> None:
    p = run(M("conftest.py"))
    assert codes(p) == ["root-conftest"]
    assert p.tests == p.suite
    g = graph({**MODULES, "conftest": "conftest.py"}, {**IMPORTS, "conftest": {"app.util"}})
    reaching = run(M("app/util.py"), g=g)
    assert [r.code for r in reaching.reasons] == ["root-conftest-imports"]
    assert (reaching.promoted, reaching.tests) == (False, reaching.suite)
    assert codes(run(M("app/pricing/rates.py"), g=g)) == []


def test_package_data_impacts_importers_of_any_module_in_the_package() -> None:
    p = run(M("app/pricing/table.json"))
    assert p.tests == ("tests/test_session.py", "tests/test_tax.py")
    assert p.why["tests/test_tax.py"][-1] == "app/pricing/table.json"
    assert run(M("app/checkout/templates/page.html")).tests == ("tests/test_session.py",)


def test_package_init_change_reaches_importers_of_its_submodules() -> None:
    """``import app.pricing.tax`` runs ``app/pricing/__init__.py`` (the graph's parent edge)."""
    p = run(M("app/pricing/__init__.py"))
    assert p.tests == ("tests/test_session.py", "tests/test_tax.py")
    assert p.why["tests/test_session.py"][-2:] == ("app/pricing/tax.py", "app/pricing/__init__.py")


def test_docs_and_markdown_impact_nothing() -> None:
    p = run(M("README.md"), M("docs/guide.rst"), M("docs/img/arch.png"))
    assert p.tests == ()
    assert codes(p) == []
    assert any("README.md" in n for n in p.notes)


def test_a_data_file_outside_the_packages_may_be_read_by_any_test() -> None:
    # Issue 12: rates/vat.json, read by app/tax.py at run time, was inert: no test ran.
    p = run(M("rates/vat.json"))
    assert p.tests == ("tests/test_session.py", "tests/test_tax.py", "tests/test_util.py",
                       "tests/unit/test_fast.py")
    assert p.why["tests/test_tax.py"] == ("tests/test_tax.py", "rates/vat.json")


def test_an_inert_pattern_makes_a_file_impact_nothing() -> None:
    config = Config(root=Path("."), tests=("tests",), sources=(".",),
                    inert=("scripts/*", "*.md"))
    assert run(M("scripts/release.sh"), M("README.md"), config=config).tests == ()


def test_agentgates_own_files_impact_nothing_whatever_inert_says() -> None:
    """New-user trial (dateutil): a human's scope commit read as a data file any test may
    read ran every test file. The trust gate judges these files; no test reads them."""
    config = Config(root=Path("."), tests=("tests",), sources=(".",), inert=("*.md",),
                    ledger="ci/freezes")
    files = (".agentgate/scope", ".agentgate/fixtures.sha256", ".agentgate/accepted",
             "ci/freezes/test_x.json")
    assert run(*(M(f) for f in files), config=config).tests == ()
    assert run(M(".agentgates/scope"), config=config).tests != ()  # not agentgate's


def test_data_file_in_a_test_root_impacts_that_root() -> None:
    p = run(M("tests/data/expected.json"))
    assert p.tests == p.suite
    assert p.why["tests/test_util.py"] == ("tests/test_util.py", "tests/data/expected.json")


def test_fixture_outside_test_roots_feeds_the_whole_suite() -> None:
    config = Config(root=Path("."), tests=("tests",), fixtures=("fixtures",))
    p = run(M("fixtures/order.json"), config=config)
    assert p.tests == p.suite


def test_protected_module_reached_transitively_promotes() -> None:
    config = Config(root=Path("."), tests=("tests",), protected=("app/pricing",))
    g = graph(imports={**IMPORTS, "app.pricing.tax": {"app.pricing.rates", "app.util"}})
    p = run(M("app/util.py"), config=config, g=g)
    assert codes(p) == ["protected"]
    assert p.reasons[0].path == "app/pricing/tax.py"
    assert "app/pricing/tax.py -> app/util.py" in p.reasons[0].detail
    assert codes(run(M("app/util.py"), g=g)) == []  # the same change, nothing protected
    untouched = Config(root=Path("."), tests=("tests",), protected=("app/checkout",))
    assert codes(run(M("tests/test_util.py"), config=untouched, g=g)) == []


def test_protected_test_prefix_counts_too() -> None:
    config = Config(root=Path("."), tests=("tests",), protected=("tests/unit",))
    assert codes(run(M("tests/unit/conftest.py"), config=config)) == ["protected"]


PYPROJECT = '[project]\nname = "x"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n'


def test_pytest_configuration_changes_promote() -> None:
    def changed(path: str, base: str | None, head: str | None) -> list[str]:
        return codes(run(M(path), pytest_changed={path: (base, head)}))

    assert changed("pyproject.toml", PYPROJECT, PYPROJECT.replace("-q", "-q -k fast")) == [
        "pytest-config"]
    assert changed("pyproject.toml", PYPROJECT, PYPROJECT.replace('"x"', '"y"')) == []
    assert changed("pyproject.toml", PYPROJECT, PYPROJECT + "[oops\n") == [
        "pytest-config", "dependencies"]  # neither table can be compared
    assert changed("tox.ini", "[tox]\nenv = a\n", "[tox]\nenv = b\n") == []
    assert changed("tox.ini", "[pytest]\naddopts = -x\n", "[pytest]\naddopts = -x -p no:x\n") \
        == ["pytest-config"]
    assert changed("setup.cfg", "[metadata]\nname = a\n",
                   "[metadata]\nname = a\n[tool:pytest]\naddopts = -q\n") == ["pytest-config"]
    assert changed("pytest.ini", None, "[pytest]\n") == ["pytest-config"]
    assert changed("tests/pytest.ini", "[pytest]\n", "[pytest]\nmarkers = a\n") == [
        "pytest-config"]


def test_a_gitattributes_change_promotes() -> None:
    """It decides the bytes every checkout gives tracked files: any test may read others."""
    for path in (".gitattributes", "data/.gitattributes"):
        assert codes(run(M(path))) == ["checkout-attributes"], path
    assert codes(run(M("docs/gitattributes.md"))) == []


DEPS = '[project]\nname = "x"\ndependencies = ["attrs>=23"]\n'
SETUP_CFG = "[metadata]\nname = x\n\n[options]\ninstall_requires =\n    attrs>=23\n"


def test_dependency_changes_promote() -> None:
    """The graph stops at the repository's edge: what the project installs changing can
    reach any module, so the full suite runs."""
    def changed(path: str, base: str | None = None, head: str | None = None) -> list[str]:
        return codes(run(M(path), pytest_changed={path: (base, head)}))

    for path in ("requirements.txt", "requirements-dev.txt", "requirements/test.txt",
                 "services/api/requirements.in", "constraints.txt", "poetry.lock",
                 "uv.lock", "Pipfile.lock", "setup.py", "pylock.toml", "environment.yml"):
        assert changed(path) == ["dependencies"], path
    for path in ("docs/requirements.md", "app/requirements.py.txt.bak", "notes.txt"):
        assert changed(path) == [], path
    assert changed("pyproject.toml", DEPS, DEPS.replace(">=23", ">=24")) == ["dependencies"]
    assert changed("pyproject.toml", DEPS, DEPS + '\n[dependency-groups]\ntest = ["pytest"]\n') \
        == ["dependencies"]
    assert changed("pyproject.toml", DEPS, DEPS.replace('"x"', '"y"')) == []  # metadata only
    assert changed("pkg/pyproject.toml", None, DEPS) == ["dependencies"]  # a new package
    assert changed("setup.cfg", SETUP_CFG, SETUP_CFG.replace(">=23", "<23")) == ["dependencies"]
    assert changed("setup.cfg", SETUP_CFG, SETUP_CFG.replace("name = x", "name = y")) == []
    renamed = Change(status="R", path="requirements/base.txt", old_path="requirements.txt")
    assert codes(run(renamed)) == ["dependencies"]
    [reason] = run(M("requirements.txt")).reasons
    assert reason.path == "requirements.txt" and "full suite required" in reason.detail


def test_pytest_python_files_decides_what_a_test_file_is() -> None:
    modules = {**MODULES, "tests.check_cart": "tests/check_cart.py"}
    g = graph(modules, {**IMPORTS, "tests.check_cart": {"app.util"}})
    ini = {"pytest.ini": "[pytest]\npython_files = check_*.py\n"}
    p = run(M("app/util.py"), g=g, pytest_head=ini)
    assert p.tests == ("tests/check_cart.py",)
    assert run(M("app/util.py"), g=g).tests == ("tests/test_util.py",)


def test_fixture_folder_files_are_not_tests() -> None:
    modules = {**MODULES, "tests.fixtures.test_sample": "tests/fixtures/test_sample.py"}
    p = run(M("tests/fixtures/test_sample.py"), g=graph(modules))
    assert "tests/fixtures/test_sample.py" not in p.suite


def test_deleted_test_file_promotes() -> None:
    p = run(Change(status="D", path="tests/test_gone.py"))
    assert codes(p) == ["test-deleted"]
    assert p.reasons[0].path == "tests/test_gone.py"
    out = run(Change(status="R", path="tests/gone_helper.py", old_path="tests/test_gone.py"))
    assert codes(out) == ["test-deleted"]
    moved = run(Change(status="R", path="tests/test_util.py", old_path="tests/test_old.py"))
    assert codes(moved) == []
    assert codes(run(Change(status="D", path="tests/helpers_old.py"))) == []


def test_added_markers_promote() -> None:
    marker = AddedMarker("tests/test_tax.py", "test_tax", "pytest.mark.skip", 3)
    p = run(M("tests/test_tax.py"), markers=(marker,))
    assert codes(p) == ["marker-added"]
    assert p.reasons[0].path == "tests/test_tax.py"
    assert "pytest.mark.skip added to test_tax" in p.reasons[0].detail


PLUGINS = Escalation("app/plugins.py", "dynamic-import", "importlib.import_module(name)")
WITH_PLUGINS = {**MODULES, "app.plugins": "app/plugins.py",
                "tests.test_plugins": "tests/test_plugins.py"}


def _escalated(*changes: Change, imports: dict[str, set[str]] | None = None) -> Plan:
    return run(*changes, g=graph(modules=WITH_PLUGINS, imports=imports or IMPORTS,
                                 escalations=(PLUGINS,)))


def test_an_escalation_no_test_reaches_changes_nothing() -> None:
    # Issue 12: a computed import in a file no test reaches (docs/conf.py) promoted every
    # code change of the repository.
    p = _escalated(M("app/util.py"))
    assert p.tests == ("tests/test_util.py",)
    [reason] = p.reasons
    assert (reason.code, reason.verdict, reason.path) == (
        "dynamic-import", Verdict.SCOPED, "app/plugins.py")
    assert "no test reaches it" in reason.detail


def test_the_tests_that_reach_an_escalated_file_run_for_any_change() -> None:
    imports = {**IMPORTS, "tests.test_plugins": {"app.plugins"}}
    p = _escalated(M("app/pricing/rates.py"), imports=imports)
    # test_plugins reaches the file that may load anything; test_util reaches neither
    assert p.tests == ("tests/test_plugins.py", "tests/test_session.py", "tests/test_tax.py")
    # The chain ends at the escalated file, which depends on every module: not "changed".
    assert p.why["tests/test_plugins.py"] == ("tests/test_plugins.py", "app/plugins.py",
                                              planner.EVERY_MODULE)
    assert [r.verdict for r in p.reasons] == [Verdict.SCOPED]
    assert "the 1 test file(s) that reach it run" in p.reasons[0].detail


def test_a_test_file_that_escalates_is_explained_by_its_escalation_not_as_changed() -> None:
    own = Escalation("tests/test_plugins.py", "dynamic-import", "importlib.import_module(n)")
    p = run(M("app/util.py"), g=graph(modules=WITH_PLUGINS, imports=IMPORTS,
                                      escalations=(own,)))
    assert p.why["tests/test_plugins.py"] == ("tests/test_plugins.py", planner.EVERY_MODULE)
    # The file itself changed: that is its reason, with nothing after it.
    p = run(M("tests/test_plugins.py"), g=graph(modules=WITH_PLUGINS, imports=IMPORTS,
                                                escalations=(own,)))
    assert p.why["tests/test_plugins.py"] == ("tests/test_plugins.py",)


def test_a_docs_only_change_reaches_no_escalation() -> None:
    imports = {**IMPORTS, "tests.test_plugins": {"app.plugins"}}
    p = _escalated(M("README.md"), imports=imports)
    assert p.tests == ()
    assert "no change reaches it" in p.reasons[0].detail
    assert any("escalation" in n for n in p.notes)


def test_an_escalation_outside_any_module_still_promotes() -> None:
    link = Escalation("app/shared", "unresolved-import", "symlink into the code")
    p = run(M("app/util.py"), g=graph(escalations=(link,)))
    assert codes(p) == ["unresolved-import"]


def test_shortest_chain_wins() -> None:
    imports = {**IMPORTS, "tests.test_session": {"app.checkout.session", "app.pricing.rates"}}
    p = run(M("app/pricing/rates.py"), g=graph(imports=imports))
    assert p.why["tests/test_session.py"] == ("tests/test_session.py", "app/pricing/rates.py")
