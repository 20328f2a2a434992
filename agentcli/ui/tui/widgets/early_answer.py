"""An answer drawn as one widget of text, laid out as Textual's Markdown lays it out, for the first frame of a
resumed session: loading markdown-it and Textual's Markdown, the first parse and styling a widget per block
took about as long as the rest of that frame. The conversation swaps each for its Markdown entry right
after that frame (``Conversation._settle``). Only answers made of what this module draws exactly as the
Markdown widget draws it (a plain subset: ``##`` headings, paragraphs, one level of ``-`` items, fenced
code, inline code and ``**bold**``) are drawn so; ``blocks`` is None for any other, which is drawn as
Markdown at once."""

from __future__ import annotations

import re
from dataclasses import dataclass

from textual.content import Content
from textual.geometry import Size
from textual.widget import Widget

HEADING = re.compile(r"(#{2,6}) +(\S.*)")
BOLD = re.compile(r"(?:(?<=^)|(?<=[\s(]))\*\*([A-Za-z0-9](?:[^*`]*[A-Za-z0-9.:)])?)\*\*(?=$|[\s.,;:!?)])")
CODE = re.compile(r"`([^`]+)`")
UNSURE = re.compile(r"[*_\[\]<>&\\~|@．。｡]|//|\.[^\s.,;:!?)'\"]|www|mailto:|  ", re.IGNORECASE)  # inline
# Markdown this module does not draw, text linkify may take for an address, spaces Markdown draws as one
BLOCK_START = re.compile(r"\s|#|>|<|\||[-+*=_]|```|~~~")  # a line that may begin another kind of block (or
# a digit: an ordered list's item, see starts_block)
MARGINS = {"h2": (2, 1), "paragraph": (0, 1), "bullets": (0, 1), "fence": (1, 1)}  # (top, bottom), as
# Textual's Markdown styles its blocks (h3-h6: 1, 1); adjacent margins overlap, the larger counting


def starts_block(line: str) -> bool:
    return bool(BLOCK_START.match(line)) or line[:1].isdigit()


@dataclass(frozen=True)
class Block:
    kind: str  # "h2".."h6", "paragraph", "bullets" (items: lines), "fence" (code: lines)
    lines: tuple[str, ...]


def inline(text: str, style: str = "") -> Content | None:
    """One paragraph's text as the Markdown widget shows it (None if it holds Markdown drawn otherwise)."""
    parts: list[Content] = []
    at = 0
    for match in CODE.finditer(text):
        plain = _plain(text[at : match.start()])
        if plain is None:
            return None
        code = match.group(1).replace("\n", " ")
        if code.startswith(" ") and code.endswith(" ") and code.strip():
            code = code[1:-1]
        parts += [plain, Content.styled(code, ".early-answer--code")]
        at = match.end()
    rest = _plain(text[at:])
    if rest is None or "`" in rest.plain:
        return None
    content = Content("").join([*parts, rest])
    return content.stylize_before(style) if style else content


def _plain(text: str) -> Content | None:
    pieces: list[Content] = []
    at = 0
    for match in BOLD.finditer(text):
        pieces += [Content(text[at : match.start()]), Content.styled(match.group(1), "bold")]
        at = match.end()
    pieces.append(Content(text[at:]))
    if any(UNSURE.search(piece.plain) for piece in pieces):
        return None
    return Content("").join(pieces)


def blocks(text: str) -> list[Block] | None:
    """The blocks of an answer in the subset drawn here, or None."""
    if "\t" in text or "\r" in text:
        return None
    lines = text.strip("\n").split("\n")
    found: list[Block] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        if line.startswith("```"):
            end = next((j for j in range(i + 1, len(lines)) if lines[j].rstrip() == "```"), None)
            info = line[3:].strip()
            if (
                end is None
                or "`" in info
                or " " in info
                or any(inner.lstrip().startswith(("```", "~~~")) for inner in lines[i + 1 : end])
            ):
                return None  # what this reads otherwise than markdown-it (an indented closing fence)
            found.append(Block("fence", tuple("\n".join(lines[i + 1 : end]).rstrip().split("\n"))))
            i = end + 1
        elif heading := HEADING.fullmatch(line):
            if line.endswith("#") or line != line.rstrip():
                return None
            found.append(Block(f"h{len(heading.group(1))}", (heading.group(2),)))
            i += 1
        elif line.startswith("- "):
            items = []
            while i < len(lines) and lines[i].startswith("- "):
                items.append(lines[i][2:])
                i += 1
            if any(starts_block(item) for item in items):  # an item that holds a heading, a list...
                return None
            if i < len(lines) and lines[i].strip():  # a line that continues an item, or another block
                return None
            if found and found[-1].kind == "bullets":  # two lists a blank line apart are one loose list
                return None
            found.append(Block("bullets", tuple(items)))
        elif starts_block(line):
            return None
        else:
            start = i
            while i < len(lines) and lines[i].strip():
                if i > start and starts_block(lines[i]):
                    return None  # a block that interrupts a paragraph, or a setext heading's underline
                i += 1
            found.append(Block("paragraph", tuple(lines[start:i])))
    for block in found:
        if block.kind == "fence":
            continue
        if any(line != line.rstrip() or not line.strip() for line in block.lines):
            return None  # trailing spaces break lines; an empty item draws otherwise
        if any(inline(line) is None for line in block.lines):
            return None
    return found


