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
    # Modules no patch to pricing reaches: their tests are what the band skips.
    "app/catalog/__init__.py": "",
    "app/catalog/products.py": "PRODUCTS = {'tea': 4.0, 'cake': 3.5}\n\n\n"
    "def price(name: str) -> float:\n    return PRODUCTS[name]\n",
    "app/inventory/__init__.py": "",
    "app/inventory/stock.py": "from app.catalog.products import PRODUCTS\n\n"
    "STOCK = {name: 10 for name in PRODUCTS}\n\n\n"
    "def take(name: str, count: int) -> int:\n"
    "    if count > STOCK[name]:\n        raise ValueError(name)\n"
    "    STOCK[name] -= count\n    return STOCK[name]\n",
    "tests/test_catalog.py": "from app.catalog.products import PRODUCTS, price\n\n\n"
    "def test_price():\n    assert price('tea') == 4.0\n\n\n"
    "def test_every_product_has_a_price():\n    assert all(p > 0 for p in PRODUCTS.values())\n"
    "\n\ndef test_unknown_product():\n    assert 'coffee' not in PRODUCTS\n",
    "tests/test_inventory.py": "import pytest\n\nfrom app.inventory.stock import take\n\n\n"
    "def test_take():\n    assert take('tea', 1) == 9\n\n\n"
    "def test_take_too_many():\n    with pytest.raises(ValueError):\n"
    "        take('cake', 11)\n\n\n"
    "def test_take_all():\n    assert take('cake', 10) == 0\n",
    "README.md": "A tiny shop.\n",
}
# What the band must skip when only pricing changes (the demo checks it does).
UNREACHED_TESTS = ("tests/test_catalog.py", "tests/test_inventory.py")

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


def suite_size() -> int:
    """Tests in the suite once the patch is in (each ``def test_`` is one: none is
    parametrized); a test of the demo collects the suite to keep this true."""
    files = {**BASE, **IN_SCOPE}
    return sum(text.count("\ndef test_") for path, text in files.items()
               if path.startswith("tests/test_"))
