"""Content blocks of API messages: the one place that reads text out of them and appends user messages.

A message's ``content`` is a string or a list of blocks (``{"type": "text", "text": ...}``,
``tool_use``, ``tool_result``, ...); stored records may hold anything, so every reader here is lenient.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import Any, Literal, TypedDict

Role = Literal["user", "assistant"]
Block = dict[str, Any]  # a content block as the API spells it: read leniently, since stored records may hold anything


class Message(TypedDict):
    """One message of a history, as the API takes it: the user's or the model's, its content a string or blocks."""

    role: Role
    content: str | list[Block]


def as_blocks(content: Any) -> list[dict[str, Any]]:
    """``content`` as a list of blocks: a string becomes one text block; what is no block is left out."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def sources(content: Any) -> list[tuple[str, str]]:
    """The pages a message's web searches found and its text cites, each (title, url) once, cited ones first
    (front ends show them under the answer)."""
    parts = as_blocks(content)
    cited = [
        (str(c.get("title") or c["url"]), str(c["url"]))
        for block in parts
        if block.get("type") == "text"
        for c in block.get("citations") or []
        if isinstance(c, dict) and c.get("url")
    ]
    found = [
        (str(r.get("title") or r["url"]), str(r["url"]))
        for block in parts
        if block.get("type") == "web_search_tool_result" and isinstance(block.get("content"), list)
        for r in block["content"]
        if isinstance(r, dict) and r.get("url")
    ]
    seen: dict[str, str] = {}
    for title, url in [*cited, *found]:
        seen.setdefault(url, title)
    return [(title, url) for url, title in seen.items()]


def text_of(content: Any, sep: str = "\n") -> str:
    """The text blocks of ``content`` joined by ``sep`` (a string is its own text); tool blocks are left out."""
    if isinstance(content, str):
        return content
    return sep.join(str(b.get("text", "")) for b in as_blocks(content) if b.get("type") == "text")


def typed(content: Any) -> str:
    """A prompt as the user typed it: a user message's first text block. What agentcli adds after it (the file
    or receipt an @-mention attaches, an image, a hook's note) is left out, so a prompt shown or offered back
    for editing is the user's words alone."""
    return next((str(b.get("text", "")) for b in as_blocks(content) if b.get("type") == "text"), "")


def thinking_of(content: Any) -> str:
    """The model's thinking in ``content`` (thinking blocks; a redacted one as a note)."""
    parts = [
        str(b.get("thinking", "")) if b.get("type") == "thinking" else "(redacted thinking)"
        for b in as_blocks(content)
        if b.get("type") in ("thinking", "redacted_thinking")
    ]
    return "\n\n".join(parts)


def has_tool_use(content: Any) -> bool:
    return any(b.get("type") == "tool_use" for b in as_blocks(content))


def append_user(messages: list[Message], content: list[Block]) -> None:
    """Append a user message, merged into the previous one when that is a user message too (the API
    wants roles to alternate)."""
    if messages and messages[-1].get("role") == "user":
        messages[-1] = {"role": "user", "content": as_blocks(messages[-1].get("content")) + content}
    else:
        messages.append({"role": "user", "content": content})


NOTE_TAG = "system-reminder"  # the tag Claude Code marks its own notes with, which models know
FROM_AGENTCLI = "From agentcli, not the user: "
NOTE_OPEN, NOTE_CLOSE = f"<{NOTE_TAG}>\n{FROM_AGENTCLI}", f"\n</{NOTE_TAG}>"


def agentcli_note(text: str, said_by: str = FROM_AGENTCLI) -> dict[str, Any]:
    """A text block for the history in agentcli's markup, the one thing no outside text can write (``quoted``),
    saying who wrote it (``said_by``): agentcli, not the user, by default: background results, interrupt notes,
    engine notes and hook output all go in one; steering says whose words it carries. Tags inside ``text`` (a
    child may quote a hostile file) are defused, so nothing in it can close the block early."""
    return {"type": "text", "text": f"<{NOTE_TAG}>\n{said_by}{quoted(text).strip()}{NOTE_CLOSE}"}


