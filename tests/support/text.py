"""The text report as one line per item: ``report.render.fit`` wraps a line longer than 100
columns with continuation lines indented four more than it; tests that look for a phrase
read the lines joined back (the layout itself is tested in tests/report/test_layout.py)."""

from __future__ import annotations


def unwrap(text: str) -> str:
    """``text`` with every continuation line joined to the line it continues."""
    out: list[str] = []
    lead = -10
    for line in text.splitlines():
        width = len(line) - len(line.lstrip(" "))
        if out and out[-1].strip() and width == lead + 4 and line.strip():
            out[-1] += " " + line[width:]
            continue
        out.append(line)
        lead = width
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")
