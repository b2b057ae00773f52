"""The embedded example repository ``agentgate demo`` plays an agent's patch against."""

from __future__ import annotations

BASE = {
    "pyproject.toml": '[project]\nname = "shop"\nversion = "0.1"\n\n'
    '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n\n'
    '[tool.agentgate]\nprotected = ["app/payments"]\n',
    ".agentgate/scope": "# the agent's task: tax rules only\napp/pricing\ntests\n",
    "app/__init__.py": "",
    "app/pricing/__init__.py": "",
    "app/pricing/tax.py": "RATES = {'standard': 0.2, 'reduced': 0.05}\n\n\n"
    "def tax(amount: float, kind: str = 'standard') -> float:\n"
    "    return round(amount * RATES[kind], 2)\n",
    "app/checkout/__init__.py": "",
    "app/checkout/session.py": "from app.pricing.tax import tax\n\n\n"
    "def total(amount: float) -> float:\n    return amount + tax(amount)\n",
    "tests/__init__.py": "",
    "tests/fixtures/rates.json": '{"standard": 0.2}\n',
    "tests/test_tax.py": "import json\nimport pathlib\n\nfrom app.pricing.tax import tax\n\n"
    "FIXTURE = pathlib.Path(__file__).parent / 'fixtures' / 'rates.json'\n\n\n"
    "def test_standard():\n    rate = json.loads(FIXTURE.read_text())['standard']\n"
    "    assert tax(100) == 100 * rate\n",
    "tests/test_session.py": "from app.checkout.session import total\n\n\n"
    "def test_total():\n    assert total(100) == 120\n",
    "README.md": "A tiny shop.\n",
}

# The agent's patch, step by step.
WIDEN_SCOPE = {
    ".agentgate/scope": "# the agent's task: tax rules only\napp/pricing\napp/checkout\ntests\n",
    "app/checkout/session.py": "from app.pricing.tax import tax\n\n\n"
    "def total(amount: float) -> float:\n    return round(amount + tax(amount), 2)\n",
}
OUT_OF_SCOPE = {
    "app/checkout/session.py": WIDEN_SCOPE["app/checkout/session.py"],
}
FIXTURE_EDIT = {"tests/fixtures/rates.json": '{"standard": 0.25}\n'}
IN_SCOPE = {
    "app/pricing/tax.py": "RATES = {'standard': 0.2, 'reduced': 0.05, 'zero': 0.0}\n\n\n"
    "def tax(amount: float, kind: str = 'standard') -> float:\n"
    "    return round(amount * RATES[kind], 2)\n",
    "tests/test_tax_case_7.py": "from app.pricing.tax import tax\n\n\n"
    "def test_zero_rated():\n    assert tax(100, 'zero') == 0\n",
}
