"""Shared reportlab building blocks: styles, page template, tables, charts, byte-stable builds.

`render_pdf(document) -> bytes` turns a `calculators.reports.doc.Document` into a PDF:
cover page with the title and generation inputs, a table of contents (headings of level 1
and 2), every page footed with the document's footer line (contract id, SHA-256, tool
version) and "page X of Y", PDF outline bookmarks, text that stays selectable (platypus
paragraphs and tables, reportlab.graphics charts; no images). Text is set in embedded subset
TrueType fonts with a fallback font per character (`calculators.reports.fonts`), so names in
any script (Łódź, Příbram, Ελλάδα, Москва, 某某智算云) print as written.

Builds are byte-identical for the same document: reportlab runs with `invariant=1`, so the
creation date is fixed (`SOURCE_DATE_EPOCH` when set, else the document's `created` date,
else 2000-01-01) and the file id is derived from the content, never from the clock. A
document can carry a watermark (DRAFT) across every page and embedded files (the schedule
attaches its machine-readable contract).

Other reports reuse the pieces directly: `styles()`, `table_flowable()`, `bar_chart()`,
`heatmap()`, `ReportDocTemplate` and `FooterCanvas`.
"""

from __future__ import annotations

import calendar
import hashlib
import io
import os
import time
from datetime import date
from functools import lru_cache
from typing import Any
from xml.sax.saxutils import escape

from reportlab.graphics.charts.barcharts import HorizontalBarChart, VerticalBarChart
from reportlab.graphics.charts.legends import Legend
from reportlab.graphics.shapes import Drawing, Line, Rect, String
from reportlab.lib import colors
from reportlab.lib.enums import TA_CENTER, TA_RIGHT
from reportlab.lib.pagesizes import A4, landscape
from reportlab.lib.styles import ParagraphStyle, getSampleStyleSheet
from reportlab.lib.units import mm
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen import canvas as rl_canvas
from reportlab.platypus import (BaseDocTemplate, CondPageBreak, Flowable, Frame, KeepTogether, LongTable, PageBreak,
                                PageTemplate, Spacer, TableStyle)
from reportlab.platypus.tableofcontents import TableOfContents

from calculators.reports import doc as d
from calculators.reports import fonts
from calculators.reports.fmt import axis_label, nice_step
from calculators.reports.fonts import Paragraph

# --- palette and type -------------------------------------------------------------------

INK = colors.HexColor("#1f2933")
MUTED = colors.HexColor("#616e7c")
RULE = colors.HexColor("#cbd2d9")
HEAD_BG = colors.HexColor("#243b53")
STRIPE = colors.HexColor("#f0f4f8")
WARN_BG = colors.HexColor("#fde8e8")
BEST_BG = colors.HexColor("#d5f0d5")
ACCENT = colors.HexColor("#2f80ed")
SERIES = [colors.HexColor(c) for c in ("#2f80ed", "#f2994a", "#27ae60", "#9b51e0", "#eb5757", "#56ccf2",
                                        "#828282", "#f2c94c")]
TARGET = colors.HexColor("#c0392b")
FONT, FONT_BOLD = fonts.REGULAR, fonts.BOLD          # embedded TrueType, fallback per character
MARGIN = 18 * mm

# Characters outside the standard fonts' WinAnsi encoding, written as plain text instead.
_PLAIN = str.maketrans({"≥": ">=", "≤": "<=", "→": "->", "←": "<-", "−": "-", "✓": "yes", "✗": "no",
                        "≈": "~", "…": "...", "‑": "-", "\u00a0": " ", "\u2009": " "})


def plain(text: str) -> str:
    """Text that the standard PDF fonts can show."""
    return text.translate(_PLAIN)


def esc(text: str) -> str:
    return escape(plain(text))


