"""Text, JSON and markdown renderings of one ``Result``.

Plain text is built without rich so the commit hook never pays for importing it; rich only
adds colour, and only on a TTY with ``NO_COLOR`` unset.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import sys
from collections.abc import Callable
from enum import StrEnum
from typing import Any, TextIO

from agentgate.core.model import Detail, Reason, Result, Verdict


class Format(StrEnum):
    TEXT = "text"
    JSON = "json"
    MARKDOWN = "markdown"


_STYLE = {
    Verdict.SCOPED: "bold green",
    Verdict.PROMOTE: "bold yellow",
    Verdict.FAILED: "bold red",
    Verdict.SCOPE_ESCAPE: "bold magenta",
    Verdict.BLOCKED: "bold red",
}


def safe(text: str) -> str:
    """Make a path with undecodable bytes (surrogate escapes) printable: ``\\xNN``."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def to_json(result: Result) -> str:
    """Indented two levels deep (one key, one test, one reason per line), compact below.

    json's C encoder only runs without ``indent``, and a plan on a monorepo carries a chain
    per test (thousands): the pure-Python indenting encoder was most of its JSON time."""
    return _pretty(result.to_json(), 0)


def _plain(value: Any) -> Any:
    return _jsonable(value) if isinstance(value, set | frozenset | tuple) else value