def _wrapped(content: Content, width: int) -> list[Content]:
    return content.wrap(width) if width > 0 else [content]


def layout(found: list[Block], width: int) -> list[Content]:
    """The lines the Markdown widget draws for these blocks at this width (inside its padding)."""
    rows: list[Content] = []
    below = 0
    for n, block in enumerate(found):
        top, bottom = MARGINS.get(block.kind, (1, 1))
        rows += [Content("")] * (max(top, below) if n else top)
        below = bottom
        if block.kind == "paragraph":
            text = inline(" ".join(block.lines))
            assert text is not None
            rows += _wrapped(text, width)
        elif block.kind.startswith("h"):
            text = inline(block.lines[0], f".early-answer--{block.kind}")
            assert text is not None
            rows += [text.truncate(width)] if block.kind == "h3" else _wrapped(text, width)  # h3 is as wide as
            # its text and cut at the width
        elif block.kind == "bullets":
            for item in block.lines:
                text = inline(item)
                assert text is not None
                for k, line in enumerate(_wrapped(text, width - 2)):
                    rows.append(
                        Content("").join(
                            [Content.styled("• ", ".early-answer--bullet") if not k else Content("  "), line]
                        )
                    )
        else:
            fence = ".early-answer--fence"
            body = [Content("  " + line) for line in ("", *block.lines, "")]
            rows += [line.truncate(width, pad=True).stylize_before(fence) for line in body]
    rows += [Content("")] * below
    return rows


class EarlyAnswer(Widget):
    """A whole answer's text, drawn in the lines its Markdown entry would take (``layout``)."""

    DEFAULT_CSS = """
    EarlyAnswer { height: auto; margin: 0 0 1 0; padding: 0 1 0 1; color: $foreground; }
    EarlyAnswer:dark > .early-answer--code { background: $warning 10%; color: $text-warning 95%; }
    EarlyAnswer:light > .early-answer--code { background: $error 5%; color: $text-error 95%; }
    EarlyAnswer > .early-answer--bullet { color: $text-primary; }
    EarlyAnswer:light > .early-answer--bullet { color: $text-secondary; }
    EarlyAnswer > .early-answer--fence { color: rgb(210,210,210); background: black 10%; }
    EarlyAnswer:light > .early-answer--fence { background: white 30%; }
    EarlyAnswer > .early-answer--h2 { color: $markdown-h2-color; background: $markdown-h2-background;
                                      text-style: $markdown-h2-text-style; }
    EarlyAnswer > .early-answer--h3 { color: $markdown-h3-color; background: $markdown-h3-background;
                                      text-style: $markdown-h3-text-style; }
    EarlyAnswer > .early-answer--h4 { color: $markdown-h4-color; background: $markdown-h4-background;
                                      text-style: $markdown-h4-text-style; }
    EarlyAnswer > .early-answer--h5 { color: $markdown-h5-color; background: $markdown-h5-background;
                                      text-style: $markdown-h5-text-style; }
    EarlyAnswer > .early-answer--h6 { color: $markdown-h6-color; background: $markdown-h6-background;
                                      text-style: $markdown-h6-text-style; }
    """
    COMPONENT_CLASSES = {
        "early-answer--code",
        "early-answer--bullet",
        "early-answer--fence",
        *(f"early-answer--h{n}" for n in range(2, 7)),
    }

    def __init__(self, text: str, found: list[Block]) -> None:
        super().__init__()
        self.text = text
        self._blocks = found
        self._drawn: tuple[int, Content] | None = None

    def _at(self, width: int) -> Content:
        if self._drawn is None or self._drawn[0] != width:
            self._drawn = (width, Content("\n").join(layout(self._blocks, width)))
        return self._drawn[1]

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return self._at(width).plain.count("\n") + 1

    def render(self) -> Content:
        return self._at(self.content_region.width)
