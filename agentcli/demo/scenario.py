"""Reactive scripts for the fake Anthropic server.

``answer(body)`` plays a tiny but plausible coding agent: it returns the content blocks of the
reply to one Messages API request body. It decides only from the request body, so the real
agentcli can be driven end to end without a key: ``agentcli --demo`` serves it (``server.py``),
and the tests' stand-in server wraps it (``tests/fakes/scenarios.py``). Standard library only.

Behaviour:

* **Main agent** (offered a tool named ``task``):
  - user asks to use a subagent / delegate / "find where X is handled" →
    one ``task`` call per term X (up to three, in parallel);
  - user names something to look for ("grep for `x`", "where is foo") →
    explores itself, like a subagent would;
  - otherwise → a short Markdown answer;
  - ``task`` results came back → a short answer quoting them.
* **Background** ("check the tests in the background") → ``background.py``: a child in the background,
  told how to steer it, and its result reported when it arrives.
* **Reviewer** (a brief asking for a ``findings`` block: ``/review``) → ``review.py``.
* **Subagent** (no ``task`` tool): ``grep`` for X → ``read_file`` of the first
  hit → "X is handled in path:line ...".  Nothing found → says so.  Never more
  than a few turns.
* **No tools offered, or tool_choice none** (final summaries, compaction) →
  a text summary of what the conversation found.
"""

from __future__ import annotations

import itertools
import re
import secrets
import string
from typing import Any

from . import background, changes, review

Blocks = list[dict[str, Any]]

_ALNUM = string.ascii_letters + string.digits
_serial = itertools.count(1)


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def tool_use_block(name: str, input: dict[str, Any]) -> dict[str, Any]:
    """A tool_use block with a fresh id in the API's format (``toolu_01…``)."""
    suffix = "".join(secrets.choice(_ALNUM) for _ in range(16))
    return {"type": "tool_use", "id": f"toolu_01d{next(_serial):06d}{suffix}", "name": name, "input": dict(input)}


def reply(*blocks: dict[str, Any]) -> Blocks:
    return list(blocks)


def text(content: str) -> Blocks:
    return [text_block(content)]


def blocks_of(content: Any) -> Blocks:
    """A message's content as a list of blocks (a string becomes one text block)."""
    if isinstance(content, str):
        return [text_block(content)]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def message_text(message: dict[str, Any]) -> str:
    return "\n\n".join(b.get("text", "") for b in blocks_of(message.get("content")) if b.get("type") == "text")


def first_user_text(body: dict[str, Any]) -> str:
    """The text of the first user message (a subagent's brief)."""
    return next((message_text(m) for m in _messages(body) if m.get("role") == "user"), "")


def tool_results(body: dict[str, Any]) -> Blocks:
    """The tool_result blocks of the last message (if it is a user message)."""
    msgs = _messages(body)
    if not msgs or msgs[-1].get("role") != "user":
        return []
    return [b for b in blocks_of(msgs[-1].get("content")) if b.get("type") == "tool_result"]


def tool_result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str) or content is None:
        return content or ""
    return "\n".join(b.get("text", "") for b in blocks_of(content) if b.get("type") == "text")


def offers_tool(body: dict[str, Any], name: str) -> bool:
    tools = body.get("tools")
    return isinstance(tools, list) and any(isinstance(t, dict) and t.get("name") == name for t in tools)


def find_tool_use(body: dict[str, Any], tool_use_id: str) -> dict[str, Any] | None:
    """The assistant tool_use block with this id, anywhere in the conversation."""
    for m in _messages(body):
        if m.get("role") == "assistant":
            for b in blocks_of(m.get("content")):
                if b.get("type") == "tool_use" and b.get("id") == tool_use_id:
                    return b
    return None


__all__ = ["answer", "extract_terms", "parse_grep_hits", "wants_delegation", "MAX_EXPLORE_TURNS"]

MAX_EXPLORE_TURNS = 4  # assistant turns before an explorer must answer

