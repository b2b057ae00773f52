"""Skip witnesses: what each test really depended on, and the gate that may skip it.

``pytest -p agentgate.witness`` imports this package. When the ``pytest11`` entry point is
installed it names the same plugin and pytest skips the ``-p`` (no double registration);
when it is not (agentgate runs from pre-commit's environment and makes itself importable
for one recording run), pytest registers this package, so it carries the plugin's hooks.
Outside pytest nothing is imported here: the gate and the store stay free of pytest.

PYTEST_DONT_REWRITE: ``agentgate.witness.boot`` imports this package before pytest and
adds the hooks itself; ``-p agentgate.witness`` would otherwise warn that the package cannot
be rewritten (an error under ``-W error``). It holds no assertion to rewrite.
"""

from __future__ import annotations

import sys

if "pytest" in sys.modules:
    from agentgate.witness.plugin import (
        pytest_addoption,
        pytest_collection_modifyitems,
        pytest_configure,
        pytest_load_initial_conftests,
    )

    # pytest_collection_modifyitems: a shard's and an incremental recording's deselection,
    # which a recording from pre-commit's environment (``-p agentgate.witness``) needs too.
    __all__ = ["pytest_addoption", "pytest_collection_modifyitems", "pytest_configure",
               "pytest_load_initial_conftests"]
