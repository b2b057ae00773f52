"""The import graph of a revision, on real git repositories."""

from __future__ import annotations

import os
import shutil
from typing import TYPE_CHECKING

import pytest

from agentgate.core.config import Config
from agentgate.git import gitio
from agentgate.graph import build as graph
from agentgate.graph import scan as imports_scan
from agentgate.graph.types import Escalation, ImportGraph, module_name

if TYPE_CHECKING:
    from tests.support.git_repo import GitRepo


def build(
    repo: GitRepo, rev: str = "HEAD", *, sources: tuple[str, ...] = (".",),
    tests: tuple[str, ...] = ("tests",),
) -> ImportGraph:
    return graph.build(repo.path, Config(root=repo.path, sources=sources, tests=tests), rev)


def commit(repo: GitRepo, files: dict[str, str], message: str = "change") -> str:
    repo.files(files)
    return repo.commit(message)


PKG = {"app/__init__.py": "", "app/pricing/__init__.py": "", "app/checkout/__init__.py": ""}


def test_app_repo_edges_and_modules(app_repo: GitRepo) -> None:
    g = build(app_repo)
    assert g.modules["app.pricing.tax"] == "app/pricing/tax.py"
    assert g.modules["app.pricing"] == "app/pricing/__init__.py"
    assert g.modules["tests.test_session"] == "tests/test_session.py"
    assert "README" not in "".join(g.modules)
    assert {"app", "app.pricing", "app.pricing.tax"} <= g.imports["app.checkout.session"]
    assert g.module_of("app/checkout/session.py") == "app.checkout.session"
    assert g.module_of("README.md") is None
    assert g.escalations == ()


def test_three_link_chain_gives_the_shortest_chain(repo: GitRepo) -> None:
    commit(repo, {
        **PKG,
        "app/a.py": "X = 1\n",
        "app/b.py": "from app.a import X\n",
        "app/c.py": "import app.b\n",
        "tests/test_c.py": "from app.c import *\n",
        "tests/test_other.py": "import os\n",
    })
    g = build(repo)
    closure = g.importers_closure(["app.a"])
    assert closure["app.a"] is None
    assert g.chain("tests.test_c", closure) == ["tests.test_c", "app.c", "app.b", "app.a"]
    assert "tests.test_other" not in closure
    assert g.chain("tests.test_other", closure) == []


def test_closure_maps_each_module_to_its_nearest_seed(repo: GitRepo) -> None:
    commit(repo, {
        "m/__init__.py": "", "m/far.py": "", "m/near.py": "", "m/mid.py": "import m.far\n",
        "m/top.py": "import m.mid\nimport m.near\n",
    })
    closure = build(repo).importers_closure(["m.far", "m.near"])
    assert closure["m.top"] == "m.near"  # one hop to near, two to far
    assert closure["m.mid"] == "m.far"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from . import tax\n", {"app.pricing.tax", "app.pricing"}),
        ("from ..checkout import session\n", {"app.checkout.session", "app.checkout"}),
        ("from .tax import RATE\n", {"app.pricing.tax", "app.pricing.tax.RATE"}),
        ("from app.pricing import tax\n", {"app.pricing.tax", "app.pricing", "app"}),
        ("import app.checkout.session\n", {"app", "app.checkout", "app.checkout.session"}),
        ("def f():\n    import app.checkout.session\n", {"app.checkout.session"}),
        ("if X:\n    import app.checkout.session\n", {"app.checkout.session"}),
        ("try:\n    import app.checkout.session\nexcept ImportError:\n    pass\n",
         {"app.checkout.session"}),
        ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
         "    from app.checkout.session import total\n", {"app.checkout.session"}),
        ("import importlib\nimportlib.import_module('app.checkout.session')\n",
         {"app.checkout", "app.checkout.session"}),
        ("import importlib\nimportlib.import_module('.tax', package='app.pricing')\n",
         {"app.pricing.tax"}),
        ("__import__('app.checkout.session')\n", {"app.checkout", "app.checkout.session"}),
    ],
)
def test_each_import_form_is_an_edge(repo: GitRepo, source: str, expected: set[str]) -> None:
    commit(repo, {**PKG, "app/pricing/tax.py": "RATE = 1\n", "app/checkout/session.py": "",
                  "app/pricing/probe.py": source})
    edges = build(repo).imports["app.pricing.probe"]
    assert expected <= edges
    assert "os" not in edges and "typing" not in edges and "importlib" not in edges


