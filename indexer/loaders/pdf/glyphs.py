"""PDF reading, the glyphs: one page's upright characters with their position, size,
weight and pitch, read from PDFium's text layer a text object (one font, one size, one
baseline) at a time, with PDFium's per-character calls made as cheap as they go."""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from .layout import Glyphs, fixed_pitch

__all__ = ["ToDisplay", "read_glyphs"]

_BOLD_NAME = re.compile(r"bold|black|heavy|semibold|demi", re.I)
_MONO_NAME = re.compile(
    r"mono|monl\b|courier|consol|menlo|monaco|typewriter|cmtt|sftt|lmtt|txtt|code", re.I
)
# spaces (PDFium's inferred ones too) and line breaks: the layout finds its own
_SKIP = frozenset("\r\n \x00")
_FAST: dict[str, object] = {}
_SURROGATE = re.compile("[\ud800-\udfff]")


def _fast(raw, ctypes):
    """PDFium's per-character calls as bare C prototypes (plain ints in and out): the
    loop below makes two of them per character."""
    if not _FAST:
        address = ctypes.cast(raw.FPDFText_GetTextObject, ctypes.c_void_p).value
        _FAST["object"] = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int)(address)
        address = ctypes.cast(raw.FPDFText_GetLooseCharBox, ctypes.c_void_p).value
        _FAST["box"] = ctypes.CFUNCTYPE(
            ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p
        )(address)
    return _FAST["object"], _FAST["box"]


def _page_text(textpage, n: int, raw, ctypes) -> str:
    """The page's characters, one per index, in one call (per character where UTF-16
    does not line up: a character outside the BMP, or PDFium's line-end hyphen mark,
    which the bulk call writes as U+FFFE)."""
    buf = (ctypes.c_ushort * (n + 1))()
    raw.FPDFText_GetText(textpage, 0, n, buf)
    text = bytes(buf)[: 2 * n].decode("utf-16-le", "surrogatepass")
    if len(text) != n or _SURROGATE.search(text):
        return "".join(chr(raw.FPDFText_GetUnicode(textpage, i)) for i in range(n))
    if "\ufffe" in text:
        text = "".join(
            chr(raw.FPDFText_GetUnicode(textpage, i)) if c == "\ufffe" else c
            for i, c in enumerate(text)
        )
    return text


def _runs(kept: list[int], page: int, get_object, per_char: bool):
    """(start, end, text object) runs of the kept character indices that belong to one
    text object. PDFium lists an object's characters one after another, so a run's end is
    found by galloping and bisecting (a few calls a run, not one a character); with
    `per_char` (right-to-left text, which PDFium reorders) every character is asked."""
    n, a = len(kept), 0
    while a < n:
        obj = get_object(page, kept[a])
        lo, hi, step = a, n, 1
        if obj is not None and not per_char:
            while lo + step < n:
                if get_object(page, kept[lo + step]) != obj:
                    hi = lo + step
                    break
                lo += step
                step *= 2
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if get_object(page, kept[mid]) == obj:
                    lo = mid
                else:
                    hi = mid
        else:
            hi = a + 1
        yield a, hi, obj
        a = hi


_RTL = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff]")


def read_glyphs(
    textpage,
    raw,
    to_display: ToDisplay,
    rot: int,
    cx0: float,
    glyphs: Glyphs,
    ctypes,
    fixed: dict[str, bool],
) -> int:
    """Append the page's upright glyphs to `glyphs` and return how many sideways
    characters were left out. Style and baseline are read once per text object (one
    show-text operator: one font, one size, one baseline); a character whose box leaves
    its object's baseline (vertical writing) gets its own origin. A font is code when it
    says it is fixed-pitch, is named so, or its glyphs advance alike: `fixed` keeps what
    the widths told of each font, for every text in it on this page and the next ones."""
    reader = _GlyphReader(textpage, raw, to_display, rot=rot, cx0=cx0, glyphs=glyphs, ctypes=ctypes)
    rotated = 0
    text = _page_text(textpage, raw.FPDFText_CountChars(textpage), raw, ctypes)
    kept = [i for i, ch in enumerate(text) if ch not in _SKIP and ch < "\ufffe"]
    runs: list[tuple[int, bool, str]] = []  # glyphs, fixed-pitch as the font says, font name
    for a, b, _ in _runs(kept, reader.page, reader.get_object, _RTL.search(text) is not None):
        run = reader.run(text, kept[a:b], fixed)
        if run is None:
            rotated += b - a  # not upright: sideways text is left out
        else:
            runs.append(run)
    for added, mono, name in runs:
        glyphs.mono += [mono or fixed.get(name, False)] * added
    if "\x02" in glyphs.text:
        # PDFium's mark for a hyphen at a line end
        glyphs.text = ["-" if c == "\x02" else c for c in glyphs.text]
    return rotated