def _key(key: Any) -> str:
    """A key as json.dumps writes one (it takes str, numbers, booleans and None)."""
    if isinstance(key, str):
        return key
    if key is None or isinstance(key, bool | int | float):
        return json.dumps(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def _pretty(value: Any, depth: int) -> str:
    value = _plain(value)
    if depth >= 2 or not value or not isinstance(value, dict | list):
        return _LEAF.encode(value)
    pad, inner = "  " * depth, "  " * (depth + 1)
    if isinstance(value, dict):
        items = [f"{inner}{_LEAF.encode(_key(k))}: {_pretty(v, depth + 1)}"
                 for k, v in value.items()]
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    items = [f"{inner}{_pretty(v, depth + 1)}" for v in value]
    return "[\n" + ",\n".join(items) + f"\n{pad}]"


def _jsonable(value: Any) -> Any:
    if isinstance(value, set | frozenset | tuple):
        return sorted(value) if isinstance(value, set | frozenset) else list(value)
    return str(value)


_LEAF = json.JSONEncoder(default=_jsonable)  # json's C encoder: no indent


WIDTH = 100  # the text report's lines fit this many columns (issue 13)
# Commands whose exit code is a gate's verdict: only they say "scoped" (issue 13); every other
# command that succeeds says "ok".
GATE_COMMANDS = frozenset({"plan", "check", "hook", "pre-push"})


def verdict_word(result: Result, verdict: Verdict | None = None) -> str:
    """How ``verdict`` (default: the result's) reads in ``result``'s report."""
    verdict = result.verdict if verdict is None else verdict
    gate = result.command.split(" ", 1)[0] in GATE_COMMANDS
    return "ok" if verdict is Verdict.SCOPED and not gate else str(verdict)


def text_lines(result: Result, *, verbose: bool = False) -> list[str]:
    """Headline, where, reasons, failures, notes, details, summary -- each line wrapped to
    ``WIDTH``. A passing check's own notes are details (``--verbose``): under pre-commit its
    whole report is three lines (issue 13)."""
    lines = [f"agentgate {result.command}: {verdict_word(result)} (exit {result.exit_code})"]
    if result.base:
        lines.append(f"  range: {_short(result.base)}...{_short(result.head)}")
    elif result.head:
        lines.append(f"  at: {_short(result.head)}")
    # The most severe first, in their order otherwise (new-user trial: three "promote"
    # lines came before the "blocked" ones that decided the verdict).
    lines += [_reason_line(reason, verdict_word(result, reason.verdict))
              for reason in sorted(result.reasons, key=lambda r: -r.verdict.severity)]
    first, details, last = detail_sections(result.detail, verbose=verbose)
    lines += [f"  {safe(line)}" for line in first]
    shown_all = verbose or result.verdict is not Verdict.SCOPED
    quiet = frozenset[str]() if shown_all else _quiet(result.detail)
    lines += [f"  note: {safe(note)}" for note in result.notes if note not in quiet]
    lines += [f"  {safe(line)}" for line in (*details, *last)]
    return [part for line in lines for part in fit(line)]


def _quiet(detail: Detail | None) -> frozenset[str]:
    """The notes a passing result keeps for ``--verbose`` (a check's own)."""
    return frozenset(getattr(detail, "quiet_notes", ()))


def _reason_line(reason: Reason, kind: str) -> str:
    """``kind: rule path: why``; the rule is not repeated when it is the kind itself
    (``scope-escape app/x.py: ...``, not ``scope-escape: scope-escape app/x.py``)."""
    path = safe(reason.path).replace(" ", _KEEP) if reason.path else ""
    where = " ".join(filter(None, (f"[{reason.commit[:10]}]" if reason.commit else "", path)))
    lead = kind if reason.code == str(reason.verdict) else f"{kind}: {reason.code}"
    return f"  {lead}{' ' if where else ''}{where}: {safe(reason.detail)}"


_KEEP = "\0"  # a space inside a path while a line is wrapped: paths are never split
_CONTINUED = re.compile(r" *(?:\| )?")


def fit(line: str, width: int = WIDTH) -> list[str]:
    """``line`` wrapped to ``width`` at spaces, continuation lines indented four more than
    the line (a ``| `` output line keeps its bar); a word longer than a line stays whole."""
    if len(line) <= width:
        return [line.replace(_KEEP, " ")]
    import textwrap  # here: most reports have no long line, and the commit hook starts fast
    lead = _CONTINUED.match(line)
    prefix = lead.group(0) if lead else ""
    parts = textwrap.wrap(line[len(prefix):], width=width, initial_indent=prefix,
                          subsequent_indent=prefix + "    ", break_long_words=False,
                          break_on_hyphens=False)
    return [part.replace(_KEEP, " ") for part in parts] or [line]


Sections = tuple[list[str], list[str], list[str]]  # failures, details, summary


def detail_sections(detail: Detail | None, *, verbose: bool) -> Sections:
    """A kind's text in three parts when it defines ``sections``, else all of it as details."""
    if detail is None:
        return [], [], []
    module = importlib.import_module(f"agentgate.report.{detail.kind}")
    parts: Callable[..., Sections] | None = getattr(module, "sections", None)
    if parts is None:
        return [], detail_lines(detail, "text"), []
    return parts(detail, verbose=verbose)


def detail_lines(detail: Detail | None, form: str) -> list[str]:
    """A command's own lines, from ``agentgate.report.<kind>``: imported when used, so the
    commit hook (whose results carry no detail) never loads the other commands' code."""
    if detail is None:
        return []
    module = importlib.import_module(f"agentgate.report.{detail.kind}")
    render: Callable[[Detail], list[str]] = getattr(module, form)
    return render(detail)


def _short(sha: str | None) -> str:
    return sha[:10] if sha else "-"


def markdown(result: Result) -> str:
    out = [f"### agentgate {result.command}: `{verdict_word(result)}` (exit {result.exit_code})",
           ""]
    if result.base:
        out += [f"Range `{_short(result.base)}...{_short(result.head)}`", ""]
    if result.reasons:
        out += ["| verdict | rule | path | detail |", "|---|---|---|---|"]
        out += [
            f"| {r.verdict} | `{r.code}` | {_md(r.path or '')} | {_md(r.detail)} |"
            for r in result.reasons
        ]
        out.append("")
    out += [f"- {_md(n)}" for n in result.notes]
    # The kinds render whole markdown lines (tables, code fences): emitted as they are.
    out += detail_lines(result.detail, "markdown")
    return "\n".join(out).rstrip() + "\n"


def _md(text: str) -> str:
    return safe(text).replace("|", "\\|").replace("\n", " ")


def use_colour(stream: TextIO) -> bool:
    return stream.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


def emit(
    result: Result, fmt: Format | str = Format.TEXT, stream: TextIO | None = None, *,
    verbose: bool = False,
) -> None:
    """Print the result; a check's markdown also goes to the CI step summary, first, so that
    a failure to append it is a note in what is printed."""
    out = stream or sys.stdout
    fmt = Format(fmt)
    append_step_summary(result)
    if fmt is Format.JSON:
        out.write(to_json(result) + "\n")
    elif fmt is Format.MARKDOWN:
        out.write(markdown(result))
    elif use_colour(out):
        _emit_rich(result, out, verbose)
    else:
        out.write("\n".join(text_lines(result, verbose=verbose)) + "\n")
    out.flush()


def _emit_rich(result: Result, out: TextIO, verbose: bool) -> None:
    from rich.console import Console
    from rich.text import Text

    console = Console(file=out, highlight=False)
    lines = text_lines(result, verbose=verbose)
    head = Text(lines[0])
    head.stylize(_STYLE[result.verdict], len(f"agentgate {result.command}: "))
    console.print(head)
    for line in lines[1:]:
        console.print(Text(line))


SUMMARY_ENV = "GITHUB_STEP_SUMMARY"


def append_step_summary(result: Result) -> None:
    """GitHub Actions shows whatever a step appends to the file this variable names. Only a
    check's report goes there; written here, at the edge, after the flow returned its data."""
    target = os.environ.get(SUMMARY_ENV)
    if not target or result.detail is None or not getattr(result.detail, "step_summary", False):
        return
    try:
        with open(target, "a", encoding="utf-8") as out:
            out.write(markdown(result) + "\n")
    except OSError as exc:
        result.notes.append(f"could not append to ${SUMMARY_ENV} ({exc})")