# What a model may read as "<", ">" or "/", and as each letter of a tag agentcli writes: Unicode's confusables
# (UTS #39) that compatibility folding (NFKD, marks dropped, casefolded) does not already make the ASCII one.
_LT, _GT = (
    "<\u00ab\u02c2\u1438\u16b2\u2039\u276e\ufe64\uff1c\u2329\u3008\u27e8\u29fc\U0001d236",
    ">\u00bb\u02c3\u1433\u203a\u276f\ufe65\uff1e\u232a\u3009\u27e9\u29fd\U00016f3f\U0001d237",
)
_SLASH = "/\u1735\u2041\u2044\u2215\u2571\u27cb\u29f8\u2cc6\u2f03\u3033\u30ce\u31d3\u4e3f\uff0f\U0001d23a"
_JOINS = "_\u02d7\u2043\u2212\u2796\u2cba\ufe58"  # beside the dashes (Pd): what may join a tag name's words
_LOOKALIKES = {
    "c": "\u03f2\u03f9\u0421\u0441\u13df\u1d04\u2ca4\u2ca5\ua4da\uabaf\U000102a2\U00010302\U00010415\U0001043d"
    "\U0001051c\U000118e9\U000118f2\U0001f74c",
    "d": "\u0501\u13a0\u13e7\u146f\u15de\u15ea\ua4d2\ua4d3",
    "e": "\u0395\u0415\u0435\u04bd\u13ac\u212e\u22ff\u2d39\ua4f0\uab32\U00010286\U000118a6\U000118ae\U0001d6ac"
    "\U0001d6e6\U0001d720\U0001d75a\U0001d794\u03b5\u025b",
    "i": "l1|\u0131\u0269\u026a\u02db\u037a\u03b9\u0456\u04cf\u13a5\u1fbe\u2373\ua647\uab75\U000118c3\U0001d6a4"
    "\U0001d6ca\U0001d704\U0001d73e\U0001d778\U0001d7b2",
    "m": "\u039c\u03fa\u041c\u043c\u13b7\u15f0\u16d6\u2c98\ua4df\U000102b0\U00010311\U0001d6b3\U0001d6ed"
    "\U0001d727\U0001d761\U0001d79b",
    "n": "\u039d\u0578\u057c\u2c9a\ua4e0\u043f\u03b7\u0274\U00010513\U0001d6b4\U0001d6ee\U0001d728\U0001d762\U0001d79c",
    "o": "0\u039f\u03bf\u03c3\u041e\u043e\u0555\u0585\u06f5\u0966\u09e6\u0a66\u0ae6\u0b20\u0b66\u0be6\u0c02"
    "\u0c66\u0c82\u0ce6\u0d02\u0d20\u0d66\u0d82\u0e50\u0ed0\u101d\u1040\u10ff\u12d0\u1d0f\u1d11\u2c9e"
    "\u2c9f\u2d54\u3007\ua4f3\uab3d",
    "p": "\u03a1\u03c1\u03f1\u0420\u0440\u13e2\u146d\u2374\u2ca2\u2ca3\ua4d1\U00010295",
    "r": "\u01a6\u0433\u13a1\u13d2\u1587\u1d26\u2c85\ua4e3\uab47\uab48\uab81\u0280\U000104b4\U00016f35\U0001d216",
    "s": "\u01bd\u0405\u0455\u054f\u13d5\u13da\ua4e2\ua731\uabaa\U00010296\U00010420\U00010448\U000118c1\U00016f3a",
    "t": "\u03a4\u03c4\u0422\u0442\u13a2\u22a4\u27d9\u2ca6\ua4d4\U00010297\U000102b1\U00010315\U000118bc"
    "\U00016f0a\U0001f768",
    "u": "\u028b\u03c5\u054d\u057d\u1200\u144c\u1d1c\u222a\u22c3\ua4f4\ua79f\uab4e\uab52\U000104ce\U000104f6"
    "\U000118b8\U000118d8\U00016f42",
    "v": "\u03bd\u0474\u0475\u06f7\u13d9\u142f\u1d20\u2228\u22c1\u2d38\ua4e6\ua6df\uaba9\U0001051d\U00011706"
    "\U000118a0\U000118c0\U00016f08\U0001d20d",
    "y": "\u0263\u028f\u03a5\u03b3\u03d2\u0423\u0443\u04ae\u04af\u10e7\u13a9\u13bd\u1d8c\u1eff\u213d\u2ca8"
    "\ua4ec\uab5a\U000102b2\U000118a4\U000118dc\U00016f43",
}
_AS_LETTER = {alike: letter for letter, alikes in _LOOKALIKES.items() for alike in alikes}
# An HTML entity for "<" or ">" reads as one too (escaped again up to three times or not, with or without its ";").
_ENTITY = r"&(?:amp;){{0,3}}(?:{name}|#0*{dec}(?![0-9])|#x0*{hex}(?![0-9a-f]));?"
_OPEN = _ENTITY.format(name="lt", dec="60", hex="3c")


