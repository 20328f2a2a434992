"""The calls a tool's ``judged_by`` sends to a judgment of their own rather than of a path: a command line
(bash: each simple command against the rules, what hides from a deny rule, the rule an answer saves) and a web
address (web_fetch: the host in every spelling against ``domain:`` rules). Each reads the permissions through
``decision.Rulebook``; ``Permissions.decide`` calls them."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from .bash_effects import inert
from .decision import ALLOW, BYPASS, Decision, Rulebook, plan_refusal, refuse
from .rules import CommandLine, SimpleCommand, command_rule, rule_hits, split_command
from .web_address import fetch_host, fetch_rule_hits, host_aliases, url_forms


def decide_command(book: Rulebook, command: str, agent: str, tool: str) -> Decision:
    line = split_command(command)
    for part in line.commands:
        deny = book.find_rule("deny", tool, lambda r: rule_hits(r, part) == "yes")  # noqa: B023 (used before the loop goes on)
        if deny:
            return refuse(
                f"The command `{part.text}` is denied by the rule `{deny.text}`; do not try to get around it."
            )
    if book.mode == "plan":
        return refuse(plan_refusal(tool, "bypassPermissions"))
    hidden = hidden_from_deny(book, line, tool)
    if hidden:
        return hidden
    if book.mode == "bypassPermissions":
        return ALLOW
    if line.unknown:
        return Decision("ask", f"agentcli cannot tell what it runs: {line.unknown}", allows=f"run with {BYPASS}")
    if line.substitution:
        return Decision(
            "ask",
            "it uses command substitution, $(...) or backticks, which always needs a yes",
            allows=f"run with {BYPASS}",
        )
    if not line.commands:
        return Decision("ask", allows=f"run with {BYPASS}")
    for part in line.commands:
        ask = book.find_rule("ask", tool, lambda r: bool(rule_hits(r, part)))  # noqa: B023 (called before the loop goes on)
        if ask:
            return Decision("ask", f"`{part.text}` matches the ask rule `{ask.text}`", allows=f"run with {BYPASS}")
    # Builtins that change nothing (echo, true, ...) need no rule beside other commands; alone, they ask.
    needed = [part for part in line.commands if not inert(part)] or list(line.commands)
    missing = [part for part in needed if not command_allowed(book, part, agent, tool)]
    if not missing:
        return ALLOW
    suggested = [command_rule(part, tool) for part in missing]
    once = any(part.writes_file for part in missing) or not all(suggested)
    shown = ", ".join(f"`{part.text}`" for part in missing)
    writes = [part for part in missing if part.writes_file]
    dynamic = [part for part in missing if part.dynamic]
    named: tuple[str, ...] = ()
    kind = ""
    if writes:
        how = "a redirection" if writes[0].writes[0] == ">" else f"`{writes[0].writes[0]}`"
        reason = f"`{writes[0].text}` writes to a file through {how}"
        named = (f"{tool}({writes[0].text})",) if "*" not in writes[0].text else ()  # a * never names a write
        kind = "" if named else "a rule that spells out what it writes"
    elif dynamic:
        reason = (
            f"`{dynamic[0].text}` uses `{dynamic[0].dynamic}`, whose value is known only when it runs, "
            "so no rule can say what it does"
        )
    else:
        reason = f"{shown} {'is' if len(missing) == 1 else 'are'} not covered by an allow rule"
        named = tuple(dict.fromkeys(r for r in suggested if r))
        kind = "" if named else f"a matching `{tool}(...)` rule"
    advice = Decision("ask", allows=f"run with {BYPASS}", allow_rules=named, rule_kind=kind)
    unsaid = next((part for part, rule in zip(missing, suggested, strict=True) if not rule), None)
    if unsaid is not None and not writes and not dynamic:
        why = (
            "reads text written on the line, which no rule names"
            if unsaid.stdin
            else "only sets variables"
            if not unsaid.words
            else "has no exact rule"
        )
        return dataclasses.replace(advice, reason=f"`{unsaid.text}` {why}, so it is allowed one call at a time")
    if len(line.commands) == 1 and not writes and not dynamic:
        reason = ""  # a plain command in default mode: nothing unusual to say
    return dataclasses.replace(advice, reason=reason, rules=() if once else tuple(dict.fromkeys(suggested)))


def hidden_from_deny(book: Rulebook, line: CommandLine, tool: str) -> Decision | None:
    """A question when a bash deny rule might apply to a part agentcli cannot read; deny rules
    hold in every mode, so a line that could hide what they name is never let through unasked."""
    rules = book.rules_for("deny", tool)
    if not rules:
        return None
    why = f"agentcli cannot tell what it runs ({line.unknown})" if line.unknown else ""
    rule = rules[0]
    if not why:
        for part in line.commands:
            rule = next((r for r in rules if rule_hits(r, part) == "maybe"), None)  # type: ignore[assignment]
            if rule is not None:
                why = f"`{part.text}` uses `{part.dynamic}`, whose value is known only when it runs"
                break
    if not why:
        return None
    return Decision(
        "ask",
        f"{why}, so it could be what the deny rule `{rule.text}` forbids",
        allows="write the command so that every part of it is plain to read",
    )


def command_allowed(book: Rulebook, part: SimpleCommand, agent: str, tool: str) -> bool:
    # A rule covers a command that writes files only if it names what it writes: ``bash(make > build.log)``
    # (Rule.allows).
    return any(rule.allows(part) for rule in book.rules_for("allow", tool, agent))


def decide_fetch(book: Rulebook, url: str, tool: str) -> Decision:
    """web_fetch asks before the first fetch of each domain; ``web_fetch(domain:HOST)`` (Claude Code's
    ``WebFetch(domain:HOST)``, ``*.`` for subdomains) allows or denies one. The tool itself refuses
    what no rule can allow (private addresses, other schemes), so a URL it cannot read passes here.
    Hosts and URLs are compared in one spelling (``web_address``); a deny or ask rule on an IPv4
    address also names the IPv6 forms that carry it."""
    host = fetch_host(url)
    if not host:
        return ALLOW
    forms = [(form, alias) for form in url_forms(url) for alias in host_aliases(host)]
    deny = book.find_rule("deny", tool, lambda r: any(fetch_rule_hits(r, u, a) for u, a in forms))
    if deny:
        return refuse(f"Fetching {host} is denied by the rule `{deny.text}`; do not try to get around it.")
    if book.mode == "bypassPermissions":
        return ALLOW
    ask = book.find_rule("ask", tool, lambda r: any(fetch_rule_hits(r, u, a) for u, a in forms))
    rule = f"{tool}(domain:{host})"
    if ask:
        return Decision("ask", f"it matches the ask rule `{ask.text}`", allows=f"run with {BYPASS}")
    if book.find_rule("allow", tool, lambda r: fetch_rule_hits(r, url, host)):
        return ALLOW
    return Decision("ask", f"{tool} has not fetched from {host} yet", rules=(rule,), allow_rules=(rule,))


def fetch_denial(book: Rulebook, url: str, addresses: Iterable[str], tool: str) -> str:
    """Why web_fetch may not connect to ``addresses``, what ``url``'s host resolved to: the deny rule
    that names one of them (a rule on an address holds for every name that leads to it); "" if none."""
    names = [alias for address in addresses for alias in host_aliases(address)]
    deny = book.find_rule("deny", tool, lambda r: any(fetch_rule_hits(r, url, name) for name in names))
    return (
        (
            f"Fetching {fetch_host(url)} is denied by the rule `{deny.text}`: it resolves to an address the "
            "rule names; do not try to get around it."
        )
        if deny
        else ""
    )


def fetch_redirect(book: Rulebook, first: str, then: str, tool: str) -> Decision:
    """A redirect from ``first``, allowed, to ``then`` on the same host: allow follows it, refuse says
    why not, and ask reports it to the model (whose fetch of ``then`` is asked as any other). A question
    the same as the one ``first`` was allowed by is answered already."""
    before, after = decide_fetch(book, first, tool), decide_fetch(book, then, tool)
    if after.verdict == "ask" and (after.reason, after.rules) == (before.reason, before.rules):
        return ALLOW
    return after
