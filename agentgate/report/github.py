"""A check's JSON result as GitHub Actions shows it: annotations, step outputs, summary lines.

Pure: it renders the ``check --format json`` result (``Result.to_json``) and writes nothing;
``flows/github.py`` reads the file and appends to ``$GITHUB_OUTPUT`` and
``$GITHUB_STEP_SUMMARY``. The summary's main part is the check's own markdown, which the
check appended itself (``render.append_step_summary``); this adds only what GitHub could not
show as an annotation.

GitHub shows at most 10 annotations of each type (error, warning, notice) per step and drops
the rest silently, so they are ranked: every rule that fired gets its first annotation before
any rule gets a second, and within that the most severe verdict first (blocked, scope-escape,
failed, promote, scoped). Errors are the blocked, scope-escape and failed reasons, warnings
the promotions, notices the headline (first, so never the one dropped), the scoped reasons and
the notes. What does not fit is listed in the summary.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentgate.core.model import Verdict
from agentgate.report.render import safe

LIMIT = 10  # annotations of one type per step that GitHub shows
LEVELS = ("error", "warning", "notice")
_LEVEL = {
    Verdict.BLOCKED: "error",
    Verdict.SCOPE_ESCAPE: "error",
    Verdict.FAILED: "error",
    Verdict.PROMOTE: "warning",
    Verdict.SCOPED: "notice",
}


@dataclass(frozen=True, kw_only=True)
class Annotation:
    level: str  # error, warning or notice
    title: str
    message: str
    file: str | None = None


@dataclass(frozen=True)
class Annotations:
    shown: tuple[Annotation, ...]  # at most the limit of each level, ranked
    rest: tuple[Annotation, ...]  # what GitHub would drop: listed in the summary instead
    limit: int = LIMIT


def rank(data: Mapping[str, Any], limit: int = LIMIT) -> Annotations:
    """The headline, the result's reasons and its notes, ranked and capped at ``limit`` per
    level: the headline is the first notice, so it is never the one dropped."""
    ranked = [_headline(data), *_ranked_reasons(data.get("reasons") or []),
              *(_note(n) for n in data.get("notes") or [])]
    return cap(ranked, min(limit, LIMIT))


def cap(ranked: Iterable[Annotation], limit: int) -> Annotations:
    seen: Counter[str] = Counter()
    shown: list[Annotation] = []
    rest: list[Annotation] = []
    for item in ranked:
        seen[item.level] += 1
        (shown if seen[item.level] <= limit else rest).append(item)
    return Annotations(_by_level(shown), _by_level(rest), limit)


def _by_level(items: list[Annotation]) -> tuple[Annotation, ...]:
    """Errors first, then warnings, then notices, each in rank order (sorted is stable)."""
    return tuple(sorted(items, key=lambda a: LEVELS.index(a.level)))


def _ranked_reasons(reasons: Sequence[Mapping[str, Any]]) -> list[Annotation]:
    nth: Counter[str] = Counter()
    keyed = []
    for index, reason in enumerate(reasons):
        verdict = Verdict(reason["verdict"])
        keyed.append(((nth[reason["code"]], -verdict.severity, index), _reason(reason, verdict)))
        nth[reason["code"]] += 1
    return [item for _, item in sorted(keyed, key=lambda pair: pair[0])]


def _reason(reason: Mapping[str, Any], verdict: Verdict) -> Annotation:
    code = reason["code"]
    title = f"agentgate: {verdict}" + ("" if code == str(verdict) else f" ({code})")
    commit = f" [commit {reason['commit'][:10]}]" if reason.get("commit") else ""
    return Annotation(level=_LEVEL[verdict], title=title, message=reason["detail"] + commit,
                      file=reason.get("path"))


def _headline(data: Mapping[str, Any]) -> Annotation:
    return Annotation(level="notice", title=f"agentgate {data.get('command', 'check')}: "
                      f"{data['verdict']}", message=headline(data))


def headline(data: Mapping[str, Any]) -> str:
    """One line: the verdict, the exit code, and what ran."""
    line = f"agentgate {data.get('command', 'check')}: {data['verdict']} (exit {data['exit_code']})"
    ran = _ran_text(data)
    return f"{line}: {ran}" if ran else line


def _ran_text(data: Mapping[str, Any]) -> str:
    if "suite_size" not in data:
        return ""
    planned = f"band {band_size(data)} of {data['suite_size']} test file(s)"
    results = data.get("results") or {}
    if not results.get("ran"):
        return f"{planned}, not run"
    counts = ", ".join(f"{results.get(k, 0)} {k}" for k in ("passed", "failed", "errors"))
    return f"{planned}, {results.get('scope', 'band')} run: {counts}"


def _note(note: str) -> Annotation:
    return Annotation(level="notice", title="agentgate: note", message=note)


def band_size(data: Mapping[str, Any]) -> int:
    """Test files the check runs: the whole suite when promoted, else the band's files (a
    witnessed band names node ids; they count once per file)."""
    if data.get("run") == "full":
        return int(data.get("suite_size", 0))
    return len({t.split("::", 1)[0] for t in data.get("tests") or []})


# --- workflow commands ------------------------------------------------------------------------

def command(item: Annotation) -> str:
    """``::error file=...,title=...::message``, escaped as GitHub's toolkit escapes them."""
    props = [f"file={_property(item.file)}"] if item.file else []
    props.append(f"title={_property(item.title)}")
    return f"::{item.level} {','.join(props)}::{_data(item.message)}"