_STOP = {
    "a",
    "an",
    "the",
    "is",
    "are",
    "was",
    "were",
    "be",
    "our",
    "my",
    "your",
    "this",
    "that",
    "these",
    "those",
    "we",
    "it",
    "its",
    "all",
    "where",
    "how",
    "what",
    "which",
    "who",
    "in",
    "of",
    "to",
    "for",
    "on",
    "at",
    "by",
    "code",
    "codebase",
    "repo",
    "repository",
    "project",
    "handled",
    "defined",
    "implemented",
    "logic",
    "does",
    "do",
    "gets",
    "get",
    "and",
    "or",
    "please",
    "me",
    "you",
    "can",
    "could",
    "find",
    "use",
    "using",
    "subagent",
    "subagents",
    "agent",
    "agents",
    "task",
    "delegate",
    "some",
    "any",
    "with",
    "from",
    "into",
    "file",
    "files",
}
_VERBS = (
    "handled|defined|implemented|configured|used|done|set|computed|processed|parsed|validated|called|created|"
    "stored|declared|checked|initialized|initialised|registered|managed|built|loaded|read|written|sent|raised"
)
_WORD = r"[A-Za-z_][\w.\-/]*"


def _dedupe(items: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for item in items:
        item = item.strip()
        if item and item.lower() not in seen:
            seen.add(item.lower())
            out.append(item)
    return out


def _first_content_word(phrase: str) -> str | None:
    for word in re.findall(_WORD, phrase):
        word = word.rstrip(".-/")
        if word and word.lower() not in _STOP:
            return str(word)
    return None


def extract_terms(message: str) -> list[str]:
    """The things a request asks to look for, most explicit first.

    Backticked or quoted terms win; then "where X (, Y and Z) is handled";
    then "search/grep/look for X"; then identifier-looking words.
    """
    explicit = re.findall(r"`([^`\n]{1,80})`", message)
    explicit += re.findall(r'(?<!\w)"([^"\n]{1,60})"', message)
    explicit += re.findall(r"(?<!\w)'([^'\n]{1,60})'(?!\w)", message)
    if explicit:
        return _dedupe(explicit)

    terms: list[str] = []
    pattern = rf"\bwhere\s+(.+?)(?:\s+(?:is|are|gets?|was|were)\s+(?:{_VERBS})\b|[?.!;\n]|$)"
    for m in re.finditer(pattern, message, re.IGNORECASE):
        phrase = re.sub(r"^(?:is|are|do|does)\s+", "", m.group(1).strip(), flags=re.IGNORECASE)
        for part in re.split(r",|\band\b|\bor\b", phrase):
            word = _first_content_word(part)
            if word:
                terms.append(word)
    if terms:
        return _dedupe(terms)

    for m in re.finditer(rf"\b(?:search|grep|look|hunt)(?:\s+for)?\s+({_WORD})", message, re.IGNORECASE):
        word = _first_content_word(m.group(1))
        if word:
            terms.append(word)
    if terms:
        return _dedupe(terms)

    identifiers = re.findall(r"\b[A-Za-z_]\w*(?:_\w+|[a-z][A-Z]\w*|\(\))", message)
    return _dedupe(identifiers)


def wants_delegation(message: str) -> bool:
    return bool(re.search(r"\b(sub-?agents?|delegate|task tool|in parallel)\b|\bfind where\b", message, re.I))


_GREP_LINE = re.compile(r"^(?P<path>[^\s:][^:\n]*):(?P<line>\d+):(?P<text>.*)$")


def parse_grep_hits(output: str) -> list[tuple[str, int, str]]:
    """``path:line:text`` lines of grep output, as (path, line, text)."""
    hits = []
    for line in output.splitlines():
        m = _GREP_LINE.match(line.strip())
        if m:
            hits.append((m["path"], int(m["line"]), m["text"].strip()))
    return hits


# --------------------------------------------------------------------------
# Reading the conversation
# --------------------------------------------------------------------------


def _messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body.get("messages") or [] if isinstance(m, dict)]


def _assistant_turns(body: dict[str, Any]) -> int:
    return sum(1 for m in _messages(body) if m.get("role") == "assistant")


def _latest_request(body: dict[str, Any]) -> str:
    """The most recent user message that has text in it (not only tool results)."""
    for m in reversed(_messages(body)):
        if m.get("role") == "user":
            t = message_text(m).strip()
            if t:
                return t
    return ""


