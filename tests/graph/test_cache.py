"""The blob-keyed graph cache: what a second build reads, and that a patched graph is the
graph a cold build would give."""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING, Any

from agentgate.core.config import Config
from agentgate.git import gitio
from agentgate.graph import build as graph
from agentgate.graph import builder as graph_build
from agentgate.graph import cache as graph_cache
from agentgate.graph.resolve import roots_of
from agentgate.graph.reverse import Reverse

if TYPE_CHECKING:
    from pathlib import Path

    from agentgate.graph.types import ImportGraph
    from tests.support.git_repo import GitRepo


def build(repo: GitRepo, rev: str = "HEAD", sources: tuple[str, ...] = (".",)) -> ImportGraph:
    return graph.build(repo.path, Config(root=repo.path, sources=sources), rev)


def cache_file(repo: GitRepo) -> Path:
    return gitio.state_dir(repo.path) / "graph" / graph_cache.FILE_NAME


def snapshot(g: ImportGraph) -> dict[str, Any]:
    return {
        "modules": dict(g.modules),
        "imports": {k: g.imports[k] for k in g.imports},
        "importers": {k: g.importers[k] for k in g.importers},
        "escalations": g.escalations,
        "files": dict(g.files),
    }


def cold(repo: GitRepo, rev: str = "HEAD", sources: tuple[str, ...] = (".",)) -> ImportGraph:
    shutil.rmtree(cache_file(repo).parent, ignore_errors=True)
    return build(repo, rev, sources)


def apply(repo: GitRepo, step: dict[str, str | None]) -> None:
    """Write each file of a step (None: remove it)."""
    for path, text in step.items():
        if text is None:
            repo.rm(path)
        else:
            repo.write(path, text)


def test_second_build_reads_only_the_changed_blobs(app_repo: GitRepo) -> None:
    first = build(app_repo)
    assert first.stats is not None and first.stats.cache == "cold"
    assert first.stats.parsed == 5  # 7 Python files; the three empty __init__.py share a blob
    again = build(app_repo)
    assert again.stats is not None
    assert (again.stats.cache, again.stats.read, again.stats.parsed) == ("warm", 0, 0)
    app_repo.files({"app/pricing/tax.py": "RATE = 0.3\n", "app/pricing/new.py": "import os\n"})
    app_repo.commit("one changed, one new")
    third = build(app_repo)
    assert third.stats is not None
    assert (third.stats.read, third.stats.parsed, third.stats.resolved) == (2, 2, 2)
    assert "app.pricing.new" in third.modules
    assert snapshot(third) == snapshot(cold(app_repo))


def test_patched_graph_equals_a_cold_build_through_a_history(repo: GitRepo) -> None:
    steps: list[dict[str, str | None]] = [
        {"app/__init__.py": "", "app/a.py": "from app import b\nfrom app.c import *\n",
         "app/c/__init__.py": "", "tests/test_a.py": "import helpers\nimport app.a\n"},
        {"app/b.py": "X = 1\n"},  # a phantom edge target becomes a real module
        {"tests/helpers.py": "import app.c\n"},  # a bare test import now has a target
        {"app/c/d.py": ""},  # a star import gains a submodule
        {"app/a.py": None},  # a module disappears; tests still import it
        {"tests/__init__.py": ""},  # tests become a package: pytest names change
        {"other/__init__.py": "", "other/x.py": "import app.b\n"},  # a new top-level package
        {"app/b.py": None, "app/b/__init__.py": "X = 1\n"},  # a module becomes a package
        {"app/c/d.py": "def f(:\n"},  # a syntax error appears
        {"app/c/d.py": ""},  # and goes away
        {"app/e.py": "import app.a\n", "app/e/__init__.py": "import app.c\n"},  # a clash
        {"app/e/__init__.py": None},  # the module it shadowed runs again, unchanged
    ]
    for step in steps:
        apply(repo, step)
        repo.commit("step")
        warm = build(repo)
        assert (warm.stats is not None and warm.stats.cache == "warm") or step is steps[0]
        again = build(repo)  # the same tree: read from the graph file as it is
        assert again.stats is not None and (again.stats.cache, again.stats.resolved) == ("warm", 0)
        assert snapshot(warm) == snapshot(again) == snapshot(cold(repo)), step
        build(repo)  # leave a warm cache for the next step


