"""The one place the ACP front end reaches past the session's public surface.

Issue 29's session Protocol has not landed, so a few things an editor asks for have no public method on
``Session`` yet. Each is one small function here, so the Protocol can take them over in one move.
"""

from __future__ import annotations

from ...core.session import Session


def custom_commands(session: Session) -> list[tuple[str, str, str]]:
    """The session's slash commands (the user's and the workspace's own): name, description, argument hint."""
    return [(c.name, c.description, c.argument_hint) for c in session.commands.values()]


def cancel_child(session: Session, child_id: str) -> bool:
    """Stop one running subagent; its parent still gets its summary."""
    return session.subagents.cancel(child_id)


def deny_for_session(session: Session, rules: tuple[str, ...]) -> None:
    """"Reject always": the rules an "allow always" would have saved become deny rules for this session."""
    ruleset = session.permissions.rules
    for rule in type(ruleset).parse({"deny": list(rules)}).deny:
        if rule not in ruleset.deny:
            ruleset.deny.append(rule)
