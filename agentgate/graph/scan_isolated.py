"""Scanning a huge source file in a child process, so no file can crash the planner.

A generated file (a 60,000-term expression, a deeply nested literal) overflows the stack of
grimp's Rust scanner -- a SIGSEGV that kills agentgate with no message -- or Python's own
parser (issue 12). Such files are rare and big, so every source over ``LARGE`` bytes is
scanned in a child process of agentgate's own interpreter, one file a child. A child that
dies, fails or runs out of time leaves an escalation for that file: it depends on
everything it might load (the planner keeps that local), and the build goes on.
"""

from __future__ import annotations

import marshal
import subprocess
import sys
from collections.abc import Callable

LARGE = 128 * 1024  # bytes; below this neither parser has come near its stack limit
TIMEOUT = 60  # seconds for one file
_CHILD = (
    "import marshal, sys\n"
    "from agentgate.graph import scan\n"
    "text = sys.stdin.buffer.read().decode('utf-8', 'surrogatepass')\n"
    "got = scan.scan_here(text)\n"
    "sys.stdout.buffer.write(marshal.dumps((got.imports, got.escalations)))\n"
)

Scan = tuple[tuple[str, ...], tuple[tuple[str, str], ...]]


def scan_isolated(text: str, fallback: Callable[[str], Scan] | None = None) -> Scan:
    """(imports, escalations) of one source, read by a child process."""
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _CHILD], input=text.encode("utf-8", "surrogatepass"),
            capture_output=True, timeout=TIMEOUT, check=False,
        )
    except subprocess.TimeoutExpired:
        return (), (("too-complex", f"scanning it took over {TIMEOUT} s"),)
    if proc.returncode != 0:
        how = f"signal {-proc.returncode}" if proc.returncode < 0 else f"exit {proc.returncode}"
        return (), (("too-complex", f"too large or deeply nested to scan (the scanner "
                     f"failed: {how})"),)
    try:
        imports, escalations = marshal.loads(proc.stdout)
    except (EOFError, ValueError, TypeError):
        return (), (("too-complex", "the scanner's answer could not be read"),)
    return tuple(imports), tuple(tuple(e) for e in escalations)
