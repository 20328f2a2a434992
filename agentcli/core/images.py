"""Images: PNG, JPEG, GIF and WebP files as the API's image blocks, for read_file and prompts that name one,
and their bytes kept once per session (by SHA-256) instead of inline in every session record.

No imaging library: the format and size are read from the file's header; an image past the API's
limits is refused with a sentence that says how to make it smaller.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import re
import shlex
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

MAX_IMAGE_BYTES = 3_750_000  # in base64 that is the API's 5 MB per image
MAX_SIDE = 8000  # pixels, the API's limit on either side
EXTENSIONS = (".png", ".jpg", ".jpeg", ".gif", ".webp")
STORED = "agentcli_stored"  # the source type of an image block in a session file: its bytes are beside it


class ImageError(Exception):
    """An image that cannot be sent; the message is one sentence."""


@dataclass(frozen=True)
class Image:
    """An image as the model is sent it: its name, media type, size and bytes."""

    name: str
    media_type: str
    width: int
    height: int
    data: bytes

    @property
    def marker(self) -> str:
        return f"[image: {self.name} {self.width}×{self.height}]"

    def blocks(self) -> list[dict[str, Any]]:
        """The image block, then its marker, so the model (and the transcript) knows which file it was."""
        source = {"type": "base64", "media_type": self.media_type, "data": base64.b64encode(self.data).decode()}
        return [{"type": "image", "source": source}, {"type": "text", "text": self.marker}]


def media_type(head: bytes) -> str | None:
    """The image type a file's first bytes say, or None for anything else."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def size_of(data: bytes, kind: str) -> tuple[int, int] | None:
    """Width and height from the header, or None when the header is damaged."""
    try:
        if kind == "image/png":
            return struct.unpack(">II", data[16:24])
        if kind == "image/gif":
            return struct.unpack("<HH", data[6:10])
        if kind == "image/webp":
            return _webp_size(data)
        return _jpeg_size(data)
    except struct.error:
        return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    at = 2
    while at + 9 < len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            at += 2
            continue
        length = struct.unpack(">H", data[at + 2 : at + 4])[0]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):  # a start of frame
            height, width = struct.unpack(">HH", data[at + 5 : at + 9])
            return width, height
        at += 2 + length
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8X":
        return int.from_bytes(data[24:27], "little") + 1, int.from_bytes(data[27:30], "little") + 1
    if chunk == b"VP8L":
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8 ":
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    return None


def load_image(data: bytes, name: str) -> Image | None:
    """``data`` as an Image when it is one (None when it is no image); ImageError when it cannot be sent."""
    kind = media_type(data[:16])
    if kind is None:
        return None
    size = size_of(data, kind)
    if size is None:
        raise ImageError(f"{name} looks like a {kind.split('/')[1].upper()} image, but its header is damaged.")
    width, height = size
    shrink = (
        f"; make it smaller first, e.g. `convert {name} -resize 1568x1568 small.png` "
        "(1568 pixels a side is what the model sees best)"
    )
    if len(data) > MAX_IMAGE_BYTES:
        raise ImageError(
            f"{name} is {len(data) / 1e6:.1f} MB, more than the {MAX_IMAGE_BYTES / 1e6:.2f} MB an "
            f"image may have{shrink}."
        )
    if max(width, height) > MAX_SIDE:
        raise ImageError(f"{name} is {width}×{height} pixels, more than the {MAX_SIDE} a side the API takes{shrink}.")
    return Image(name, kind, width, height, data)


def from_block(block: Any, name: str) -> list[dict[str, Any]]:
    """An image block a program sent (the Agent SDK's stream-json, an ACP client's prompt), checked as an image
    file is, as the blocks to send: the image and its marker (a URL source goes as it is, for the API to fetch).
    ImageError, one sentence naming ``name``, when it cannot go."""
    source = block.get("source") if isinstance(block, dict) else None
    if not isinstance(source, dict):
        raise ImageError(f"{name} has no source (an image block needs a base64 or url source).")
    if source.get("type") == "url":
        url = source.get("url")
        if not isinstance(url, str) or not url.startswith(("https://", "http://")):
            raise ImageError(f"{name}'s url source needs an http or https address.")
        return [{"type": "image", "source": {"type": "url", "url": url}}, {"type": "text", "text": f"[image: {url}]"}]
    if source.get("type") != "base64" or not isinstance(source.get("data"), str):
        raise ImageError(f"{name}'s source must be base64 data or a url, not {source.get('type')!r}.")
    try:
        data = base64.b64decode(source["data"], validate=True)
    except (binascii.Error, ValueError):
        raise ImageError(f"{name}'s data is not valid base64.") from None
    image = load_image(data, name)
    if image is None:
        raise ImageError(f"{name} is not a PNG, JPEG, GIF or WebP image.")
    return image.blocks()