def _data(text: str) -> str:
    return safe(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


# --- step outputs -----------------------------------------------------------------------------

def outputs(data: Mapping[str, Any] | None, exit_code: int, result_file: str) -> dict[str, str]:
    """The step's outputs; without a result (agentgate stopped before writing one, e.g. exit
    64) the verdict is ``error`` and the sizes are empty."""
    found = {"verdict": "error", "exit-code": str(exit_code), "result": result_file}
    if data is None:
        return found | dict.fromkeys(("verdict-plan", "band-size", "suite-size", "ran",
                                      "tests-passed", "tests-failed", "merge-base"), "")
    results = data.get("results") or {}
    return found | {
        "verdict": str(data["verdict"]),
        "verdict-plan": str(data.get("verdict_plan", data["verdict"])),
        "band-size": str(band_size(data)) if "suite_size" in data else "",
        "suite-size": str(data.get("suite_size", "")),
        "ran": "true" if results.get("ran") else "false",
        "tests-passed": str(results.get("passed", 0)),
        "tests-failed": str(results.get("failed", 0) + results.get("errors", 0)),
        "merge-base": str(data.get("merge_base") or ""),
    }


def output_text(values: Mapping[str, str]) -> str:
    """``name=value`` lines for ``$GITHUB_OUTPUT``; a value is one line by construction."""
    return "".join(f"{name}={_one_line(value)}\n" for name, value in values.items())


def _one_line(value: str) -> str:
    return safe(value).replace("\r", " ").replace("\n", " ")


# --- summary ----------------------------------------------------------------------------------

def summary(found: Annotations) -> str:
    """The markdown for what was not annotated; empty when everything fit."""
    if not found.rest:
        return ""
    counts = Counter(a.level for a in found.rest)
    dropped = ", ".join(f"{counts[level]} {level}(s)" for level in LEVELS if counts[level])
    lines = [f"#### Not annotated ({dropped})", "",
             f"At most {found.limit} annotations of each type per step (GitHub shows "
             f"{LIMIT}); these did not fit, most important first:", ""]
    lines += [_summary_item(a) for a in found.rest]
    return "\n".join(lines) + "\n"


def _summary_item(item: Annotation) -> str:
    where = f" `{_md(item.file)}`" if item.file else ""
    return f"- {item.level}: {_md(item.title)}{where}: {_md(item.message)}"


def _md(text: str) -> str:
    return safe(text).replace("\n", " ").replace("`", "'")


def missing_result(exit_code: int) -> str:
    """The summary when the check wrote no result: its one-line message is in the log."""
    return (f"### agentgate check: no result (exit {exit_code})\n\nagentgate stopped before "
            "writing a result; its one-line message is in the step's log.\n")


def missing_annotation(exit_code: int) -> Annotation:
    return Annotation(level="error", title="agentgate: no result",
                      message=f"agentgate check exited {exit_code} before writing a result; "
                      "its one-line message is in the step's log")
