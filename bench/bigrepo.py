"""A large, realistic-looking repository to search: thousands of tracked files, plus the
ignored folders (node_modules/, build/) that a careless search would wade through.

Deterministic (fixed seed). One class, ``RequestRouter``, is defined in exactly one tracked
file and used in many others, so "find where RequestRouter is defined" has one right answer
and a noisy search.
"""

from __future__ import annotations

import random
import subprocess
from dataclasses import dataclass
from pathlib import Path

SYMBOL = "RequestRouter"
DEFINED_IN = "src/pkg_17/routing.py"
WORDS = (
    "user",
    "order",
    "cache",
    "token",
    "session",
    "invoice",
    "report",
    "queue",
    "event",
    "payload",
    "client",
    "record",
    "stream",
    "config",
    "metric",
    "account",
    "ledger",
    "shard",
    "batch",
    "route",
)


@dataclass(frozen=True)
class BigRepo:
    root: Path
    tracked: int  # files a search should see
    ignored: int  # files under ignored folders
    bytes: int

    def describe(self) -> str:
        return (
            f"{self.tracked:,} tracked files + {self.ignored:,} ignored (node_modules/, build/), "
            f"{self.bytes / 1e6:.0f} MB"
        )


def _py_module(rng: random.Random, pkg: int, mod: int, uses_symbol: bool) -> str:
    lines = [
        f'"""Module {pkg}.{mod}: {rng.choice(WORDS)} handling."""',
        "",
        "import logging",
        "from dataclasses import dataclass",
        "",
    ]
    if uses_symbol:
        lines += [f"from ..pkg_17.routing import {SYMBOL}", ""]
    lines += ["log = logging.getLogger(__name__)", ""]
    for f in range(rng.randint(6, 12)):
        a, b = rng.choice(WORDS), rng.choice(WORDS)
        lines += [
            f"def {a}_{b}_{f}(value, limit=10):",
            f'    """Compute the {a} {b} for value, up to limit."""',
            f"    total = sum(len(str(x)) for x in range(limit))  # TODO: cache the {b}",
            "    if value is None:",
            f"        log.warning('no {a} given')",
            "        return total",
            f"    return total + hash(value) % {rng.randint(7, 997)}",
            "",
        ]
    if uses_symbol:
        lines += [
            "def make_router():",
            f"    router = {SYMBOL}(prefix='/{rng.choice(WORDS)}')",
            "    return router",
            "",
        ]
    return "\n".join(lines) + "\n"


def _routing_module() -> str:
    return (
        '"""HTTP routing."""\n\nimport re\n\n\n'
        f"class {SYMBOL}:\n"
        '    """Maps request paths to handlers."""\n\n'
        "    def __init__(self, prefix: str = '') -> None:\n"
        "        self.prefix = prefix\n        self.routes = []\n\n"
        "    def add(self, pattern, handler):\n"
        "        self.routes.append((re.compile(self.prefix + pattern), handler))\n\n"
        "    def dispatch(self, path):\n"
        "        for regex, handler in self.routes:\n"
        "            if regex.fullmatch(path):\n"
        "                return handler\n"
        "        raise LookupError(path)\n"
    )


def _ts_module(rng: random.Random, i: int) -> str:
    a = rng.choice(WORDS)
    body = "\n".join(
        f"export function {a}{n}(x: number): number {{\n  return x * {n} + {i};\n}}\n"
        for n in range(rng.randint(5, 10))
    )
    return f"// {a} helpers\nimport {{ {SYMBOL}Client }} from './api';\n\n{body}"


def _md_doc(rng: random.Random, i: int) -> str:
    topic = rng.choice(WORDS)
    return (
        f"# {topic.title()} guide {i}\n\n"
        + "\n".join(f"- The {topic} step {n} uses `{rng.choice(WORDS)}_{rng.choice(WORDS)}`." for n in range(30))
        + "\n"
    )


def _write(path: Path, text: str) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode()
    path.write_bytes(data)
    return len(data)


def generate(root: Path, packages: int = 40, modules: int = 60) -> BigRepo:
    """Write the repository under ``root`` (an empty directory) and return what it holds."""
    rng = random.Random(1234)
    size = tracked = ignored = 0
    root.mkdir(parents=True, exist_ok=True)
    size += _write(root / ".gitignore", "node_modules/\nbuild/\n*.pyc\n")
    size += _write(root / "README.md", "# Big demo service\n\nGenerated for agentcli benchmarks.\n")
    tracked += 2
    for pkg in range(packages):
        size += _write(root / f"src/pkg_{pkg:02d}/__init__.py", "")
        tracked += 1
        for mod in range(modules):
            uses = (pkg * modules + mod) % 16 == 5  # about one module in sixteen uses the router
            size += _write(root / f"src/pkg_{pkg:02d}/mod_{mod:03d}.py", _py_module(rng, pkg, mod, uses))
            tracked += 1
    size += _write(root / DEFINED_IN, _routing_module())
    tracked += 1
    for i in range(600):
        size += _write(root / f"tests/test_{i:04d}.py", _py_module(rng, 99, i, i % 10 == 0))
        tracked += 1
    for i in range(300):
        size += _write(root / f"docs/guide_{i:03d}.md", _md_doc(rng, i))
        tracked += 1
    for i in range(700):
        size += _write(root / f"web/src/part_{i // 100}/mod_{i:03d}.ts", _ts_module(rng, i))
        tracked += 1
    # Ignored: vendored packages and build output, both full of matches a search must skip.
    for i in range(3000):
        size += _write(
            root / f"node_modules/lib_{i // 50:02d}/dist/file_{i:04d}.js",
            f"// vendored\nclass {SYMBOL} {{ constructor() {{ this.n = {i}; }} }}\n" * 20,
        )
        ignored += 1
    for i in range(1500):
        pkg, mod = divmod(i, modules)
        size += _write(root / f"build/lib/pkg_{pkg:02d}/mod_{mod:03d}.py", _py_module(rng, pkg, mod, True))
        ignored += 1
    size += _write(root / "build/lib/pkg_17/routing.py", _routing_module())
    ignored += 1
    # A git repository (nothing committed is needed), so bare rg applies .gitignore as a user's would.
    subprocess.run(["git", "init", "-q", str(root)], check=True, capture_output=True)
    return BigRepo(root, tracked, ignored, size)