@functools.cache
def _brackets() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """A tag's start; and a tag's end (group 1) or the next one's start. Compiled on ``quoted``'s first call: the
    case-insensitive classes of look-alike brackets took about 4 ms to compile, on every start, before the TUI's
    first screen."""
    start = re.compile(f"[{re.escape(_LT)}]|{_OPEN}", re.I)
    end = re.compile(
        f"([{re.escape(_GT)}]|{_ENTITY.format(name='gt', dec='62', hex='3e')})|[{re.escape(_LT)}]|{_OPEN}", re.I
    )
    return start, end


_UNSEEN = {"Cf", "Cc", "Mn", "Me", "Zs", "Zl", "Zp"}  # format, control and combining characters, spaces
_REACH = 400  # characters after a tag's name looked at for its end (past its attributes)


@functools.lru_cache(maxsize=4096)
def _folded(char: str) -> str:
    """``char`` as the ASCII letters a model may read it as ("" for what it does not see, the char itself else)."""
    if char in _AS_LETTER:
        return _AS_LETTER[char]
    if unicodedata.category(char) in _UNSEEN:
        return ""
    plain = "".join(c for c in unicodedata.normalize("NFKD", char) if not unicodedata.combining(c)).casefold()
    return "".join(_AS_LETTER.get(c, c) for c in plain)


def _joins(char: str) -> bool:
    """Whether ``char`` may join a tag name's words (``system.reminder``, ``system~reminder``): any punctuation or
    symbol but a bracket; a model reads the words, whatever stands between them."""
    return (unicodedata.category(char)[0] in "PS" or char in _JOINS) and char not in _LT and char not in _GT


def _tag_end(text: str, after: int, names: frozenset[str], starts: frozenset[str]) -> int:
    """Where the name ends of a tag that reads as one of ``names`` (``starts``: each start of one of them, itself
    too) and opens with the bracket that ends before ``after``; -1 when it is no such tag. Unseen characters,
    spaces and one slash may stand before the name; unseen characters, spaces, punctuation and symbols between its
    letters, which may be look-alikes in any case and width. However many: a look ends at the first other
    character, at the latest at the next bracket ("&" of an entity goes on to its "l", which ends it), so looks
    from two brackets cover a few characters of the same text at most and ``quoted`` stays linear."""
    i, read, slash = after, "", False
    while i < len(text):
        char = text[i]
        letters = _folded(char)
        if not letters:
            pass
        elif not read and not slash and char in _SLASH:
            slash = True
        elif read + letters in starts:
            read += letters
            if read in names:
                return i + 1
        elif not (read and _joins(char)):
            return -1
        i += 1
    return -1


