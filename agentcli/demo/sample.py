"""The sample repository ``agentcli --demo`` opens: a tiny shop backend, written to a temporary folder."""

from __future__ import annotations

import subprocess
from pathlib import Path

FILES = {
    "README.md": "# tiny-shop\n\nA small shop backend: accounts, carts and orders.\n\n"
    "Run the tests with `python -m pytest`.\n",
    "AGENTS.md": "# Notes for agents\n\n- Code lives in `shop/`, tests in `tests/`.\n- Keep functions small.\n",
    ".gitignore": "__pycache__/\nbuild/\n",
    "shop/__init__.py": '"""tiny-shop: accounts, carts and orders."""\n',
    "shop/auth.py": '''"""Accounts: password checks and login."""

import hashlib
import hmac

from .sessions import start_session


def hash_password(password: str, salt: str) -> str:
    return hashlib.sha256((salt + password).encode()).hexdigest()


def login(user, password: str):
    """Check the password and start a session; None when it is wrong."""
    if not hmac.compare_digest(hash_password(password, user.salt), user.password_hash):
        return None
    return start_session(user)
''',
    "shop/sessions.py": '''"""Sessions: who is logged in, and until when."""

import secrets
import time

SESSION_SECONDS = 3600
_sessions: dict[str, tuple[str, float]] = {}


def start_session(user) -> str:
    token = secrets.token_urlsafe(16)
    _sessions[token] = (user.name, time.time() + SESSION_SECONDS)
    return token


def user_for(token: str):
    name, expires = _sessions.get(token, (None, 0.0))
    return name if time.time() < expires else None
''',
    "shop/cart.py": '''"""Carts: what a user is about to buy."""

from dataclasses import dataclass, field


@dataclass
class Cart:
    items: dict[str, int] = field(default_factory=dict)

    def add(self, sku: str, quantity: int = 1) -> None:
        self.items[sku] = self.items.get(sku, 0) + quantity

    def total(self, prices: dict[str, int]) -> int:
        # TODO: discounts
        return sum(prices[sku] * n for sku, n in self.items.items())
''',
    "shop/orders.py": '''"""Orders: a cart that was paid for."""

from .cart import Cart


def place_order(cart: Cart, prices: dict[str, int], pay) -> dict:
    amount = cart.total(prices)
    receipt = pay(amount)
    return {"items": dict(cart.items), "amount": amount, "receipt": receipt}
''',
    "tests/test_cart.py": """from shop.cart import Cart


def test_total():
    cart = Cart()
    cart.add("tea", 2)
    assert cart.total({"tea": 3}) == 6
""",
}


def write_sample(root: Path) -> Path:
    """Write the sample repository to ``root`` and commit it (when git is there); returns ``root``."""
    for name, text in FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    env = {
        "GIT_AUTHOR_NAME": "demo",
        "GIT_AUTHOR_EMAIL": "demo@example.com",
        "GIT_COMMITTER_NAME": "demo",
        "GIT_COMMITTER_EMAIL": "demo@example.com",
        "PATH": "/usr/bin:/bin:/usr/local/bin",
        "HOME": str(root),
    }
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "tiny-shop"]):
        try:
            subprocess.run(
                ["git", "-c", "core.hooksPath=/dev/null", *args],
                cwd=root,
                env=env,
                capture_output=True,
                check=True,
                timeout=30,
            )
        except (OSError, subprocess.SubprocessError):
            break  # no git: the demo works on a plain folder
    return root
