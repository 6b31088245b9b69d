"""Code units are labelled with the innermost definition holding them
(`AsyncExitStack.push_async_exit`), also when the unit starts at its definition's first
line: the unit begins at the line's start, the definition after its indentation."""

from __future__ import annotations

from indexer.chunkers.unit_map import document_units
from indexer.loaders import make_document
from indexer.text.tokens import get_tokenizer

PYTHON = '''import os


class Stack:
    """A stack of callbacks."""

    def push(self, exit):
        """Registers a callback with the standard __exit__ method signature."""
        self._exits.append(exit)
        return exit

    @property
    def size(self):
        return len(self._exits)

    class Frame:
        def close(self):
            return None


def top(stack):
    return stack.push(None)
'''

JAVASCRIPT = """const os = require('os')

class ExitHandler {
  #npm = null

  setNpm (npm) {
    this.npm = npm
  }

  registerUncaughtHandlers () {
    process.on('uncaughtException', this.handleExit)
  }
}
"""


def labels(text: str, fmt_language: tuple[str, str], name: str) -> dict[str, str]:
    """The label of the unit holding each line's first words, keyed by them."""
    doc = make_document(name, text, *fmt_language)
    out: dict[str, str] = {}
    for unit in document_units(doc, get_tokenizer()):
        first = doc.text[unit.start : unit.end].strip().splitlines()[0]
        out[first] = unit.path
    return out


def test_a_method_unit_from_its_def_line_is_labelled_with_the_method():
    got = labels(PYTHON, ("code", "python"), "stack.py")
    assert got["def push(self, exit):"] == "Stack.push", got
    assert got["@property"] == "Stack.size", got
    assert got["class Frame:"] == "Stack.Frame", got
    assert got["def top(stack):"] == "top", got
    assert got["import os"] == "stack.py", got


def test_a_javascript_method_unit_is_labelled_with_the_method():
    got = labels(JAVASCRIPT, ("code", "javascript"), "exit.js")
    assert got["setNpm (npm) {"] == "ExitHandler.setNpm", got
    assert got["registerUncaughtHandlers () {"] == "ExitHandler.registerUncaughtHandlers", got
