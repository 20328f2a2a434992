"""What a headless refusal advises: ways to allow the call that work in a run nobody answers.

A rule added to the repository's ``.agentcli/settings.toml`` does not: an allow rule there widens
permissions, so it applies only in a trusted workspace, and a changed file asks for trust again, which
no one can give in ``-p`` (the next run says the file is ignored, and would give the same advice). What
works is the rule for one run (``--allowedTools``) or in your own settings for this workspace, the
file an "always" answer writes, which applies without the workspace's trust."""

from __future__ import annotations

import shlex
from pathlib import Path

from ... import paths


def ways_to_allow(flag: str, rules: tuple[str, ...], rule_kind: str, root: Path) -> str:
    """``flag``: a flag that would allow the call ("" for none); ``rules``: the allow rules that would;
    ``rule_kind``: what such a rule must say, where no exact rule can be named ("" for none)."""
    ways = [flag] if flag else []
    own = paths.workspace_config_file(root)
    if rules:
        ways.append(f"pass --allowedTools {shlex.quote(' '.join(rules))}")
        listed = ", ".join(f"`{rule}`" for rule in rules)
        ways.append(
            f"add {listed} to the allow list under [permissions] in your own settings for this workspace, {own}"
        )
    elif rule_kind:
        ways.append(f"allow it with {rule_kind}, by --allowedTools or in your own settings for this workspace, {own}")
    if len(ways) < 2:
        return "".join(ways)
    return ", ".join(ways[:-1]) + ", or " + ways[-1]
