"""Source code as tree-sitter hands it over: UTF-8 byte offsets mapped to the character
offsets of the Python string (`Source`), and a node's children read through the nodes
that only wrap them (`children`). Shared by `symbols` and `imports`."""

from __future__ import annotations

import numpy as np

from .grammars import TRANSPARENT


class Source:
    """A document's text with its UTF-8 bytes, mapping byte offsets to character offsets."""

    def __init__(self, text: str):
        self.text = text
        self.data = text.encode("utf-8", "surrogatepass")
        self.ascii = len(self.data) == len(text)
        if not self.ascii:
            starts = (np.frombuffer(self.data, dtype=np.uint8) & 0xC0) != 0x80
            self._to_char = np.concatenate(([0], np.cumsum(starts)))
            self._to_byte = np.append(np.flatnonzero(starts), len(self.data))

    def char(self, byte: int) -> int:
        return byte if self.ascii else int(self._to_char[byte])

    def byte(self, char: int) -> int:
        return char if self.ascii else int(self._to_byte[char])

    def size(self, start: int, end: int) -> int:
        """UTF-8 bytes of text[start:end]."""
        return self.byte(end) - self.byte(start)

    def cut(self, start: int, limit: int) -> int:
        """The furthest character offset whose slice from `start` fits `limit` bytes."""
        if self.ascii:
            return min(start + limit, len(self.text))
        return int(np.searchsorted(self._to_byte, self.byte(start) + limit, side="right")) - 1

    def node_text(self, node) -> str:
        return self.text[self.char(node.start_byte) : self.char(node.end_byte)]


def children(node) -> list:
    """A node's children, reading through ERROR nodes and Java enum declaration lists."""
    out = []
    for child in node.children:
        if child.type in TRANSPARENT:
            out.extend(children(child))
        else:
            out.append(child)
    return out