@lru_cache(maxsize=1)
def styles() -> dict[str, ParagraphStyle]:
    fonts.register()
    base = getSampleStyleSheet()
    s: dict[str, ParagraphStyle] = {}
    s["body"] = ParagraphStyle("body", parent=base["Normal"], fontName=FONT, fontSize=9.5, leading=13,
                               textColor=INK, spaceAfter=5, bulletFontName=FONT)
    s["small"] = ParagraphStyle("small", parent=s["body"], fontSize=8, leading=10.5, textColor=INK)
    s["note"] = ParagraphStyle("note", parent=s["body"], fontSize=8, leading=10.5, textColor=MUTED)
    s["strong"] = ParagraphStyle("strong", parent=s["body"], fontName=FONT_BOLD)
    s["warning"] = ParagraphStyle("warning", parent=s["body"], textColor=colors.HexColor("#9b1c1c"),
                                  fontName=FONT_BOLD)
    s["bullet"] = ParagraphStyle("bullet", parent=s["body"], leftIndent=12, bulletIndent=2, spaceAfter=2)
    s["h1"] = ParagraphStyle("h1", parent=s["body"], fontName=FONT_BOLD, fontSize=15, leading=19,
                             spaceBefore=10, spaceAfter=8, textColor=HEAD_BG, keepWithNext=1)
    s["h2"] = ParagraphStyle("h2", parent=s["body"], fontName=FONT_BOLD, fontSize=11.5, leading=15,
                             spaceBefore=8, spaceAfter=4, textColor=HEAD_BG, keepWithNext=1)
    s["h3"] = ParagraphStyle("h3", parent=s["body"], fontName=FONT_BOLD, fontSize=9.5, leading=13,
                             spaceBefore=5, spaceAfter=2, textColor=INK, keepWithNext=1)
    s["title"] = ParagraphStyle("title", parent=s["body"], fontName=FONT_BOLD, fontSize=22, leading=27,
                                textColor=HEAD_BG, spaceAfter=10)
    s["subtitle"] = ParagraphStyle("subtitle", parent=s["body"], fontSize=13, leading=17, textColor=MUTED,
                                   spaceAfter=18)
    s["cell"] = ParagraphStyle("cell", parent=s["body"], fontSize=8, leading=9.6, spaceAfter=0)
    s["cell_r"] = ParagraphStyle("cell_r", parent=s["cell"], alignment=TA_RIGHT)
    s["cell_c"] = ParagraphStyle("cell_c", parent=s["cell"], alignment=TA_CENTER)
    s["head"] = ParagraphStyle("head", parent=s["cell"], fontName=FONT_BOLD, textColor=colors.white)
    s["head_r"] = ParagraphStyle("head_r", parent=s["head"], alignment=TA_RIGHT)
    s["head_c"] = ParagraphStyle("head_c", parent=s["head"], alignment=TA_CENTER)
    s["caption"] = ParagraphStyle("caption", parent=s["note"], spaceBefore=2, spaceAfter=8)
    s["toc1"] = ParagraphStyle("toc1", parent=s["body"], fontName=FONT_BOLD, leftIndent=0, spaceAfter=1)
    s["toc2"] = ParagraphStyle("toc2", parent=s["body"], leftIndent=14, spaceAfter=0, fontSize=9)
    return s


# --- page template ----------------------------------------------------------------------

class FooterCanvas(rl_canvas.Canvas):
    """Canvas that prints the footer line and "page X of Y" on every page.

    Pages are kept until the end so the total is known; set `footer_text` (class attribute
    of a subclass made by `footer_canvas(text)`).
    """

    footer_text = ""
    watermark: str | None = None
    created: date | None = None
    embedded: tuple[d.EmbeddedFile, ...] = ()
    page_marks: tuple[d.PageMark, ...] = ()
    footer_note: str | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["invariant"] = 1
        super().__init__(*args, **fonts.canvas_kwargs(kwargs))
        self._saved: list[tuple[dict, list]] = []
        self._marks: list[tuple[str, dict]] = []
        if self.created is not None and not os.environ.get("SOURCE_DATE_EPOCH", "").strip():
            self._doc._timeStamp = _timestamp(self.created)

    def bookmarkPage(self, key: str, **kw: Any) -> None:  # noqa: N802 (reportlab API)
        # pages are emitted at save(); a destination must name the page it is emitted as
        self._marks.append((key, kw))

    def showPage(self) -> None:  # noqa: N802 (reportlab API)
        marks, self._marks = self._marks, []
        self._saved.append((dict(self.__dict__), marks))
        self._startPage()

    def save(self) -> None:
        total = len(self._saved)
        for state, marks in self._saved:
            self.__dict__.update(state)
            for key, kw in marks:
                super().bookmarkPage(key, **kw)
            self._draw_footer(total)
            self._draw_marks()
            if self.watermark:
                self._draw_watermark(self.watermark)
            super().showPage()
        if self.embedded:
            _embed_files(self, self.embedded)
        super().save()

    def _draw_watermark(self, text: str) -> None:
        w, h = self._pagesize
        self.saveState()
        self.setFillColor(colors.Color(0.75, 0.22, 0.17, alpha=0.16))
        self.translate(w / 2, h / 2)
        self.rotate(40)
        size = 110
        fonts.draw_string(self, 0, -size * 0.35, text, FONT_BOLD, size, "centre")
        self.restoreState()

    def _fitted(self, text: str, font: str, size: float, room: float, floor: float) -> tuple[str, float]:
        """`text` in `size`, smaller down to `floor` before anything is cut, then cut to `room`."""
        wide = fonts.width(text, font, size)
        if wide > room:
            size = max(floor, size * room / wide)
        if fonts.width(text, font, size) > room:
            while text and fonts.width(text + "…", font, size) > room:
                text = text[:-1]
            text += "…"
        return text, size

    def _draw_marks(self) -> None:
        """The page marks, centred in the top margin, one under the other."""
        if not self.page_marks:
            return
        w, h = self._pagesize
        self.saveState()
        y = h - 6 * mm
        for m in self.page_marks:
            text, size = self._fitted(plain(m.text), FONT_BOLD, m.size, w - 2 * MARGIN, 5.5)
            y -= size
            self.setFillColor(colors.HexColor(m.color))
            fonts.draw_string(self, w / 2, y, text, FONT_BOLD, size, "centre")
            y -= 2
        self.restoreState()

    def _footer_fitted(self, text: str, room: float) -> tuple[str, float]:
        """The footer line in smaller type before anything is cut; then its first part (the
        document's id, also on the page) is shortened with "…", so that what follows (the
        SHA-256 the schedule tells both parties to compare on every page, the tool version)
        stays whole. Only a footer whose later parts alone do not fit is cut at its end."""
        size = 6.8
        wide = fonts.width(text, FONT, size)
        if wide > room:
            size = max(5.6, size * room / wide)
        if fonts.width(text, FONT, size) <= room:
            return text, size
        head, sep, tail = text.partition(" · ")
        if sep and fonts.width("…" + sep + tail, FONT, size) <= room:
            while fonts.width(head + "…" + sep + tail, FONT, size) > room:
                head = head[:-1]
            return head + "…" + sep + tail, size
        return self._fitted(text, FONT, size, room, size)

    def _draw_footer(self, total: int) -> None:
        w, _h = self._pagesize
        self.saveState()
        self.setStrokeColor(RULE)
        self.setLineWidth(0.5)
        self.line(MARGIN, 13 * mm, w - MARGIN, 13 * mm)
        self.setFillColor(MUTED)
        text, size = self._footer_fitted(plain(self.footer_text), w - 2 * MARGIN - 60)
        fonts.draw_string(self, MARGIN, 9.5 * mm, text, FONT, size)
        fonts.draw_string(self, w - MARGIN, 9.5 * mm, f"Page {self._pageNumber} of {total}", FONT, 7.5, "right")
        if self.footer_note:
            note, size = self._fitted(plain(self.footer_note), FONT, 6.8, w - 2 * MARGIN, 5.6)
            fonts.draw_string(self, MARGIN, 6 * mm, note, FONT, size)
        self.restoreState()