# One word as a shell reads it: plain characters, backslash escapes and quoted strings, side by side. A quote
# left open starts no word (the text after it is read as words of its own). Possessive (``*+``): an open
# quote is given up on after one look to the end, never backtracked over character by character.
SHELL_WORD = re.compile(r"""(?:[^\s'"\\]++|\\.|'[^']*+'|"[^"\\]*+(?:\\.[^"\\]*+)*+")++""", re.DOTALL)
IMAGE_NAME = re.compile(r"\.(?:png|jpe?g|gif|webp)", re.IGNORECASE)
LONGEST_WORD = 4096 + 16  # a path longer than PATH_MAX (with its quotes) names no file
MOST_LOOKED_AT = 100  # words that may name an image, per prompt: each is looked for on disk


def shell_words(text: str) -> list[str]:
    """The words of ``text`` that may name an image, unquoted as ``shlex.split`` would, in time linear in
    the text's length (``shlex`` is quadratic in a word's: a 1 MB word took 12 s)."""
    if not IMAGE_NAME.search(text):
        return []
    words: list[str] = []
    for found in SHELL_WORD.finditer(text):
        word = found.group()
        if len(word) > LONGEST_WORD or not IMAGE_NAME.search(word):
            continue
        try:
            words += shlex.split(word)
        except ValueError:
            words.append(word)
        if len(words) >= MOST_LOOKED_AT:
            break
    return words


def named_images(text: str, root: Path) -> list[Path]:
    """The image files in the workspace that a prompt names: typed paths, or paths dropped into the
    terminal (quoted, with escaped spaces, or as file:// URLs)."""
    found: list[Path] = []
    for word in shell_words(text):
        word = word.removeprefix("file://").lstrip("`'\"(<").rstrip("`'\",;:.!?)>")
        if not word.lower().endswith(EXTENSIONS):
            continue
        path = Path(os.path.expanduser(word))
        path = (path if path.is_absolute() else root / path).resolve()
        if path.is_file() and path.is_relative_to(root) and path not in found:
            found.append(path)
    return found


# ---------------------------------------------------------------- in session files


def pack(record: dict[str, Any], folder: Path) -> dict[str, Any]:
    """``record`` with each inline image's bytes moved to ``folder/<sha256>`` (written once)."""
    if not _has_image(record.get("content") or record.get("messages"), "base64"):
        return record
    return cast(dict[str, Any], _walk(record, lambda block: _stored(block, folder)))


def unpack(record: dict[str, Any], folder: Path) -> dict[str, Any]:
    """``record`` with stored images inline again; one whose file is gone becomes a note."""
    if not _has_image(record.get("content") or record.get("messages"), STORED):
        return record
    return cast(dict[str, Any], _walk(record, lambda block: _inline(block, folder)))


def _has_image(value: Any, source_type: str) -> bool:
    """Whether blocks (in messages, in tool results) hold an image of ``source_type``; strings are never
    scanned, so a record without one costs a walk over its blocks, not a serialization."""
    if isinstance(value, list):
        return any(_has_image(item, source_type) for item in value)
    if not isinstance(value, dict):
        return False
    if value.get("type") == "image":
        source = value.get("source")
        return isinstance(source, dict) and source.get("type") == source_type
    return _has_image(value.get("content"), source_type)


def _walk(value: Any, change: Any) -> Any:
    if isinstance(value, dict):
        if value.get("type") == "image" and isinstance(value.get("source"), dict):
            return change(value)
        return {key: _walk(item, change) for key, item in value.items()}
    if isinstance(value, list):
        return [_walk(item, change) for item in value]
    return value


def _stored(block: dict[str, Any], folder: Path) -> dict[str, Any]:
    source = block["source"]
    if source.get("type") != "base64" or not isinstance(source.get("data"), str):
        return block
    data = base64.b64decode(source["data"])
    sha = hashlib.sha256(data).hexdigest()
    path = folder / sha
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)
    return {**block, "source": {"type": STORED, "media_type": source.get("media_type"), "sha256": sha}}


def _inline(block: dict[str, Any], folder: Path) -> dict[str, Any]:
    source = block["source"]
    sha = source.get("sha256")
    if source.get("type") != STORED:
        return block
    if not isinstance(sha, str) or not re.fullmatch(r"[0-9a-f]{64}", sha):
        return {"type": "text", "text": "[image: not kept]"}
    try:
        data = (folder / sha).read_bytes()
    except OSError:
        return {"type": "text", "text": "[image: its copy in the session folder is gone]"}
    return {
        **block,
        "source": {"type": "base64", "media_type": source.get("media_type"), "data": base64.b64encode(data).decode()},
    }