def test_patched_through_a_whole_history_without_a_cold_build(repo: GitRepo) -> None:
    """Each build patches the previous one (never a fresh start in between): the graph at
    every commit is still the one a cold build gives."""
    history = [
        {"app/__init__.py": "", "app/a.py": "import app.b\n", "app/b.py": "",
         "tests/test_a.py": "import app.a\n"},
        {"app/c.py": "from app import a\n", "app/b.py": "import app.c\n"},  # a cycle
        {"app/a.py": None, "app/d/__init__.py": "from app.c import *\n"},
        {"app/b.py": None, "tests/test_b.py": "import app.b\n"},  # a deleted module's importer
        {"app/d/e.py": "import app.d\n", "app/c.py": "X = 1\n"},
    ]
    seen: list[tuple[str, dict[str, Any]]] = []
    for step in history:
        apply(repo, step)
        sha = repo.commit("step")
        seen.append((sha, snapshot(build(repo))))
    for sha, patched in seen:
        assert patched == snapshot(cold(repo, sha)), sha


def test_same_tree_reads_only_the_graph_file(app_repo: GitRepo) -> None:
    """A plan of a tree the cache describes needs no state: damage there goes unnoticed
    until a build has to patch, which then starts from nothing."""
    good = snapshot(cold(app_repo))
    state = cache_file(app_repo).parent / graph_cache.STATE_NAME
    _corrupt(state, "flipped")
    same = build(app_repo)
    assert same.stats is not None and (same.stats.cache, same.stats.resolved) == ("warm", 0)
    assert snapshot(same) == good
    app_repo.files({"app/pricing/tax.py": "RATE = 0.5\n"})
    app_repo.commit("a new tree: the state is needed")
    g = build(app_repo)
    assert g.stats is not None and g.stats.cache == "rebuilt: state corrupt"
    assert g.stats.resolved == 7 and g.stats.parsed == 1  # the blob store still holds the rest
    assert snapshot(g) == snapshot(cold(app_repo))


def test_state_of_another_build_is_not_used(app_repo: GitRepo) -> None:
    build(app_repo)
    folder = cache_file(app_repo).parent
    stale_state = (folder / graph_cache.STATE_NAME).read_bytes()
    app_repo.files({"app/pricing/new.py": "import app.pricing.tax\n"})
    app_repo.commit("another build writes another pair")
    build(app_repo)
    (folder / graph_cache.STATE_NAME).write_bytes(stale_state)  # as if a reader raced two writers
    app_repo.files({"app/pricing/tax.py": "RATE = 0.5\n"})
    app_repo.commit("patch again")
    g = build(app_repo)
    assert g.stats is not None and g.stats.cache == "rebuilt: state from another build"
    assert snapshot(g) == snapshot(cold(app_repo))


def test_cached_tree_gone_lists_the_whole_tree(app_repo: GitRepo) -> None:
    """The cache is patched with a diff against the tree it describes; when git has pruned
    that tree, the whole tree is listed instead of failing."""
    app_repo.files({"app/pricing/tmp.py": "import app\n"})
    app_repo.commit("a commit about to be thrown away")
    build(app_repo)
    app_repo.git("reset", "-q", "--hard", "HEAD~1")
    app_repo.git("reflog", "expire", "--expire=now", "--all")
    app_repo.git("gc", "-q", "--prune=now")
    g = build(app_repo)
    assert g.stats is not None and g.stats.cache == "warm"
    assert "app.pricing.tmp" not in g.modules
    assert snapshot(g) == snapshot(cold(app_repo))


def test_files_of_earlier_versions_are_removed(app_repo: GitRepo) -> None:
    folder = cache_file(app_repo).parent
    folder.mkdir(parents=True)
    for name in graph_cache.LEGACY:
        (folder / name).write_bytes(b"agentgate-graph 6 old\n")
    build(app_repo)
    assert not [name for name in graph_cache.LEGACY if (folder / name).exists()]


def test_new_top_level_package_resolves_again_without_reading(app_repo: GitRepo) -> None:
    build(app_repo)
    app_repo.files({"lib/__init__.py": "", "lib/x.py": "import app\n"})
    app_repo.commit("new top level")
    g = build(app_repo)
    assert g.stats is not None
    assert g.stats.read == 1  # lib/x.py; the empty __init__.py blob was already known
    assert g.stats.resolved == len(g.files)  # what counts as internal changed: all again


def test_renamed_file_is_not_read_again(app_repo: GitRepo) -> None:
    build(app_repo)
    app_repo.git("mv", "app/pricing/tax.py", "app/pricing/vat.py")
    app_repo.commit("rename")
    g = build(app_repo)
    assert g.stats is not None
    assert (g.stats.read, g.stats.parsed) == (0, 0)
    assert g.modules["app.pricing.vat"] == "app/pricing/vat.py"


