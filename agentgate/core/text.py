"""How a report lists many things in one line (pure)."""

from __future__ import annotations

from collections.abc import Iterable


def listed(items: Iterable[str], limit: int = 5) -> str:
    """The first ``limit`` items, and how many more: ``a, b, c and 4 more``."""
    items = list(items)
    more = f" and {len(items) - limit} more" if len(items) > limit else ""
    return ", ".join(items[:limit]) + more