def footer_canvas(text: str, watermark: str | None = None, created: date | None = None,
                  embedded: tuple[d.EmbeddedFile, ...] = (), page_marks: tuple[d.PageMark, ...] = (),
                  footer_note: str | None = None) -> type[FooterCanvas]:
    return type("BoundFooterCanvas", (FooterCanvas,), {"footer_text": text, "watermark": watermark,
                                                       "created": created, "embedded": embedded,
                                                       "page_marks": page_marks, "footer_note": footer_note})


def _timestamp(day: date) -> Any:
    """A reportlab timestamp for midnight UTC of `day` (the PDF's creation and modification date)."""
    from reportlab.lib.utils import TimeStamp

    epoch = calendar.timegm(day.timetuple())
    ts = TimeStamp(1)
    ts.t = epoch
    ts.lt = time.gmtime(epoch)
    ts.YMDhms = tuple(ts.lt)[:6]
    return ts


def _embed_files(canv: rl_canvas.Canvas, files: tuple[d.EmbeddedFile, ...]) -> None:
    """Attach files to the PDF (catalog /Names /EmbeddedFiles), each with its size, MD5
    check sum (what the PDF format defines) and a description."""
    from reportlab.pdfbase.pdfdoc import PDFArray, PDFDictionary, PDFName, PDFStream, PDFString

    doc = canv._doc
    names: list[Any] = []
    for f in sorted(files, key=lambda f: f.name):
        params = PDFDictionary({"Size": len(f.data), "CheckSum": PDFString(hashlib.md5(f.data).digest())})
        stream = PDFStream(PDFDictionary({"Type": PDFName("EmbeddedFile"), "Subtype": PDFName(f.mime).replace("/", "#2F").replace("#2F", "/", 1),
                                          "Params": params}), f.data)
        spec = PDFDictionary({"Type": PDFName("Filespec"), "F": PDFString(f.name), "UF": PDFString(f.name),
                              "Desc": PDFString(f.description), "AFRelationship": PDFName("Source"),
                              "EF": PDFDictionary({"F": doc.Reference(stream)})})
        names += [PDFString(f.name), doc.Reference(spec)]
    doc.Catalog.Names = PDFDictionary({"EmbeddedFiles": PDFDictionary({"Names": PDFArray(names)})})


class ReportDocTemplate(BaseDocTemplate):
    """A4 pages with a single frame; level-1/2 headings go to the TOC and the PDF outline."""

    def __init__(self, buf: io.BytesIO, *, title: str, author: str, subject: str = "",
                 keywords: tuple[str, ...] = (), pagesize=A4) -> None:
        super().__init__(buf, pagesize=pagesize, leftMargin=MARGIN, rightMargin=MARGIN,
                         topMargin=16 * mm, bottomMargin=19 * mm, title=plain(title), author=author,
                         subject=plain(subject), creator="slakit", keywords=list(keywords),
                         invariant=1, producer="slakit (ReportLab)")
        frame = Frame(self.leftMargin, self.bottomMargin, self.width, self.height, id="body",
                      leftPadding=0, rightPadding=0, topPadding=0, bottomPadding=0)
        self.addPageTemplates([PageTemplate(id="page", frames=[frame])])
        self._anchor = 0
        self._outline_level = -1
        self._outline_base: int | None = None

    def afterFlowable(self, flowable: Flowable) -> None:  # noqa: N802 (reportlab API)
        level = getattr(flowable, "_toc_level", None)
        if level is None:
            return
        text = flowable.getPlainText()
        self._anchor += 1
        key = f"h{self._anchor}"
        self.canv.bookmarkPage(key)
        # the outline starts at the first heading's level (a document of subsections only), and
        # a level under no parent moves up to one
        if self._outline_base is None:
            self._outline_base = level
        level = min(max(0, level - self._outline_base), self._outline_level + 1)
        self._outline_level = level
        self.canv.addOutlineEntry(text, key, level=level, closed=level > 0)
        # the contents page sets entries as paragraph markup: escaped, with fallback fonts
        self.notify("TOCEntry", (level, fonts.markup(escape(text)), self.page, key))

    def handle_documentBegin(self) -> None:  # noqa: N802 (reportlab API)
        self._anchor = 0
        self._outline_level = -1
        self._outline_base: int | None = None
        super().handle_documentBegin()