def test_other_roots_resolve_again_without_reading(repo: GitRepo) -> None:
    repo.files({"src/pkg/__init__.py": "", "src/pkg/a.py": "import pkg.b\n", "src/pkg/b.py": ""})
    repo.commit("src layout")
    build(repo, sources=(".",))
    g = build(repo, sources=("src",))
    assert g.stats is not None and (g.stats.read, g.stats.resolved) == (0, 3)
    assert "pkg.b" in g.imports["pkg.a"]


def test_base_and_head_alternately_both_stay_warm(app_repo: GitRepo) -> None:
    base = app_repo.sha()
    app_repo.files({"app/pricing/tax.py": "RATE = 0.5\n"})
    head = app_repo.commit("head")
    build(app_repo, base)
    build(app_repo, head)
    again = build(app_repo, base)
    assert again.stats is not None and again.stats.read == 0


def _corrupt(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif how == "flipped":
        middle = len(data) - 10
        path.write_bytes(data[:middle] + bytes([data[middle] ^ 0xFF]) + data[middle + 1 :])
    elif how == "hot-edited":  # still valid marshal, but not what was written
        path.write_bytes(data.replace(b"app.pricing.tax", b"app.pricing.tay"))
    elif how == "version":
        version = f"agentgate-graph {graph_cache.VERSION} ".encode()
        path.write_bytes(data.replace(version, b"agentgate-graph 0 ", 1))
    elif how == "garbage":
        path.write_bytes(b"not a cache at all")
    else:
        path.write_bytes(b"")


def test_corrupt_or_foreign_cache_is_rebuilt(app_repo: GitRepo) -> None:
    good = snapshot(cold(app_repo))
    for how in ("truncated", "hot-edited", "version", "garbage", "empty"):
        build(app_repo)
        _corrupt(cache_file(app_repo), how)
        g = build(app_repo)
        assert g.stats is not None and g.stats.cache.startswith("rebuilt"), how
        assert g.stats.resolved == 7, how  # nothing of the damaged file is used
        assert g.stats.parsed == 0, how  # the blob segments have their own checksums
        assert snapshot(g) == good, how
        again = build(app_repo)
        assert again.stats is not None and again.stats.cache == "warm", how


def test_everything_corrupt_is_read_again(app_repo: GitRepo) -> None:
    good = snapshot(cold(app_repo))
    folder = cache_file(app_repo).parent
    for file in folder.iterdir():
        _corrupt(file, "truncated")
    g = build(app_repo)
    assert g.stats is not None and (g.stats.cache, g.stats.parsed) == ("rebuilt: corrupt", 5)
    assert snapshot(g) == good


def test_corrupt_blob_store_is_read_again(app_repo: GitRepo) -> None:
    """Damage in a blob segment (raw records) is caught by its own checksum when needed."""
    build(app_repo)
    [segment] = cache_file(app_repo).parent.glob(graph_cache.SEGMENTS)
    _corrupt(segment, "flipped")
    app_repo.git("mv", "app/pricing/tax.py", "app/pricing/vat.py")
    app_repo.commit("rename: needs the raw record of tax.py's blob")
    g = build(app_repo)
    assert g.stats is not None and g.stats.read == 1
    assert snapshot(g) == snapshot(cold(app_repo))


def test_segments_are_appended_then_compacted(app_repo: GitRepo) -> None:
    folder = cache_file(app_repo).parent
    build(app_repo)
    assert len(list(folder.glob(graph_cache.SEGMENTS))) == 1
    for i in range(graph_cache.COMPACT_AT + 1):
        app_repo.files({"app/pricing/tax.py": f"RATE = {i}\n"})
        app_repo.commit(f"edit {i}")
        g = build(app_repo)
        assert g.stats is not None and g.stats.read == 1
    assert 1 <= len(list(folder.glob(graph_cache.SEGMENTS))) < graph_cache.COMPACT_AT
    assert not list(folder.glob(".tmp-*"))
    app_repo.git("mv", "app/pricing/tax.py", "app/pricing/vat.py")  # needs an old record
    app_repo.commit("rename")
    g = build(app_repo)
    assert g.stats is not None and g.stats.read == 0
    assert snapshot(g) == snapshot(cold(app_repo))


def test_worktrees_share_the_cache(app_repo: GitRepo, tmp_path: Path) -> None:
    build(app_repo)
    other = tmp_path / "wt"
    app_repo.git("worktree", "add", "--detach", str(other), "HEAD")
    g = graph.build(other, Config(root=other), "HEAD")
    assert g.stats is not None and (g.stats.cache, g.stats.read) == ("warm", 0)


def test_names_left_by_deleted_modules_are_compacted_away(repo: GitRepo) -> None:
    """Deleting most of a tree leaves most of the name table unused: the next build packs
    it again, renumbering every edge, and is still the graph a cold build gives."""
    many = {f"app/m{i}.py": f"import app.x{i}\nimport app.keep\n" for i in range(1500)}
    repo.files({"app/__init__.py": "", "app/keep.py": "", **many,
                "tests/test_keep.py": "import app.keep\n"})
    repo.commit("many modules")
    first = build(repo)
    assert first.importers_closure(["app.keep"]).keys() >= {"app.m7", "tests.test_keep"}
    repo.rm(*many)
    repo.commit("most of them gone")
    g = build(repo)
    reverse = g.importers
    assert isinstance(reverse, Reverse) and len(reverse.nodes) < 100  # compacted
    assert snapshot(g) == snapshot(build(repo)) == snapshot(cold(repo))
    assert g.importers_closure(["app.keep"]).keys() == {"app.keep", "tests.test_keep"}


def _listing(repo: GitRepo, rev: str, old: dict[str, Any] | None = None) -> graph_build.Tree:
    rooted = roots_of(Config(root=repo.path, sources=(".",), tests=("tests",)))
    tree = gitio.resolve(repo.path, rev, peel="tree")
    return graph_build.list_tree(repo.path, tree, rooted, old or {})


def test_patched_listing_is_the_full_listing(repo: GitRepo) -> None:
    """The cached listing patched with one git diff-tree is what ls-tree lists, whatever
    changed: a mode, a file into a link and back, a submodule at a .py path, a file into a
    folder, paths outside the roots, non-ASCII and non-UTF-8 names."""
    repo.files({"app/__init__.py": "", "app/a.py": "A = 1\n", "app/b.py": "B = 1\n",
                "app/c.py": "", "app/d.py": "", "app/café.py": "", "venv/lib/x.py": "",
                "tests/test_a.py": "import app.a\n"})
    repo.write(b"app/odd\xff.py", "ODD = 1\n")
    (repo.path / "app/link.py").symlink_to("a.py")
    first = repo.commit("first")
    repo.git("update-index", "--chmod=+x", "app/a.py")  # a mode change only
    (repo.path / "app/b.py").unlink()
    (repo.path / "app/b.py").symlink_to("a.py")  # a file becomes a link
    (repo.path / "app/link.py").unlink()
    repo.write("app/link.py", "L = 1\n")  # and a link becomes a file
    repo.rm("app/c.py")
    repo.write("app/c.py/inner.py", "")  # a file becomes a folder (no module: not a name)
    repo.rm("app/d.py")
    repo.write("app/é/new.py", "import app.a\n")
    repo.write(b"app/odd\xfe.py", "ODD = 2\n")
    repo.write("venv/lib/y.py", "")
    repo.add()
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{first},app/sub.py")  # gitlink
    repo.commit("second", add=False)
    before = _listing(repo, first)
    old = {"context": graph_build.context_of(roots_of(Config(root=repo.path, sources=(".",),
                                                             tests=("tests",)))),
           "tree": gitio.resolve(repo.path, first, peel="tree"), "blobs": before.python,
           "names": before.names, "links": {p: (b, "?") for p, b in before.links.items()}}
    patched, listed = _listing(repo, "HEAD", old), _listing(repo, "HEAD")
    assert patched == listed
    assert list(patched.python) == list(listed.python)  # the same order too
    assert "app/b.py" in patched.links and "app/link.py" in patched.python
    assert "app/sub.py" not in patched.python and "app/c.py" not in patched.python
    assert any(p.startswith("app/odd") for p in patched.python)


def test_a_tree_with_no_python_change_keeps_the_state(app_repo: GitRepo) -> None:
    """A commit that changes no Python file rewrites only the graph part (a new tree, the
    same state and token); the next Python change still patches to the cold graph."""
    build(app_repo)
    state = cache_file(app_repo).parent / graph_cache.STATE_NAME
    before = state.read_bytes()
    app_repo.files({"README.md": "more words\n", "docs/guide.txt": "x\n"})
    app_repo.commit("docs only")
    docs = build(app_repo)
    assert docs.stats is not None and (docs.stats.cache, docs.stats.resolved) == ("warm", 0)
    assert state.read_bytes() == before
    assert graph_cache.load(state.parent).hot["tree"] == gitio.resolve(
        app_repo.path, "HEAD", peel="tree")
    app_repo.files({"app/pricing/tax.py": "import app.checkout.session\n"})
    app_repo.commit("code again")
    g = build(app_repo)
    assert g.stats is not None and (g.stats.cache, g.stats.parsed) == ("warm", 1)
    assert snapshot(g) == snapshot(cold(app_repo))
