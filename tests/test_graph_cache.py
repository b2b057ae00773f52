"""The blob-keyed graph cache: what a second build reads, and that a patched graph is the
graph a cold build would give."""

from __future__ import annotations

import shutil
from typing import TYPE_CHECKING, Any

from agentgate import gitio, graph, graph_cache
from agentgate.config import Config

if TYPE_CHECKING:
    from pathlib import Path

    from agentgate.graph import ImportGraph
    from tests.helpers import GitRepo


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
        for path, text in step.items():
            if text is None:
                repo.rm(path)
            else:
                repo.write(path, text)
        repo.commit("step")
        warm = build(repo)
        assert (warm.stats is not None and warm.stats.cache == "warm") or step is steps[0]
        assert snapshot(warm) == snapshot(cold(repo)), step
        build(repo)  # leave a warm cache for the next step


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