def heading_flowable(text: str, level: int) -> Paragraph:
    p = Paragraph(esc(text if len(text) <= 300 else text[:280] + "… [cut]"), styles()[f"h{min(level, 3)}"])
    if level <= 2:
        p._toc_level = level - 1  # type: ignore[attr-defined]
    return p


# --- tables ------------------------------------------------------------------------------

MAX_CELL_LINES = 12


def cut_text(text: str, width: float, size: float, max_lines: int = MAX_CELL_LINES) -> str:
    """`text` short enough to wrap into at most `max_lines` lines of `width` points: a longer
    one is cut and ends with a marker naming how much was left out, so that no input text
    (a 1,500-character cause or id) can make a row taller than a page."""
    per_line = max(4, int((width - 6) / (size * 0.62)))       # conservative: wide glyphs
    limit = per_line * max_lines
    if len(text) <= limit:
        return text
    keep = max(1, limit - 40)
    return text[:keep] + f"… [cut: {len(text) - keep:,} more characters]"


def _fit_nowrap(t: d.Table, cols: list[float], size: float) -> list[float]:
    """Column widths for a table with `nowrap` columns: those get their widest cell, every other
    column its longest word (header words in bold), so ids and numbers never break and words
    only break between each other; the room comes from the columns' slack in proportion.
    When even that does not fit, only the `nowrap` columns are widened."""
    n = len(cols)
    texts = [{plain(str(r[i])) for r in t.rows} for i in range(n)]
    need = []
    for i in range(n):
        if i in t.nowrap:
            w = max([fonts.width(x, FONT, size) for x in texts[i]] or [0.0])
        else:
            words = {word for x in texts[i] for word in x.split()}
            w = max([fonts.width(word, FONT, size) for word in words] or [0.0])
        w = max([w] + [fonts.width(word, FONT_BOLD, size) for word in plain(t.header[i]).split()])
        need.append(w + 7)                       # cell padding and a margin
    total = sum(cols)
    if sum(need) > total:
        need = [need[i] if i in t.nowrap else 0.0 for i in range(n)]
        if sum(need) > total:
            return cols
    out = [max(c, nd) for c, nd in zip(cols, need)]
    over = sum(out) - total
    slack = [o - nd for o, nd in zip(out, need)]
    room = sum(slack)
    if over <= 0 or room <= 0:
        return out
    return [o - over * sl / room for o, sl in zip(out, slack)]


def _cell(text: str, style: ParagraphStyle, width: float, font: str, size: float, nowrap: bool = False,
          bold: bool = False, color: str | None = None) -> Any:
    """A plain string when it fits on one line (fast), a wrapping Paragraph otherwise.

    A `nowrap` cell stays one string when its column was widened to fit it; text too long for
    any column (a 1,500-character id) is cut with a marker and wraps. A `bold` cell is set in
    bold; a `color` sets its first line bold in that colour (a status above its reason)."""
    t = plain(text)
    if len(t) > 60:
        t = cut_text(t, width, size)
    if color:
        first, _, rest = t.partition("\n")
        markup = f'<font color="{color}"><b>{escape(first)}</b></font>'
        if rest:
            markup += '<br/><font color="#555555">' + escape(rest).replace("\n", "<br/>") + "</font>"
        return Paragraph(markup, style)
    if bold:
        return Paragraph("<b>" + escape(t).replace("\n", "<br/>") + "</b>", style)
    if "\n" not in t and fonts.covered(t, font) and stringWidth(t, font, size) <= width - (1 if nowrap else 6):
        return t
    return Paragraph(escape(t).replace("\n", "<br/>"), style)


