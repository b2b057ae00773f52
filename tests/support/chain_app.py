"""The chain app: a test reaching the code it tests through three import shapes.

``plan`` and ``check`` (tests/flows/) and the band at push time are all judged on it.
"""

from __future__ import annotations

from tests.support.git_repo import GitRepo

# tests/test_report.py -> app/report.py (imports inside a function) -> app/checkout/session.py
# (a relative import) -> app/pricing/tax.py -> app/pricing/rates.py
CHAIN_APP = {
    "app/__init__.py": "",
    "app/pricing/__init__.py": "",
    "app/pricing/rates.py": "RATE = 0.2\n",
    "app/pricing/tax.py": "from app.pricing.rates import RATE\n\n"
    "def tax(x):\n    return x * RATE\n",
    "app/checkout/__init__.py": "",
    "app/checkout/session.py": "from ..pricing import tax as tax_mod\n\n"
    "def total(x):\n    return x + tax_mod.tax(x)\n",
    "app/report.py": "def render(x):\n    from app.checkout.session import total\n\n"
    "    return f'{total(x):.2f}'\n",
    "app/util.py": "def shout(s):\n    return s.upper()\n",
    "tests/test_session.py": "from app.checkout.session import total\n\n"
    "def test_total():\n    assert total(10) == 12\n",
    "tests/test_report.py": "from app.report import render\n\n"
    "def test_render():\n    assert render(10) == '12.00'\n",
    "tests/test_util.py": "from app.util import shout\n\ndef test_shout():\n"
    "    assert shout('a') == 'A'\n",
    "README.md": "demo\n",
}


def commit(repo: GitRepo, files: dict[str, str], message: str = "change") -> None:
    """Write ``files`` and commit them all: one history step of a test."""
    repo.files(files)
    repo.commit(message)
