"""Decoding a file's bytes to text: an explicit encoding, a byte-order mark, strict UTF-8,
then the legacy Windows-1254 code page (with a warning); binary data is refused. Newlines
become `\n`, and the file's own newline style is told."""

from __future__ import annotations

import codecs
from pathlib import Path

from .skips import SkipFile

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
LEGACY_ENCODING = "cp1254"  # Windows Turkish; a superset of Latin-1's printable range


def decode(data: bytes, encoding: str | None = None) -> tuple[str, str | None]:
    """Text of a file and an optional warning. Raises SkipFile for binary or undecodable data.

    Order: an explicit encoding; a byte-order mark (UTF-8/16/32); NUL bytes: UTF-16 without
    a byte-order mark (with a warning), else binary; strict UTF-8; then the legacy
    Windows-1254 code page, with a warning.
    """
    if encoding:
        try:
            return data.decode(encoding), None
        except (UnicodeDecodeError, LookupError) as exc:
            raise SkipFile(f"cannot be decoded as {encoding} ({exc.__class__.__name__})") from None
    for bom, name in _BOMS:
        if data.startswith(bom):
            return _decode_after_bom(data[len(bom) :], name), None
    if b"\x00" in data:
        text = _utf16_without_bom(data)
        if text is None:
            raise SkipFile("binary file (contains NUL bytes)")
        return text
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError:
        pass
    return _decode_legacy(data)


def _utf16_without_bom(data: bytes) -> tuple[str, str] | None:
    """UTF-16 text saved without a byte-order mark (some Windows tools do): a NUL in the high
    byte of nearly every character, on one side. None when the bytes are not that."""
    if len(data) < 4 or len(data) % 2:
        return None
    for name, high in (("utf-16-le", data[1::2]), ("utf-16-be", data[0::2])):
        if high.count(0) >= 0.9 * len(high):
            text = _as_text(data, name)
            if text is None:
                return None
            return text, f"{name.upper()} without a byte-order mark; read as {name.upper()}"
    return None


def _as_text(data: bytes, name: str) -> str | None:
    """The bytes decoded, when that makes text: no NUL, few control characters, a space
    somewhere (None otherwise)."""
    try:
        text = data.decode(name)
    except UnicodeDecodeError:
        return None
    controls = sum(1 for ch in text if ord(ch) < 32 and ch not in "\t\n\r\f")
    if "\x00" in text or controls > len(text) // 100 or not any(ch.isspace() for ch in text):
        return None  # not text: control characters, or no space in it at all
    return text


def _decode_after_bom(data: bytes, name: str) -> str:
    try:
        return data.decode(name)
    except UnicodeDecodeError:
        raise SkipFile(f"starts with a {name} byte-order mark but is not valid {name}") from None


def _decode_legacy(data: bytes) -> tuple[str, str]:
    """Text in the legacy code page, with its warning; binary data (control bytes) refused."""
    try:
        text = data.decode(LEGACY_ENCODING)
    except UnicodeDecodeError:
        raise SkipFile(
            "not valid UTF-8 nor Windows-1254; re-save it as UTF-8 or pass --encoding"
        ) from None
    controls = sum(1 for ch in text if ord(ch) < 32 and ch not in "\t\n\r\f")
    if controls > max(2, len(text) // 100):
        raise SkipFile("binary file (control bytes, not text)")
    return (
        text,
        "not valid UTF-8; read as Windows-1254 (Turkish), so letters of another language may be "
        "wrong: re-save it as UTF-8, or pass --encoding (e.g. latin-1)",
    )


def normalise_newlines(text: str) -> str:
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.lstrip("\ufeff")


def newline_style(text: str) -> str:
    """The newlines of decoded text before `normalise_newlines`: `lf` (also for text
    without any), `crlf`, `cr` or `mixed`."""
    if "\r" not in text:
        return "lf"
    crlf = text.count("\r\n")
    cr, lf = text.count("\r") - crlf, text.count("\n") - crlf
    kinds = [name for name, n in (("crlf", crlf), ("cr", cr), ("lf", lf)) if n]
    return kinds[0] if len(kinds) == 1 else "mixed"


def read_text(path: Path, encoding: str | None = None) -> tuple[str, str | None, str]:
    """A file's text with `\n` newlines and no byte-order mark (what Python's
    `open(path, encoding=...)` reads, universal newlines), a warning or None, and the
    file's own newlines (`newline_style`): chunk offsets index this text, so a file
    whose newlines were `\r\n` says so."""
    try:
        data = path.read_bytes()
    except PermissionError:
        raise SkipFile(
            "unreadable (permission denied); fix its permissions or exclude it"
        ) from None
    except OSError as exc:
        raise SkipFile(f"unreadable ({exc.strerror or exc})") from None
    text, warning = decode(data, encoding)
    newline = newline_style(text)
    text = normalise_newlines(text)
    if not text.strip():
        raise SkipFile("empty or whitespace-only file")
    return text, warning, newline
