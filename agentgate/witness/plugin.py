"""pytest plugin entry point (owned by the witness work). Costs nothing unless asked to record."""

from __future__ import annotations