def table_flowable(t: d.Table, width: float) -> list[Flowable]:
    """A platypus table that repeats its header, wraps long cells and fits `width`."""
    s = styles()
    n = len(t.header)
    rel = t.widths or tuple(1.0 for _ in range(n))
    total = float(sum(rel))
    width = width * t.width_fraction
    cols = [width * r / total for r in rel]
    align = t.align or tuple("l" for _ in range(n))
    size = t.font_size or 8
    if t.nowrap:
        cols = _fit_nowrap(t, cols, size)
    cell_styles = {}
    for key, name in (("l", "cell"), ("r", "cell_r"), ("c", "cell_c")):
        cell_styles[key] = ParagraphStyle(f"{name}{size}", parent=s[name], fontSize=size, leading=size * 1.2)
    head_styles = {k: ParagraphStyle(f"{s[n].name}{size}", parent=s[n], fontSize=size, leading=size * 1.2)
                   for k, n in (("l", "head"), ("r", "head_r"), ("c", "head_c"))}
    pad = 2.2 if size > 7 else 1.2
    data: list[list[Any]] = [[Paragraph(esc(cut_text(str(h), cols[i], size, 4)), head_styles[align[i]])
                              for i, h in enumerate(t.header)]]
    marked = set(t.marks)
    tinted = {(r, c): col for r, c, col in t.colors}
    for r, row in enumerate(t.rows):
        data.append([_cell(str(v), cell_styles[align[i]], cols[i], FONT, size, i in t.nowrap,
                           bold=(r, i) in marked, color=tinted.get((r, i)))
                     for i, v in enumerate(row)])
    cmds: list[tuple] = [
        fonts.TABLE_FONT,
        ("FONT", (0, 1), (-1, -1), FONT, size, size * 1.2),
        ("TEXTCOLOR", (0, 1), (-1, -1), INK),
        ("BACKGROUND", (0, 0), (-1, 0), HEAD_BG),
        ("VALIGN", (0, 0), (-1, -1), "TOP"),
        ("LINEBELOW", (0, 0), (-1, -1), 0.25, RULE),
        ("TOPPADDING", (0, 0), (-1, -1), 2.2),
        ("BOTTOMPADDING", (0, 0), (-1, -1), 2.2),
        ("TOPPADDING", (0, 1), (-1, -1), pad),
        ("BOTTOMPADDING", (0, 1), (-1, -1), pad),
        ("LEFTPADDING", (0, 0), (-1, -1), 3),
        ("RIGHTPADDING", (0, 0), (-1, -1), 3),
    ]
    for i, a in enumerate(align):
        if a != "l":
            cmds.append(("ALIGN", (i, 1), (i, -1), "RIGHT" if a == "r" else "CENTER"))
    cmds.append(("ROWBACKGROUNDS", (0, 1), (-1, -1), [colors.white, STRIPE]))
    for r in t.highlight:
        cmds.append(("BACKGROUND", (0, r + 1), (-1, r + 1), WARN_BG))
    for r, c in t.marks:
        cmds.append(("BACKGROUND", (c, r + 1), (c, r + 1), BEST_BG))
    if t.group_size:
        for c in range(t.group_size, n, t.group_size):
            cmds.append(("LINEBEFORE", (c, 0), (c, -1), 0.8, MUTED))
    if t.total_row and t.rows:
        cmds.append(("FONT", (0, -1), (-1, -1), FONT_BOLD, size, size * 1.2))
        cmds.append(("LINEABOVE", (0, -1), (-1, -1), 0.8, INK))
    heights = None
    if t.min_row_height:
        heights = [None] + [t.min_row_height] * len(t.rows)
    elif (len(data) > 120 and not t.highlight and not t.total_row and not t.marks
          and all(isinstance(c, str) for row in data[1:] for c in row)):
        # long table of one-line rows: cut page by page without re-measuring the rest
        tab: Flowable = PagedTable(data[0], data[1:], cols, size * 1.2 + 2 * pad + 0.6, cmds)
    if heights is not None or not isinstance(locals().get("tab"), PagedTable):
        tab = LongTable(data, colWidths=cols, rowHeights=heights, repeatRows=1, hAlign="LEFT")
        tab.setStyle(TableStyle(cmds))
    out: list[Flowable] = [tab]
    if t.caption:
        out.append(Paragraph(esc(t.caption), s["caption"]))
    else:
        out.append(Spacer(1, 6))
    return out


