"""Bytes that only grow, kept compressed but for their newest part: the JSON of a conversation's history
(``request_body``), which each request sends whole and a long session holds for as long as it runs.

The newest bytes stay as they are; each time they reach ``BLOCK`` they are compressed on their own (zlib,
no state kept between blocks: a compressor's state is about 256 KiB) and put after the earlier blocks.
Reading the whole decompresses every block. What that costs depends on the history: for the loop bench's
(400 small messages, 70 KiB) 0.04 ms, against 2.1 ms to serialize it again; for one of source files read
whole (1.7 MB, held in 0.57 MB) about 20 ms at load 6, about what serializing it again takes, while such a
request waits seconds on the model. Kept uncompressed it cost nothing to read and its whole size to hold.
"""

from __future__ import annotations

import zlib

BLOCK = 16 * 1024  # bytes compressed at a time: zlib's window is 32 KiB, so a larger block gains little


class Packed:
    """Growing bytes, all but the newest ``BLOCK`` compressed."""

    __slots__ = ("_blocks", "_tail", "_size")

    def __init__(self) -> None:
        self._blocks: list[bytes] = []  # each the compression of BLOCK bytes or more
        self._tail = b""
        self._size = 0

    def extend(self, piece: bytes) -> None:
        tail = self._tail + piece if self._tail else piece
        if len(tail) >= BLOCK:
            self._blocks.append(zlib.compress(tail))
            tail = b""
        self._tail = tail
        self._size += len(piece)

    def __bytes__(self) -> bytes:
        if not self._blocks:
            return self._tail
        return b"".join([*map(zlib.decompress, self._blocks), self._tail])

    def __len__(self) -> int:
        return self._size

    def held(self) -> int:
        """Bytes kept: the compressed blocks and the newest part."""
        return sum(map(len, self._blocks)) + len(self._tail)