def test_a_module_depends_on_its_own_parent_packages(app_repo: GitRepo) -> None:
    g = build(app_repo)
    assert {"app", "app.pricing"} <= g.imports["app.pricing.tax"]
    assert "app.pricing.tax" in g.importers_closure(["app.pricing"])


def test_computed_dynamic_import_escalates_and_keeps_the_other_edges(repo: GitRepo) -> None:
    commit(repo, {**PKG, "app/pricing/tax.py": "",
                  "app/loader.py": "import importlib\nimport app.pricing.tax\n\n"
                                   "def load(name):\n    return importlib.import_module(name)\n"})
    g = build(repo)
    assert g.escalations == (Escalation(
        "app/loader.py", "dynamic-import",
        "importlib.import_module(name) with a computed name at line 5"),)
    assert "app.pricing.tax" in g.imports["app.loader"]


def test_syntax_error_escalates(repo: GitRepo) -> None:
    commit(repo, {**PKG, "app/broken.py": "import app\ndef f(:\n    pass\n", "app/ok.py": ""})
    g = build(repo)
    assert [(e.path, e.code) for e in g.escalations] == [("app/broken.py", "syntax-error")]
    assert "line 2" in g.escalations[0].detail
    assert g.modules["app.broken"] == "app/broken.py"


def test_non_utf8_file_escalates(repo: GitRepo) -> None:
    repo.files(PKG)
    repo.write("app/latin.py", b"import app\nNAME = '\xe9'\n")  # no cookie: Python refuses
    repo.write("app/declared.py", b"# -*- coding: latin-1 -*-\nimport app.latin\nN = '\xe9'\n")
    repo.commit("latin-1 sources")
    g = build(repo)
    assert [(e.path, e.code) for e in g.escalations] == [("app/latin.py", "not-utf8")]
    assert "app.latin" in g.imports["app.declared"]  # read as Python reads it


def test_relative_import_above_the_top_escalates(repo: GitRepo) -> None:
    commit(repo, {"app/__init__.py": "", "app/x.py": "from .. import nothing\n"})
    [escalation] = build(repo).escalations
    assert (escalation.path, escalation.code) == ("app/x.py", "unresolved-import")


def test_deleted_module_still_imported_keeps_its_edge(app_repo: GitRepo) -> None:
    app_repo.rm("app/pricing/tax.py")
    app_repo.commit("delete tax")
    g = build(app_repo)
    assert "app.pricing.tax" not in g.modules
    assert "app.pricing.tax" in g.imports["app.checkout.session"]
    deleted = module_name(_config(app_repo), "app/pricing/tax.py")
    assert deleted == "app.pricing.tax"
    closure = g.importers_closure([deleted])
    assert g.chain("tests.test_session", closure) == [
        "tests.test_session", "app.checkout.session", "app.pricing.tax"]


def test_renamed_module_old_name_still_reaches_its_importers(app_repo: GitRepo) -> None:
    app_repo.git("mv", "app/pricing/tax.py", "app/pricing/vat.py")
    app_repo.commit("rename")
    g = build(app_repo)
    assert g.modules["app.pricing.vat"] == "app/pricing/vat.py"
    assert "tests.test_tax" in g.importers_closure(["app.pricing.tax"])


def _config(repo: GitRepo, sources: tuple[str, ...] = (".",)) -> Config:
    return Config(root=repo.path, sources=sources, tests=("tests",))