def _exchanges(body: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(tool_use, tool_result) pairs in conversation order."""
    pairs = []
    for m in _messages(body):
        if m.get("role") != "user":
            continue
        for b in blocks_of(m.get("content")):
            if b.get("type") == "tool_result":
                use = find_tool_use(body, b.get("tool_use_id", ""))
                if use is not None:
                    pairs.append((use, b))
    return pairs


def _grep_hits(body: dict[str, Any]) -> list[tuple[str, int, str]]:
    """Hits from the latest successful grep in the conversation, definitions first."""
    for use, result in reversed(_exchanges(body)):
        if use.get("name") == "grep" and not result.get("is_error"):
            hits = parse_grep_hits(tool_result_text(result))
            term = str(use.get("input", {}).get("pattern", ""))
            defines = re.compile(
                rf"\b(?:def|class|function|func|fn|interface|struct|type)\s+{re.escape(term)}\b", re.I
            )  # `cart` finds `class Cart`
            # definitions first, prose (README.md) last; stable: file order otherwise
            return sorted(hits, key=lambda hit: (not defines.search(hit[2]), hit[0].endswith(_PROSE)))
    return []


_PROSE = (".md", ".rst", ".txt")


def _exchanges_since_request(body: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(tool_use, tool_result) pairs since the latest user message with text: this request's work."""
    messages = _messages(body)
    start = max((n for n, m in enumerate(messages) if m.get("role") == "user" and message_text(m).strip()), default=0)
    return _exchanges({"messages": messages[start:]})


def _term_for(body: dict[str, Any], brief: str) -> str | None:
    terms = extract_terms(brief)
    if terms:
        return terms[0]
    for use, _ in _exchanges(body):  # fall back on what we already searched for
        if use.get("name") == "grep" and isinstance(use.get("input", {}).get("pattern"), str):
            return str(use["input"]["pattern"])
    return None


# --------------------------------------------------------------------------
# Answers
# --------------------------------------------------------------------------


def _findings(term: str | None, hits: list[tuple[str, int, str]]) -> str:
    what = term or "it"
    if not hits:
        return (
            "## Findings\n\n"
            f"I searched for `{what}` but found **no matches** in the workspace.\n\n"
            "- Try a different spelling or a broader pattern."
        )
    path, line, _ = hits[0]
    lines = [f"## Findings\n\n{what} is handled in {path}:{line}.\n"]
    for p, n, snippet in hits[:5]:
        snippet = snippet if len(snippet) <= 80 else snippet[:77] + "..."
        lines.append(f"- `{p}:{n}`: `{snippet}`" if snippet else f"- `{p}:{n}`")
    if len(hits) > 5:
        lines.append(f"- ...and {len(hits) - 5} more matches")
    return "\n".join(lines)


def _explore(body: dict[str, Any], brief: str) -> Blocks:
    """One step of grep → read_file → answer."""
    term = _term_for(body, brief)
    results = tool_results(body)
    if not results:
        if term is None:
            return text("## Unclear request\n\nI could not tell what to look for. Name it in `backticks`.")
        if not offers_tool(body, "grep"):
            return text(f"## No search tool\n\nI have no `grep` tool, so I cannot look for `{term}`.")
        return reply(
            text_block(f"Searching the code for `{term}`."),
            tool_use_block("grep", {"pattern": term, "case_insensitive": True}),
        )  # `cart` finds `Cart`

    last_use = find_tool_use(body, results[0].get("tool_use_id", "")) or {}
    hits = _grep_hits(body)
    if _assistant_turns(body) >= MAX_EXPLORE_TURNS:
        return text(_findings(term, hits))
    if last_use.get("name") == "grep":
        if results[0].get("is_error"):
            return text(f"## Search failed\n\nThe `grep` call failed:\n\n> {tool_result_text(results[0])[:300]}")
        if hits and offers_tool(body, "read_file"):
            path = hits[0][0]
            return reply(
                text_block(f"Found {len(hits)} match{'es' if len(hits) != 1 else ''}; reading `{path}`."),
                tool_use_block("read_file", {"path": path}),
            )
    return text(_findings(term, hits))


def _task_input(term: str) -> dict[str, Any]:
    return {
        "description": f"Find where {term} is handled",
        "prompt": (
            f"Find where `{term}` is handled in this repository.\n\n"
            f"Search the code for `{term}`, open the most relevant file, and report the file paths "
            "and line numbers where it is handled, with a one-line explanation for each. "
            "Keep the answer short."
        ),
        "subagent_type": "general-purpose",
    }


NOTES = re.compile(r"<system-reminder>.*?</system-reminder>\s*", re.S)


def _report(pairs: list[tuple[dict[str, Any], dict[str, Any]]]) -> Blocks:
    parts = ["## What the subagent found" if len(pairs) == 1 else f"## What the {len(pairs)} subagents found"]
    for use, result in pairs:
        desc = use.get("input", {}).get("description", "task")
        # the child's answer and its footer line; agentcli's notes (the receipt) are for the model, not to quote
        body_text = NOTES.sub("", tool_result_text(result)).strip() or "(no result)"
        quoted = "\n".join("> " + line if line else ">" for line in body_text.splitlines()[:15])
        status = "failed" if result.get("is_error") else "reported"
        parts.append(f"**{desc}** {status}:\n\n{quoted}")
    parts.append("- Ask me to open any of these files for a closer look.")
    return text("\n\n".join(parts))


def _summary(body: dict[str, Any]) -> Blocks:
    """Answer without tools: sum up what the conversation found."""
    brief = first_user_text(body)
    term = _term_for(body, brief)
    if _exchanges(body):
        return text(_findings(term, _grep_hits(body)))
    request = (brief.strip().splitlines() or ["(nothing)"])[0][:120]
    return text(f"## Summary\n\n- Request: {request}\n- No tools were used yet, so there is nothing to report.")


def _main_agent(body: dict[str, Any]) -> Blocks:
    request = _latest_request(body)
    last = tool_results(body)
    started = background.main_step(
        request,
        [(find_tool_use(body, r.get("tool_use_id", "")) or {}, r) for r in last],
        tool_result_text,
        tool_use_block,
        text_block,
    )
    if started is not None:
        return started
    files, asked = changes.attachments(request), changes.without_attachments(request)
    step = changes.change_step(asked, _exchanges_since_request(body), tool_result_text, tool_use_block, text_block)
    if step is not None:
        return step
    results = tool_results(body)
    if results:
        pairs = [(find_tool_use(body, r.get("tool_use_id", "")) or {}, r) for r in results]
        tasks = [(u, r) for u, r in pairs if u.get("name") == "task"]
        if tasks:
            return _report(tasks)
        return _explore(body, asked)

    request = asked
    terms = extract_terms(request)
    if files and not terms:  # about the file the user attached, never a search for its path
        return text(changes.about_attachments(files))
    if terms and wants_delegation(request):
        terms = terms[:3]
        intro = (
            f"I'll ask a subagent to look for `{terms[0]}`."
            if len(terms) == 1
            else "I'll ask subagents to look for " + ", ".join(f"`{t}`" for t in terms) + " in parallel."
        )
        return reply(text_block(intro), *(tool_use_block("task", _task_input(t)) for t in terms))
    if terms:
        return _explore(body, request)
    return text(
        "## Hello\n\n"
        "I'm the demo agent. Try:\n\n"
        "- *find where `auth` is handled* (I'll use a subagent)\n"
        "- *grep for `TODO`* (I'll search myself)\n"
        "- *add a discount to the cart* (a plan, then an edit you approve, and `/rewind` to undo it)\n"
        "- *@shop/cart.py what is in here?* (I'll read what you attach)\n"
        "- *check the tests in the background* (a subagent works while you type; steer it with `/steer`)"
    )


def answer(body: dict[str, Any]) -> Blocks:
    """The reply to any /v1/messages body, as a small coding agent would give it (see module docs)."""
    tool_choice = body.get("tool_choice") or {}
    if not body.get("tools") or tool_choice.get("type") == "none":
        return _summary(body)
    if offers_tool(body, "task"):
        return _main_agent(body)
    if background.is_child(first_user_text(body)):
        texts = [message_text(m) for m in _messages(body) if m.get("role") == "user"]
        return background.child_step(
            texts,
            texts[-1] if texts else "",
            _exchanges(body),
            tool_result_text,
            tool_use_block,
            text_block,
            extract_terms,
        )
    if review.is_reviewer(first_user_text(body)):
        system = body.get("system") or ""
        system = system if isinstance(system, str) else "".join(b.get("text", "") for b in blocks_of(system))
        return review.step(first_user_text(body), system, bool(_exchanges(body)), tool_use_block, text_block)
    return _explore(body, first_user_text(body))


def pace(body: dict[str, Any]) -> float:
    """How many times the server's pace this reply is streamed at: the background check's, slowly, to steer it."""
    return background.PACE if background.is_child(first_user_text(body)) else 1
