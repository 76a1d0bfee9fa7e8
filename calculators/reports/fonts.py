"""Embedded fonts for every PDF slakit writes, with a fallback font per character.

The standard PDF fonts (Helvetica) are not embedded and only cover Western European
letters: `Łódź`, `Příbram`, Greek, Cyrillic or `某某智算云` came out as empty boxes. Every PDF
now uses TrueType fonts that are embedded as subsets (only the glyphs used), chosen per
character from a chain:

1. DejaVu Sans (regular and bold; Debian `fonts-dejavu-core`): Latin with its extensions,
   Greek, Cyrillic and the symbols the reports print (≥, ≤, →, ✓ ...);
2. WenQuanYi Micro Hei (`fonts-wqy-microhei`, a TrueType collection, face 0): Chinese,
   Japanese kana and kanji, Korean hangul; the same face serves as its own bold.

Text for a paragraph goes through `markup()`, which wraps every run of characters that the
first font lacks in `<font name=...>` of the first font in the chain that has them; canvas
strings and chart labels are drawn run by run (`draw_string`, `string_group`), and widths
are measured the same way (`width`). Pure-ASCII text takes a fast path.

The fonts are looked up in the directories of the Debian packages (and in
`$SLAKIT_FONT_DIR` first, when set); when one is missing, `FontsMissing` names the files
searched and the packages to install (`scripts/setup` installs them).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import click
from reportlab.pdfbase import pdfmetrics, ttfonts
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.platypus import Paragraph as _Paragraph

REGULAR = "SlakitSans"
BOLD = "SlakitSans-Bold"
CJK = "SlakitCJK"
MONO = "SlakitMono"


@dataclass(frozen=True)
class _Face:
    name: str
    files: tuple[str, ...]          # file names tried in order, each in every search directory
    subdirs: tuple[str, ...]
    package: str
    index: int = 0                  # face in a TrueType collection (.ttc)


FACES = (
    _Face(REGULAR, ("DejaVuSans.ttf",), ("truetype/dejavu",), "fonts-dejavu-core"),
    _Face(BOLD, ("DejaVuSans-Bold.ttf",), ("truetype/dejavu",), "fonts-dejavu-core"),
    _Face(MONO, ("DejaVuSansMono.ttf",), ("truetype/dejavu",), "fonts-dejavu-core"),
    _Face(CJK, ("wqy-microhei.ttc", "wqy-zenhei.ttc"), ("truetype/wqy",), "fonts-wqy-microhei"),
)
# fallback order after the style's own font
CHAIN = (REGULAR, CJK)
BOLD_CHAIN = (BOLD, CJK)
MONO_CHAIN = (MONO, REGULAR, CJK)


class FontsMissing(click.ClickException):
    """A font file of the chain is not installed (a command prints the message and exits 1)."""

    exit_code = 1


def _dirs() -> list[Path]:
    out = []
    extra = os.environ.get("SLAKIT_FONT_DIR")
    if extra:
        out += [Path(p) for p in extra.split(os.pathsep) if p]
    out += [Path("/usr/share/fonts"), Path("/usr/local/share/fonts")]
    return out


def _find(face: _Face) -> Path | None:
    for base in _dirs():
        for sub in face.subdirs + ("",):
            for f in face.files:
                p = base / sub / f if sub else base / f
                if p.is_file():
                    return p
    return None


class _Cover(dict):
    """Code points per font, each font read and registered with reportlab on first use."""

    def __init__(self, files: dict[str, tuple[_Face, Path]]) -> None:
        super().__init__()
        self.files = files

    def __missing__(self, name: str) -> frozenset[int]:
        if name not in self.files:
            return frozenset()
        face, path = self.files[name]
        font = TTFont(face.name, str(path), subfontIndex=face.index)
        pdfmetrics.registerFont(font)
        self[name] = frozenset(font.face.charToGlyph)
        return self[name]


def _to_unicode_cmap(fontname: str, subset: list[int]) -> str:
    """reportlab's ToUnicode CMap of a subset (`ttfonts.makeToUnicodeCMap`) with each code
    point outside the BMP written as PDF wants it, UTF-16BE (a surrogate pair): reportlab
    writes `<%04X>`, five hex digits for U+1F600, which readers take as U+1F60 (the emoji in
    a name drawn right and copied out of the PDF as a Greek letter)."""
    text = _reportlab_cmap(fontname, subset)
    for i, v in enumerate(subset):
        if v > 0xFFFF:
            text = text.replace("<%02X> <%04X>\n" % (i, v), f"<{i:02X}> <{chr(v).encode('utf-16-be').hex().upper()}>\n", 1)
    return text


_reportlab_cmap = ttfonts.makeToUnicodeCMap


@lru_cache(maxsize=1)
def register() -> dict[str, frozenset[int]]:
    """Register the fonts with reportlab once; returns each font's covered code points."""
    ttfonts.makeToUnicodeCMap = _to_unicode_cmap
    missing = []
    found: dict[str, Path] = {}
    for face in FACES:
        p = _find(face)
        if p is None:
            missing.append(face)
        else:
            found[face.name] = p
    if missing:
        where = ", ".join(str(d) for d in _dirs())
        raise FontsMissing(
            "[SLA-FONT001] PDF fonts not installed: "
            + "; ".join(f"{'/'.join(f.files)} (Debian package {f.package})" for f in missing)
            + f"; searched {where}. Fix: run scripts/setup (or apt-get install "
            + " ".join(sorted({f.package for f in missing}))
            + "), or set SLAKIT_FONT_DIR to a directory holding these files.")
    cover = _Cover({f.name: (f, found[f.name]) for f in FACES})
    for face in FACES:
        if face.name != CJK:            # the CJK face (5 MB) is read when a text first needs it
            cover[face.name]
    pdfmetrics.registerFontFamily(REGULAR, normal=REGULAR, bold=BOLD, italic=REGULAR, boldItalic=BOLD)
    pdfmetrics.registerFontFamily(BOLD, normal=BOLD, bold=BOLD, italic=BOLD, boldItalic=BOLD)
    pdfmetrics.registerFontFamily(CJK, normal=CJK, bold=CJK, italic=CJK, boldItalic=CJK)
    pdfmetrics.registerFontFamily(MONO, normal=MONO, bold=MONO, italic=MONO, boldItalic=MONO)
    return cover