def test_src_layout_names_and_module_name_is_pure(repo: GitRepo) -> None:
    commit(repo, {"src/pkg/__init__.py": "", "src/pkg/core.py": "",
                  "src/pkg/api.py": "from pkg import core\n",
                  "tests/test_api.py": "from pkg.api import *\n", "scripts/tool.py": ""})
    g = build(repo, sources=("src",))
    assert g.modules["pkg.core"] == "src/pkg/core.py"
    assert g.modules["pkg"] == "src/pkg/__init__.py"
    assert g.modules["tests.test_api"] == "tests/test_api.py"
    assert "scripts.tool" not in g.modules and g.module_of("scripts/tool.py") is None
    assert "tests.test_api" in g.importers_closure(["pkg.core"])
    config = _config(repo, ("src",))
    assert module_name(config, "src/pkg/never_existed.py") == "pkg.never_existed"
    assert module_name(config, "src/pkg/sub/__init__.py") == "pkg.sub"
    assert module_name(config, "tests/unit/test_x.py") == "tests.unit.test_x"
    assert module_name(config, "src/pkg/data.json") is None
    assert module_name(config, "scripts/tool.py") is None


def test_flat_layout_skips_environments_build_output_and_hidden_folders(repo: GitRepo) -> None:
    commit(repo, {**PKG, **{f"{d}/mod.py": "" for d in (
        ".venv/lib", "venv/lib", "build/lib/app", "dist/x", "node_modules/x",
        "lib/site-packages/x", ".hidden", "app/.cache")}})
    g = build(repo)
    assert sorted(g.modules) == ["app", "app.checkout", "app.pricing"]


def test_namespace_package_without_init(repo: GitRepo) -> None:
    commit(repo, {"src/acme/billing/invoice.py": "",
                  "src/acme/shop/cart.py": "from acme.billing import invoice\n",
                  "tests/test_cart.py": "import acme.shop.cart\n"})
    g = build(repo, sources=("src",))
    assert g.modules["acme.billing.invoice"] == "src/acme/billing/invoice.py"
    assert "acme" not in g.modules  # a namespace package has no file
    chain = g.chain("tests.test_cart", g.importers_closure(["acme.billing.invoice"]))
    assert chain == ["tests.test_cart", "acme.shop.cart", "acme.billing.invoice"]


def test_several_top_level_packages(repo: GitRepo) -> None:
    commit(repo, {"alpha/__init__.py": "", "alpha/a.py": "import beta.b\n",
                  "beta/__init__.py": "", "beta/b.py": "", "gamma.py": "from alpha import a\n"})
    closure = build(repo).importers_closure(["beta.b"])
    assert {"alpha.a", "gamma"} <= closure.keys()


def test_conftest_and_helpers_are_modules_and_bare_helper_imports_resolve(repo: GitRepo) -> None:
    """pytest's default import mode puts a test's folder (the first without __init__.py)
    on sys.path, so ``import helpers`` in tests/unit means tests/unit/helpers.py."""
    commit(repo, {**PKG, "app/pricing/tax.py": "",
                  "tests/conftest.py": "import app\n",
                  "tests/unit/helpers.py": "import app.pricing.tax\n",
                  "tests/unit/test_h.py": "from helpers import thing\n"})
    g = build(repo)
    assert g.modules["tests.conftest"] == "tests/conftest.py"
    assert "tests.unit.helpers" in g.imports["tests.unit.test_h"]
    assert g.chain("tests.unit.test_h", g.importers_closure(["app.pricing.tax"])) == [
        "tests.unit.test_h", "tests.unit.helpers", "app.pricing.tax"]


def test_pytest_plugins_are_imports(repo: GitRepo) -> None:
    commit(repo, {**PKG, "app/fixtures.py": "import app.pricing\n",
                  "tests/conftest.py": "pytest_plugins = ['app.fixtures']\n",
                  "tests/sub/conftest.py": "pytest_plugins = PLUGINS\n"})
    g = build(repo)
    assert "app.fixtures" in g.imports["tests.conftest"]
    assert [(e.path, e.code) for e in g.escalations] == [
        ("tests/sub/conftest.py", "dynamic-import")]