def quoted(text: str, *fences: str) -> str:
    """Text from outside agentcli (a command's output, a page, an MCP server's words, a child's answer) as the
    model may read it: every tag in it that reads as agentcli's markup (its notes' ``NOTE_TAG``, and the
    ``fences`` around this text), in any case, spacing, width or look-alike letters, whatever joins its words,
    gets square brackets instead of its angle ones (``[/system-reminder]``; an HTML entity for one, ``&lt;``,
    counts as one), so it can neither open nor close one; all else is kept as it was. This is the one function that does it; docs/permissions.md names where each route calls it."""
    if text.isascii() and "<" not in text and "&" not in text:
        # No tag can start: in ASCII only "<" and an entity's "&" open one (each other bracket is outside it). Two
        # scans in C instead of the pattern's, which took 90 µs for a glob's 200 paths, about 0.6% of the call.
        return text
    names, starts = _tag_names(fences)
    opening, closing = _brackets()
    out: list[str] = []
    done = 0
    for bracket in opening.finditer(text):
        start, end = bracket.span()
        after = text[end : end + 2].lstrip("/")[:1]
        if start < done or (after.isascii() and after.isalnum() and _folded(after) not in starts):
            continue  # the usual case, "<div" or "</p": no tag of ours starts so
        name_end = _tag_end(text, end, names, starts)
        if name_end < 0:
            continue
        close = closing.search(text, name_end, min(len(text), name_end + _REACH))
        out += [text[done:start], "[", text[end:name_end]]
        done = name_end
        if close is not None and close.group(1):
            out += [text[name_end : close.start()], "]"]
            done = close.end()
    return "".join(out) + text[done:] if out else text


@functools.lru_cache(maxsize=64)
def _tag_names(fences: tuple[str, ...]) -> tuple[frozenset[str], frozenset[str]]:
    """The tag names ``quoted`` looks for (with agentcli's note tag) and every beginning of one: made once per
    set of fences (they were a third of the work of quoting a request's tools, made again for each string)."""
    # folded as the text is: a fence's "l" reads as the "i" it looks like ("file" as "fiie"), like the text's
    names = frozenset("".join(map(_folded, re.sub(r"[\W_]", "", name))) for name in (NOTE_TAG, *fences))
    return names, frozenset(name[:n] for name in names for n in range(1, len(name) + 1))


@functools.lru_cache(maxsize=4096)
def quoted_kept(text: str) -> str:
    """``quoted``, remembered: for what each request sends again unchanged (the system prompt, the tools'
    descriptions and schemas), which would otherwise be quoted again on every model call. A function of the
    text alone (a str cannot change), so a changed description is quoted afresh."""
    return quoted(text)


def quoted_all(value: Any) -> Any:
    """``quoted`` for every string in a JSON value, keys too: the tools a request offers, whose descriptions and
    input schemas an MCP server, an agent file or a skill wrote."""
    if isinstance(value, str):
        return quoted_kept(value)
    if isinstance(value, dict):
        return {quoted_kept(k) if isinstance(k, str) else k: quoted_all(v) for k, v in value.items()}
    if isinstance(value, list):
        return [quoted_all(v) for v in value]
    return value


# A file an @-mention attached (engine/mentions.py): its note, then the file between <file> tags.
_ATTACHED = re.compile(
    r'The user attached (\S+) with @\S+( \([\d,]+ lines?)?[^\n]*\n<file path="[^"\n]*">\n.*?\n</file>', re.S
)


def readable(content: Any, sep: str = "\n", attachments: bool = True) -> str:
    """``text_of`` for a person to read: each agentcli note as its message alone, without its marks; without
    ``attachments``, a file an @-mention attached as its one-line note (the conversation shows what was sent,
    not the file again)."""

    def shown(text: str) -> str:
        marked = text.startswith(NOTE_OPEN) and text.endswith(NOTE_CLOSE)
        text = text[len(NOTE_OPEN) : -len(NOTE_CLOSE)] if marked else text
        return (
            text
            if attachments
            else _ATTACHED.sub(lambda m: f"📎 {m.group(1)}" + (f"{m.group(2)})" if m.group(2) else " (in part)"), text)
        )

    if isinstance(content, str):
        return shown(content)
    return sep.join(shown(str(b.get("text", ""))) for b in as_blocks(content) if b.get("type") == "text")