ToDisplay = Callable[[float, float], tuple[float, float]]


def _told_fixed(glyphs: Glyphs, before: int, name: str, fixed: dict[str, bool]) -> bool:
    """Whether the glyphs from `before` on advance alike (fixed pitch); what they tell is
    kept for the font."""
    told = fixed_pitch(glyphs.text[before:], glyphs.x0[before:], glyphs.x1[before:])
    if told is not None and name:
        fixed[name] = told
    return bool(told)


class _GlyphReader:
    """One page's PDFium text calls, with the buffers they fill made once for the page."""

    def __init__(
        self, textpage, raw, to_display: ToDisplay, rot: int, cx0: float, glyphs: Glyphs, ctypes
    ) -> None:
        self.textpage, self.raw, self.ctypes = textpage, raw, ctypes
        self.to_display, self.rot, self.cx0, self.glyphs = to_display, rot, cx0, glyphs
        self.rect = raw.FS_RECTF()
        self.rect_at = ctypes.addressof(self.rect)
        self.ox, self.oy = ctypes.c_double(), ctypes.c_double()
        self.name_buf = ctypes.create_string_buffer(256)
        self.flags = ctypes.c_int()
        self.get_object, self.get_box = _fast(raw, ctypes)
        self.page = ctypes.cast(textpage, ctypes.c_void_p).value
        self.sideways = rot in (90, 270)

    def run(
        self, text: str, indices: list[int], fixed: dict[str, bool]
    ) -> tuple[int, bool, str] | None:
        """Append the glyphs of one text object's characters with their style; how many,
        whether the font is fixed-pitch as it says, and its name. None when they are
        not upright (sideways text is left out)."""
        i = indices[0]
        size = self.raw.FPDFText_GetFontSize(self.textpage, i) or 1.0
        if not self.upright(i):
            return None
        name, bold, mono = self.style(i)
        glyphs = self.glyphs
        before = len(glyphs.text)
        self.add(text, indices)
        added = len(glyphs.text) - before
        if not mono and name not in fixed:
            mono = _told_fixed(glyphs, before, name, fixed)
        glyphs.size += [size] * added
        glyphs.bold += [bold] * added
        return added, mono, name

    def upright(self, i: int) -> bool:
        """Whether character `i` stands upright on the displayed page."""
        angle = math.degrees(self.raw.FPDFText_GetCharAngle(self.textpage, i))
        return abs(((angle + self.rot + 180) % 360) - 180) < 3

    def style(self, i: int) -> tuple[str, bool, bool]:
        """The font name of character `i`, whether it is bold, and fixed-pitch as the font says."""
        raw, flags = self.raw, self.flags
        raw.FPDFText_GetFontInfo(self.textpage, i, self.name_buf, 256, self.ctypes.byref(flags))
        name = self.name_buf.value.decode("latin-1", "replace")
        weight = raw.FPDFText_GetFontWeight(self.textpage, i)
        bold = bool(_BOLD_NAME.search(name)) or weight >= 600 or bool(flags.value & (1 << 18))
        mono = bool(flags.value & 1) or bool(_MONO_NAME.search(name))
        return name, bold, mono

    def add(self, text: str, indices: list[int]) -> None:
        """Append the glyphs of one run of characters (one text object): their text,
        x extent and baseline."""
        raw, textpage, page, get_box, rect, rect_at = (
            self.raw,
            self.textpage,
            self.page,
            self.get_box,
            self.rect,
            self.rect_at,
        )
        ox, oy, to_display, rot, cx0, sideways = (
            self.ox,
            self.oy,
            self.to_display,
            self.rot,
            self.cx0,
            self.sideways,
        )
        glyphs = self.glyphs
        chars, x0s, x1s, ys = glyphs.text, glyphs.x0, glyphs.x1, glyphs.y
        edge = None
        for i in indices:
            if not get_box(page, i, rect_at):
                continue
            across = rect.left if sideways else rect.bottom
            if across != edge:  # the run's first character, or one off its baseline
                raw.FPDFText_GetCharOrigin(textpage, i, ox, oy)
                y = to_display(ox.value, oy.value)[1]
                edge = across
            left, right = rect.left, rect.right
            if rot == 0 and left <= right:
                x0s.append(left - cx0)
                x1s.append(right - cx0)
            else:
                xa, xb = to_display(left, rect.bottom)[0], to_display(right, rect.top)[0]
                x0s.append(min(xa, xb))
                x1s.append(max(xa, xb))
            ys.append(y)
            chars.append(text[i])
