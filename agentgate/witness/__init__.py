"""Skip witnesses: what each test really depended on, and the gate that may skip it.

``pytest -p agentgate.witness`` imports this package. When the ``pytest11`` entry point is
installed it names the same plugin and pytest skips the ``-p`` (no double registration);
when it is not (agentgate runs from pre-commit's environment and makes itself importable
for one recording run), pytest registers this package, so it carries the plugin's hooks.
Outside pytest nothing is imported here: the gate and the store stay free of pytest.
"""

from __future__ import annotations

import sys

if "pytest" in sys.modules:
    from agentgate.witness.plugin import (
        pytest_addoption,
        pytest_configure,
        pytest_load_initial_conftests,
    )

    __all__ = ["pytest_addoption", "pytest_configure", "pytest_load_initial_conftests"]
