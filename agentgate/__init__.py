"""agentgate: decide how much checking a patch gets, from the repository itself.

PYTEST_DONT_REWRITE: ``agentgate.witness.boot`` imports this package before pytest, which
would otherwise warn that it cannot rewrite it (an error under ``-W error``) when agentgate
is installed with its pytest plugin.
"""

from __future__ import annotations

__version__ = "0.1.0"