def chain_for(font: str) -> tuple[str, ...]:
    if font == BOLD:
        return BOLD_CHAIN
    if font == MONO:
        return MONO_CHAIN
    if font == REGULAR:
        return CHAIN
    return (font,) + CHAIN


def runs(text: str, font: str = REGULAR, xml: bool = False) -> list[tuple[str, str]]:
    """`text` cut into (font, text) runs: each character in the first font of the chain that has it.

    Spaces stay in the current run. A character no font has (an emoji, a symbol outside the
    fonts' ranges) is written as a visible `<U+hhhh>` in the style's font, as CSV outputs show
    such characters: drawn as it was, it printed as another character (U+1F600 copied out of
    the PDF as U+1F60) or as nothing. `xml`: the text is paragraph markup (`&lt;U+hhhh&gt;`).
    """
    if text.isascii():
        return [(font, text)] if text else []
    cover = register()
    chain = chain_for(font)
    out: list[tuple[str, str]] = []
    cur, buf = font, []
    for ch in text:
        cp = ord(ch)
        use = cur
        if not ch.isspace():
            use = next((f for f in chain if cp in cover[f]), None)
            if use is None:
                use, ch = font, (f"&lt;U+{cp:04X}&gt;" if xml else f"<U+{cp:04X}>")
        if use != cur and buf:
            out.append((cur, "".join(buf)))
            buf = []
        cur = use
        buf.append(ch)
    if buf:
        out.append((cur, "".join(buf)))
    return out


def covered(text: str, font: str = REGULAR) -> bool:
    """Whether `font` alone shows every character of `text`."""
    if text.isascii():
        return True
    cover = register()[font]
    return all(ord(ch) in cover or ch.isspace() for ch in text)


def font_for(text: str, font: str = REGULAR) -> str:
    """The first font of the chain that shows all of `text` (for one-font labels)."""
    for f in chain_for(font):
        if covered(text, f):
            return f
    return font


def width(text: str, font: str, size: float) -> float:
    return sum(pdfmetrics.stringWidth(t, f, size) for f, t in runs(text, font))


