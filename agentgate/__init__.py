"""agentgate: decide how much checking a patch gets, from the repository itself."""

from __future__ import annotations

__version__ = "0.1.0"
