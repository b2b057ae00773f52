"""A pytest runner for a tree that is not the band's: the base inventory's collection and
the base oracle's runs use the same interpreter, pinned environment and outcome plugin as the
band (``band.run_band``), so a test's outcome there means what it means in the band."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentgate.core.config import Config
from agentgate.git import scratch
from agentgate.run import band, interp


@contextlib.contextmanager
def runner(root: Path, config: Config, tree: Path, label: str) -> Iterator[band.Runner]:
    """A ``band.Runner`` for ``tree`` with a private work folder, removed after."""
    python = interp.project_python(root, config)
    with scratch.scratch_dir(label, root) as workdir:
        env = interp.test_env(config, tree,
                              extra={"HYPOTHESIS_STORAGE_DIRECTORY": str(workdir / "hyp")})
        plugin = band.install_outcomes_plugin(workdir, env)
        yield band.Runner(python, tree, env, workdir, config.timeout, outcomes_module=plugin)


def run_nodes(runner: band.Runner, label: str, args: tuple[str, ...]
              ) -> tuple[band.RunResult, dict[str, Any] | None]:
    """One run of ``args`` and what the outcome plugin recorded of it."""
    result = runner.run(band.RunSpec(label, args, len(args)))
    return result, runner.seen.get(label)
