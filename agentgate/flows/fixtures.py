"""``agentgate fixtures record | verify`` as Results."""

from __future__ import annotations

from pathlib import Path

from agentgate.core.config import Config
from agentgate.core.model import Reason, Result, Verdict
from agentgate.gate import manifest
from agentgate.report.project import FixturesRecorded


def record(root: Path, config: Config) -> Result:
    path, count = manifest.record(root, config)
    rel = path.relative_to(root).as_posix()
    result = Result(command="fixtures record")
    result.notes.append(f"wrote {rel}: {count} fixture file(s) from {', '.join(config.fixtures)}")
    result.notes.append("commit it with the fixtures it lists, and nothing else, as a human")
    result.detail = FixturesRecorded(rel, count)
    return result


def verify(root: Path, config: Config) -> Result:
    result = Result(command="fixtures verify")
    problems = manifest.verify_tree(root, config)
    if problems is None:
        files = manifest.fixture_files_on_disk(root, config)
        if files:
            result.reasons.append(
                Reason(
                    "fixture-manifest",
                    Verdict.BLOCKED,
                    f"{len(files)} fixture file(s) but no manifest; run 'agentgate fixtures "
                    "record' and commit it",
                    path=config.manifest,
                )
            )
        else:
            result.notes.append(f"no fixtures and no manifest ({config.manifest}): nothing to do")
        return result
    result.reasons += [
        Reason("fixture-manifest", Verdict.BLOCKED, p.describe(), path=p.path) for p in problems
    ]
    if not problems:
        result.notes.append(f"every fixture matches {config.manifest}")
    return result
