"""Every built-in tool class, declared (``core/tool_facts.py``): the tools room's, the language servers' and the
engine's own. A session declares them as it builds its tools; what reads a view of all of them before that (an
agent file's tool list, ``--tools``) calls ``catalogue`` first. A new built-in tool's module is named here."""

from __future__ import annotations

import functools

from ..tool_facts import KNOWN, Catalogue


@functools.cache
def catalogue() -> Catalogue:
    """``KNOWN``, with every built-in tool class's module imported (each class declares itself as it is defined)."""
    from ..lsp import tool  # noqa: F401
    from ..tools import default_tools, on_demand, structured_output, web_search, worktrees  # noqa: F401
    from . import skill_tool  # noqa: F401  (task's module imports the agent types, which read this: it declares
    # itself as the session loads it, and main_only, it is never named by agents)

    default_tools()  # imports the modules of the tools it gives (their files, search, shell, git, web, todo)
    return KNOWN