def draw_string(canvas: Any, x: float, y: float, text: str, font: str, size: float, align: str = "left") -> None:
    """`canvas.drawString` with per-character fallback; `align` is left, right or centre."""
    parts = runs(text, font)
    total = sum(pdfmetrics.stringWidth(t, f, size) for f, t in parts)
    if align == "right":
        x -= total
    elif align == "centre":
        x -= total / 2
    for f, t in parts:
        canvas.setFont(f, size)
        canvas.drawString(x, y, t)
        x += pdfmetrics.stringWidth(t, f, size)


def string_group(x: float, y: float, text: str, font: str, size: float, anchor: str = "start", **kw: Any) -> Any:
    """A reportlab.graphics String (or a Group of them) drawing `text` with fallback fonts."""
    from reportlab.graphics.shapes import Group, String

    parts = runs(text, font)
    if len(parts) <= 1:
        return String(x, y, text, fontName=parts[0][0] if parts else font, fontSize=size, textAnchor=anchor, **kw)
    total = sum(pdfmetrics.stringWidth(t, f, size) for f, t in parts)
    start = x - (total if anchor == "end" else total / 2 if anchor == "middle" else 0)
    g = Group()
    for f, t in parts:
        g.add(String(start, y, t, fontName=f, fontSize=size, textAnchor="start", **kw))
        start += pdfmetrics.stringWidth(t, f, size)
    return g


_TAG = re.compile(r"(<[^>]*>)")


def markup(xml: str, font: str = REGULAR) -> str:
    """Paragraph markup with every run the style's font lacks wrapped in `<font name=...>`.

    Only text between tags is touched; entities are ASCII and stay in the base font.
    """
    if xml.isascii():
        return xml
    register()
    out = []
    for piece in _TAG.split(xml):
        if not piece or piece.startswith("<"):
            out.append(piece)
            continue
        for f, t in runs(piece, font, xml=True):
            out.append(t if f == font else f'<font name="{f}">{t}</font>')
    return "".join(out)


# first command of every table style: reportlab's cells otherwise select Helvetica (not
# embedded) before drawing, even when every cell holds a paragraph
TABLE_FONT = ("FONT", (0, 0), (-1, -1), REGULAR)


def canvas_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Canvas arguments whose initial font is embedded (reportlab's default, Helvetica, is
    otherwise referenced by every page even when no text uses it)."""
    register()
    if not kwargs.get("initialFontName"):
        kwargs["initialFontName"] = REGULAR
    return kwargs


def canvas_class() -> type:
    """A reportlab Canvas class for `doc.build(..., canvasmaker=...)` (see `canvas_kwargs`)."""
    from reportlab.pdfgen.canvas import Canvas

    class EmbeddedFontCanvas(Canvas):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **canvas_kwargs(kwargs))

    return EmbeddedFontCanvas


def stylesheet(sheet: Any) -> Any:
    """A reportlab sample stylesheet switched to the embedded fonts (bold stays bold, Courier mono)."""
    register()
    for st in sheet.byName.values():
        name = getattr(st, "fontName", "")
        if "Courier" in name:
            st.fontName = MONO
        elif "Bold" in name:
            st.fontName = BOLD
        elif hasattr(st, "fontName"):
            st.fontName = REGULAR
        if hasattr(st, "bulletFontName"):
            st.bulletFontName = REGULAR
    return sheet


class Paragraph(_Paragraph):
    """reportlab's Paragraph with per-character font fallback (see `markup`)."""

    def __init__(self, text: str | None, style: Any = None, *args: Any, **kwargs: Any) -> None:
        if text is None:        # a paragraph split over two pages: reportlab passes the parts' frags
            super().__init__(None, style, *args, **kwargs)
            return
        base = getattr(style, "fontName", REGULAR) if style is not None else REGULAR
        super().__init__(markup(text, base if base in (REGULAR, BOLD, MONO) else REGULAR), style, *args, **kwargs)


__all__ = ["TABLE_FONT", "REGULAR", "BOLD", "CJK", "MONO", "FontsMissing", "register", "runs", "covered", "font_for", "width",
           "draw_string", "string_group", "markup", "stylesheet", "canvas_kwargs", "canvas_class", "Paragraph"]