def test_star_import_of_a_package_reaches_its_submodules(repo: GitRepo) -> None:
    commit(repo, {"pkg/__init__.py": "__all__ = ['sub']\n", "pkg/sub.py": "",
                  "user.py": "from pkg import *\n"})
    assert "pkg.sub" in build(repo).imports["user"]


def test_package_beats_a_module_of_the_same_name(repo: GitRepo) -> None:
    commit(repo, {"pkg.py": "import a\n", "pkg/__init__.py": "import b\n", "a.py": "",
                  "b.py": ""})
    g = build(repo)
    assert g.modules["pkg"] == "pkg/__init__.py"
    assert g.imports["pkg"] == frozenset({"b"})
    assert g.module_of("pkg.py") == "pkg"  # a change to it still seeds "pkg"


def test_symlink_into_the_code_escalates(repo: GitRepo) -> None:
    commit(repo, {**PKG, "shared/util.py": "", "docs/index.md": "hello\n"})
    os.symlink("../shared", repo.path / "app" / "shared")
    os.symlink("index.md", repo.path / "docs" / "latest.md")
    repo.commit("links")
    escalations = build(repo).escalations
    assert [(e.path, e.code) for e in escalations] == [("app/shared", "unresolved-import")]


def test_graph_is_of_the_revision_not_the_working_tree(app_repo: GitRepo) -> None:
    first = app_repo.sha()
    commit(app_repo, {"app/checkout/extra.py": "import app.pricing.tax\n"})
    app_repo.write("app/checkout/extra.py", "import app.checkout.session\n")  # not committed
    app_repo.write("app/uncommitted.py", "import app.pricing.tax\n")
    app_repo.write("app/pricing/tax.py", "def f(:\n")  # a broken working tree
    head = build(app_repo)
    assert "app.pricing.tax" in head.imports["app.checkout.extra"]
    assert "app.checkout.session" not in head.imports["app.checkout.extra"]
    assert "app.uncommitted" not in head.modules
    assert head.escalations == ()
    old = build(app_repo, first)
    assert "app.checkout.extra" not in old.modules


def test_paths_with_spaces_and_non_utf8_bytes(repo: GitRepo) -> None:
    repo.write("pkg/__init__.py", "")
    repo.write(b"pkg/caf\xe9.py", "import pkg.with_space_user\n")
    repo.write("pkg/with space.py", "import pkg\n")
    repo.commit("odd names")
    odd = os.fsdecode(b"pkg/caf\xe9.py")
    for _ in range(2):  # cold, then through the cache
        g = build(repo)
        assert g.module_of(odd) == os.fsdecode(b"pkg.caf\xe9")
        assert g.modules["pkg.with space"] == "pkg/with space.py"


def test_grimp_and_ast_paths_build_the_same_graph(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {**PKG, "app/pricing/tax.py": "", "app/checkout/session.py": ""}
    for i in range(30):
        files[f"app/m{i}.py"] = (
            f"from . import m{i - 1 if i else 0}\nfrom .pricing import tax\n"
            f"def f():\n    from app.checkout import (session,\n        gone{i})\n"
        )
    commit(repo, files)
    graphs = []
    for small in (0, 10**9):  # everything through grimp, then everything through ast
        shutil.rmtree(gitio.state_dir(repo.path) / "graph", ignore_errors=True)
        monkeypatch.setattr(imports_scan, "_SMALL_BATCH", small)
        imports_scan.STATS.reset()
        g = build(repo)
        assert (imports_scan.STATS.grimp > 0) == (small == 0)
        graphs.append(({k: g.imports[k] for k in g.imports}, g.escalations))
    assert graphs[0] == graphs[1]
    assert "app.checkout.gone7" in graphs[0][0]["app.m7"]


def test_bad_revision_is_a_clear_error(app_repo: GitRepo) -> None:
    from agentgate.core.errors import GitError

    with pytest.raises(GitError, match="does not exist"):
        build(app_repo, "no-such-branch")