class PagedTable(Flowable):
    """A long table whose rows are all one line high, split page by page in linear time.

    reportlab re-measures the whole remainder of a table at every page break; with a known
    row height this flowable knows how many rows fit and builds one small table per page
    (header repeated), so 10,000 rows cost 10,000 rows, not 10,000 x pages.
    """

    def __init__(self, header: list[Any], rows: list[list[Any]], cols: list[float], row_h: float,
                 cmds: list[tuple]) -> None:
        super().__init__()
        self.header, self.rows, self.cols, self.row_h, self.cmds = header, rows, cols, row_h, cmds
        probe = LongTable([header], colWidths=cols)
        probe.setStyle(TableStyle([c for c in cmds if c[0] not in ("ROWBACKGROUNDS",)]))
        self.header_h = probe.wrap(sum(cols), 10**6)[1]
        self.hAlign = "LEFT"

    def _table(self, rows: list[list[Any]]) -> LongTable:
        tab = LongTable([self.header] + rows, colWidths=self.cols, rowHeights=[self.header_h] + [self.row_h] * len(rows),
                        repeatRows=1, hAlign="LEFT")
        tab.setStyle(TableStyle(self.cmds))
        return tab

    def wrap(self, aw: float, ah: float) -> tuple[float, float]:
        self.width = sum(self.cols)
        self.height = self.header_h + self.row_h * len(self.rows)
        return self.width, self.height

    def split(self, aw: float, ah: float) -> list[Flowable]:
        k = int((ah - self.header_h) // self.row_h)
        if k < 1:
            return []
        if k >= len(self.rows):
            return [self._table(self.rows)]
        return [self._table(self.rows[:k]), PagedTable(self.header, self.rows[k:], self.cols, self.row_h, self.cmds)]

    def draw(self) -> None:
        tab = self._table(self.rows)
        tab.wrapOn(self.canv, self.width, self.height)
        tab.drawOn(self.canv, 0, 0)


def _unbroken_style(text: str, room: float) -> ParagraphStyle:
    """Body style, in smaller type when `text` is one long token (a SHA-256) that would break."""
    body = styles()["body"]
    if " " in text or not text:
        return body
    w = fonts.width(text, FONT, body.fontSize)
    if w <= room:
        return body
    size = max(6.0, round(body.fontSize * room / w - 0.05, 1))
    return ParagraphStyle(f"body{size}", parent=body, fontSize=size, leading=max(size * 1.3, 9))


def callout_flowable(c: d.Callout, width: float) -> Flowable:
    """A box ruled in the callout's colour: its title large and bold, then its lines."""
    s = styles()
    tone = colors.HexColor(c.color)
    title = ParagraphStyle("callout", parent=s["body"], fontName=FONT_BOLD, fontSize=15, leading=19, textColor=tone)
    data = [[Paragraph(esc(cut_text(c.title, width, 15, 4)), title)]]
    data += [[Paragraph(esc(cut_text(line, width, 9.5, 20)), s["body"])] for line in c.lines]
    tab = LongTable(data, colWidths=[width], hAlign="LEFT")
    tab.setStyle(TableStyle([fonts.TABLE_FONT, ("BOX", (0, 0), (-1, -1), 1.2, tone), ("VALIGN", (0, 0), (-1, -1), "TOP"),
                             ("TOPPADDING", (0, 0), (-1, -1), 3), ("BOTTOMPADDING", (0, 0), (-1, -1), 1),
                             ("TOPPADDING", (0, 0), (0, 0), 7), ("BOTTOMPADDING", (0, -1), (-1, -1), 6),
                             ("LEFTPADDING", (0, 0), (-1, -1), 8), ("RIGHTPADDING", (0, 0), (-1, -1), 8)]))
    return tab


def key_values_flowable(kv: d.KeyValues, width: float) -> Flowable:
    s = styles()
    room = width * 0.72 - 10        # less the cell padding (2 left, 6 right) and a margin
    data = [[Paragraph(esc(cut_text(str(k), width * 0.28, 9)), s["strong"]),
             Paragraph(esc(cut_text(str(v), width * 0.72, 9, 30)), _unbroken_style(plain(v), room))]
            for k, v in kv.items]
    tab = LongTable(data, colWidths=[width * 0.28, width * 0.72], hAlign="LEFT")
    tab.setStyle(TableStyle([fonts.TABLE_FONT, ("VALIGN", (0, 0), (-1, -1), "TOP"), ("LINEBELOW", (0, 0), (-1, -1), 0.25, RULE),
                             ("TOPPADDING", (0, 0), (-1, -1), 2), ("BOTTOMPADDING", (0, 0), (-1, -1), 0),
                             ("LEFTPADDING", (0, 0), (-1, -1), 2)]))
    return tab


# --- charts ------------------------------------------------------------------------------

def bar_chart(c: d.BarChart, width: float) -> Drawing:
    """Grouped (or stacked) bars with optional reference lines and a legend."""
    n_series = len(c.series)
    legend_h = 14 if n_series > 1 or c.reference else 0
    horizontal = c.horizontal
    label_w = 0.0
    if horizontal:
        label_w = min(150.0, max(fonts.width(plain(x), FONT, 7) for x in c.categories) + 8) if c.categories else 40
        height = max(90.0, 16.0 * len(c.categories) * (1 if c.stacked else max(1, n_series)) ** 0.5 + 50)
    else:
        height = 190.0
    dr = Drawing(width, height + 18 + legend_h, initialFontName=FONT)
    dr.add(fonts.string_group(0, height + legend_h + 6, plain(c.title), FONT_BOLD, 9, fillColor=INK))
    ch = HorizontalBarChart() if horizontal else VerticalBarChart()
    ch.x = 46 + label_w if horizontal else 46
    ch.y = 30 if not horizontal else 22
    ch.width = width - ch.x - 10
    ch.height = height - ch.y - 6
    ch.data = [list(v) for _, v in c.series]
    values = [x for _, v in c.series for x in v] or [0.0]
    if c.stacked:
        values = [sum(v[i] for _, v in c.series) for i in range(len(c.categories))] or [0.0]
    refs = [r for _, r in c.reference]
    lo = c.value_min if c.value_min is not None else min(0.0, min(values + refs))
    hi = c.value_max if c.value_max is not None else max(values + refs)
    if hi <= lo:
        hi = lo + 1
    step = nice_step(hi - lo)
    axis = ch.valueAxis
    axis.valueMin = lo
    axis.valueMax = lo + step * (int((hi - lo) / step) + (0 if (hi - lo) % step == 0 else 1))
    axis.valueStep = step
    axis.labels.fontName = FONT
    axis.labels.fontSize = 7
    axis.labelTextFormat = axis_label
    axis.visibleGrid = 1
    axis.gridStrokeColor = RULE
    axis.gridStrokeWidth = 0.3
    cat = ch.categoryAxis
    cat.categoryNames = [plain(x) for x in c.categories]
    cat.labels.fontName = FONT
    cat.labels.fontSize = 7
    for i, name in enumerate(cat.categoryNames):
        if not fonts.covered(name, FONT):
            cat.labels[i].fontName = fonts.font_for(name, FONT)
    if horizontal:
        cat.labels.boxAnchor = "e"
        cat.labels.dx = -3
        cat.reverseDirection = 1
    elif len(c.categories) > 8:
        cat.labels.angle = 30
        cat.labels.boxAnchor = "ne"
        cat.labels.dy = -2
    if c.stacked:
        ch.categoryAxis.style = "stacked"
    ch.barSpacing = 1
    ch.groupSpacing = 6
    for i in range(n_series):
        ch.bars[i].fillColor = SERIES[i % len(SERIES)]
        ch.bars[i].strokeColor = None
    dr.add(ch)
    span = axis.valueMax - axis.valueMin
    for k, (label, ref) in enumerate(c.reference):
        if not (axis.valueMin <= ref <= axis.valueMax):
            continue
        col = TARGET if k == 0 else SERIES[(k + 3) % len(SERIES)]
        if horizontal:
            x = ch.x + ch.width * (ref - axis.valueMin) / span
            dr.add(Line(x, ch.y, x, ch.y + ch.height, strokeColor=col, strokeWidth=1, strokeDashArray=[3, 2]))
        else:
            y = ch.y + ch.height * (ref - axis.valueMin) / span
            dr.add(Line(ch.x, y, ch.x + ch.width, y, strokeColor=col, strokeWidth=1, strokeDashArray=[3, 2]))
    if legend_h:
        lg = Legend()
        lg.x = ch.x
        lg.y = height + legend_h - 2
        lg.alignment = "right"
        lg.columnMaximum = 1
        lg.fontName = FONT
        lg.fontSize = 7
        lg.deltax = 10
        lg.dx = 7
        lg.dy = 7
        pairs = [(SERIES[i % len(SERIES)], plain(name)) for i, (name, _) in enumerate(c.series)]
        pairs += [(TARGET if k == 0 else SERIES[(k + 3) % len(SERIES)], plain(f"{label} (dashed line)"))
                  for k, (label, _) in enumerate(c.reference)]
        lg.colorNamePairs = pairs
        lg.fontName = fonts.font_for("".join(p[1] for p in pairs), FONT)
        lg.dxTextSpace = 4
        lg.variColumn = 1
        lg.columnMaximum = 1
        lg.deltax = max(fonts.width(p[1], FONT, 7) for p in pairs) + 18
        dr.add(lg)
    dr.add(fonts.string_group(0, ch.y + ch.height / 2 if not horizontal else 4,
                              plain(c.value_label) if horizontal else "", FONT, 7, fillColor=MUTED))
    if not horizontal:
        dr.add(fonts.string_group(ch.x, 2, plain(c.value_label), FONT, 7, fillColor=MUTED))
    return dr


def _shade(v: float, vmax: float) -> colors.Color:
    if v <= 0 or vmax <= 0:
        return colors.HexColor("#f4f6f8")
    f = min(1.0, v / vmax) ** 0.5
    lo, hi = (0.99, 0.93, 0.80), (0.70, 0.09, 0.11)
    return colors.Color(*(a + (b - a) * f for a, b in zip(lo, hi)))


def heatmap(h: d.Heatmap, width: float) -> Drawing:
    """Shaded grid (rows x columns) with row labels, sparse column labels and a scale."""
    n_r, n_c = len(h.row_labels), len(h.col_labels)
    label_w = min(110.0, max([fonts.width(plain(x), FONT, 6.5) for x in h.row_labels] + [20.0]) + 6)
    cell_h = min(16.0, 160.0 / max(1, n_r)) if n_r <= 16 else (9.0 if n_r <= 40 else max(4.0, 360.0 / n_r))
    grid_w = width - label_w - 6
    cell_w = grid_w / max(1, n_c)
    height = n_r * cell_h + 60
    dr = Drawing(width, height, initialFontName=FONT)
    top = height - 18
    dr.add(fonts.string_group(0, height - 10, plain(h.title), FONT_BOLD, 9, fillColor=INK))
    vmax = max([v for row in h.values for v in row] + [0.0])
    for i, row in enumerate(h.values):
        y = top - (i + 1) * cell_h
        if cell_h >= 5:
            dr.add(fonts.string_group(label_w - 4, y + cell_h * 0.22, plain(h.row_labels[i]), FONT,
                                      min(6.5, cell_h * 0.8), "end", fillColor=INK))
        for j, v in enumerate(row):
            dr.add(Rect(label_w + j * cell_w, y, cell_w, cell_h, fillColor=_shade(v, vmax),
                        strokeColor=colors.white, strokeWidth=0.3 if cell_w > 3 else 0))
    every = max(1, int(24 / cell_w + 0.999))
    base_y = top - n_r * cell_h
    for j, lab in enumerate(h.col_labels):
        if j % every == 0:
            dr.add(fonts.string_group(label_w + j * cell_w + cell_w / 2, base_y - 8, plain(lab), FONT, 6,
                                      "middle", fillColor=MUTED))
    # scale
    sx, sy = label_w, base_y - 30
    dr.add(fonts.string_group(sx, sy + 2, plain(h.value_label) + ":", FONT, 6.5, fillColor=MUTED))
    start = sx + fonts.width(plain(h.value_label) + ":", FONT, 6.5) + 6
    steps = [0.0, vmax * 0.05, vmax * 0.25, vmax * 0.5, vmax]
    for k, v in enumerate(steps):
        x = start + k * 52
        dr.add(Rect(x, sy, 10, 8, fillColor=_shade(v, vmax), strokeColor=RULE, strokeWidth=0.3))
        dr.add(String(x + 13, sy + 1.5, axis_label(round(v, 1)), fontName=FONT, fontSize=6.5, fillColor=MUTED))
    return dr


# --- whole document ----------------------------------------------------------------------

def flowables(blocks: tuple[d.Block, ...], width: float, section_room: float = 90 * mm) -> list[Flowable]:
    """Flowables of `blocks`; a section (level-1 heading) starts a new page when less than
    `section_room` is left on the current one."""
    s = styles()
    out: list[Flowable] = []
    for b in blocks:
        if isinstance(b, d.Heading):
            if b.level == 1:
                out.append(CondPageBreak(section_room if out else 0))
            out.append(heading_flowable(b.text, b.level))
        elif isinstance(b, d.Para):
            out.append(Paragraph(esc(b.text), s[b.style]))
        elif isinstance(b, d.Bullets):
            for item in b.items:
                out.append(Paragraph(esc(item), s["bullet"], bulletText="\u2022"))
            out.append(Spacer(1, 4))
        elif isinstance(b, d.Table):
            out.extend(table_flowable(b, width))
        elif isinstance(b, d.KeyValues):
            out.append(key_values_flowable(b, width))
            out.append(Spacer(1, 6))
        elif isinstance(b, d.Callout):
            out.append(callout_flowable(b, width))
            out.append(Spacer(1, 8))
        elif isinstance(b, d.BarChart):
            out.append(KeepTogether([bar_chart(b, width), Spacer(1, 8)]))
        elif isinstance(b, d.Heatmap):
            out.append(KeepTogether([heatmap(b, width), Spacer(1, 8)]))
        elif isinstance(b, d.PageBreak):
            out.append(PageBreak())
        else:  # pragma: no cover - the Block union is closed
            raise TypeError(f"unknown block {type(b).__name__}")
    return out


def _toc_cut(blocks: tuple[d.Block, ...]) -> int:
    """Index after the last block that can move a contents entry (the last level-1/2 heading)."""
    last = -1
    for i, b in enumerate(blocks):
        if isinstance(b, d.Heading) and b.level <= 2:
            last = i
    return last + 1


def render_pdf(document: d.Document) -> bytes:
    """The PDF bytes of a document (byte-identical for equal documents).

    The contents page needs the page of every heading, so the document up to the last
    heading is laid out until the contents stop changing (usually twice); whatever follows
    the last heading (long appendix tables) cannot move an entry and is laid out once, in
    the final pass.
    """
    s = styles()
    buf = io.BytesIO()
    size = landscape(A4) if document.landscape else A4
    tpl = ReportDocTemplate(buf, title=document.title, author=document.author,
                            subject=document.subtitle or "", keywords=document.keywords, pagesize=size)
    head: list[Flowable] = [Spacer(1, 30 * mm)] if document.cover_page else []
    head.append(Paragraph(esc(document.title), s["title"]))
    if document.subtitle:
        head.append(Paragraph(esc(document.subtitle), s["subtitle"]))
    if document.cover:
        head.append(key_values_flowable(d.KeyValues(document.cover), tpl.width))
    toc = None
    if document.toc:
        head.append(PageBreak())
        head.append(Paragraph("Contents", s["h1"]))
        toc = TableOfContents()
        toc.levelStyles = [s["toc1"], s["toc2"]]
        toc.dotsMinLevel = 0
        toc.tableStyle = TableStyle([fonts.TABLE_FONT, ("VALIGN", (0, 0), (-1, -1), "TOP"),
                                     ("RIGHTPADDING", (0, 0), (-1, -1), 0), ("LEFTPADDING", (0, 0), (-1, -1), 0)])
        head.append(toc)
    if document.cover_page or document.toc:
        head.append(PageBreak())
    cut = _toc_cut(document.blocks)
    # a report with a cover page opens sections high on a page; a short one runs on
    room = 90 * mm if document.cover_page else 30 * mm
    head.extend(flowables(document.blocks[:cut], tpl.width, room))
    tail = flowables(document.blocks[cut:], tpl.width, room)
    if tail and cut:
        # the last heading must land where the head-only passes put it: no keep-with-next
        # across the cut (the CondPageBreak before a section still keeps it off a page bottom)
        last = next(f for f in reversed(head) if getattr(f, "_toc_level", None) is not None)
        last.keepWithNext = 0
    canvasmaker = footer_canvas(document.footer, document.watermark, document.created, document.embedded,
                                document.page_marks, document.footer_note)
    if toc is None:
        tpl.build(head + tail, canvasmaker=canvasmaker)
        return buf.getvalue()
    tpl._indexingFlowables = [toc]
    edits: list[tuple] = []
    tpl._multiBuildEdits = edits.append        # layout edits (keepWithNext) undone after each pass

    def undo() -> None:
        while edits:
            e = edits.pop(0)
            e[0](*e[1:])

    tpl._doSave = 0
    for _ in range(8):
        toc.beforeBuild()
        tpl.build(head[:], canvasmaker=canvasmaker)
        toc.afterBuild()
        undo()
        if toc.isSatisfied():
            break
    else:  # pragma: no cover - reportlab converges in two or three passes
        raise RuntimeError("table of contents did not settle")
    toc.beforeBuild()
    tpl._doSave = 1
    buf.seek(0)
    buf.truncate()
    tpl.build(head + tail, canvasmaker=canvasmaker)
    return buf.getvalue()


__all__ = ["render_pdf", "styles", "table_flowable", "key_values_flowable", "callout_flowable", "bar_chart", "heatmap", "flowables",
           "ReportDocTemplate", "FooterCanvas", "footer_canvas", "heading_flowable", "plain", "esc"]
