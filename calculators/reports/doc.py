"""A small document model that every report renderer (PDF, Markdown, HTML) reads.

Report builders (the SLA schedule, the SLA review, acceptance certificates) produce a
`Document` made of frozen blocks; the renderers in `calculators.reports.pdf` and
`calculators.reports.text` turn the same blocks into each format, so the PDF and the
Markdown of one report can never say different things.

Text in blocks is plain text (no markup); renderers escape it. Numbers are already
formatted by the builder: renderers never compute.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Literal, Union

Align = Literal["l", "r", "c"]


@dataclass(frozen=True)
class Heading:
    text: str
    level: int = 1                 # 1 = section (in the table of contents), 2 = subsection, 3 = minor
    anchor: str | None = None


@dataclass(frozen=True)
class Para:
    text: str
    style: Literal["body", "small", "note", "strong", "warning"] = "body"


@dataclass(frozen=True)
class Bullets:
    items: tuple[str, ...]


@dataclass(frozen=True)
class Table:
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    align: tuple[Align, ...] | None = None          # per column; default left
    widths: tuple[float, ...] | None = None         # relative column widths; default even
    caption: str | None = None
    highlight: tuple[int, ...] = ()                 # row indices drawn in the warning colour
    total_row: bool = False                         # last row is a total (bold, rule above)
    font_size: float | None = None                  # PDF only: smaller type for wide tables
    width_fraction: float = 1.0                     # PDF only: share of the text width the table takes
    min_row_height: float | None = None             # PDF only: e.g. room for signatures
    group_size: int | None = None                   # PDF only: a rule every N columns (side-by-side lists)
    nowrap: tuple[int, ...] = ()                    # PDF only: columns whose cells never wrap (ids)
    marks: tuple[tuple[int, int], ...] = ()         # (row, column) cells marked best: bold on green, "✓" in text
    colors: tuple[tuple[int, int, str], ...] = ()   # (row, column, "#rrggbb"): the cell's first line bold in that colour


@dataclass(frozen=True)
class Callout:
    """A boxed statement: `title` large and bold in `color`, then `lines` (a verdict banner)."""
    title: str
    lines: tuple[str, ...] = ()
    color: str = "#1f2933"


@dataclass(frozen=True)
class KeyValues:
    """Two-column label/value list (cover pages, parameters)."""
    items: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class BarChart:
    """Grouped vertical bars: one group per category, one bar per series.

    `reference` draws horizontal lines (e.g. targets), one per (label, value).
    `fallback` is the same data as a table for text formats.
    """
    title: str
    categories: tuple[str, ...]
    series: tuple[tuple[str, tuple[float, ...]], ...]
    value_label: str
    fallback: Table
    reference: tuple[tuple[str, float], ...] = ()
    value_min: float | None = None
    value_max: float | None = None
    stacked: bool = False
    horizontal: bool = False


@dataclass(frozen=True)
class Heatmap:
    """A matrix of non-negative values (rows x columns), drawn as shaded cells."""
    title: str
    row_labels: tuple[str, ...]
    col_labels: tuple[str, ...]
    values: tuple[tuple[float, ...], ...]
    value_label: str
    fallback: Table
    row_note: str | None = None


@dataclass(frozen=True)
class PageBreak:
    pass


Block = Union[Heading, Para, Bullets, Table, Callout, KeyValues, BarChart, Heatmap, PageBreak]


@dataclass(frozen=True)
class EmbeddedFile:
    """A file carried inside the PDF (e.g. the machine-readable contract)."""
    name: str
    data: bytes
    description: str
    mime: str = "application/octet-stream"


@dataclass(frozen=True)
class PageMark:
    """A line printed at the top of every PDF page (UNSIGNED, PARTIAL); atop the text formats."""
    text: str
    color: str = "#c53030"
    size: float = 9.0


@dataclass(frozen=True)
class Document:
    """One report: cover data, a footer line printed on every page, and the blocks."""
    title: str
    subtitle: str | None
    footer: str                                    # e.g. "example-gb200-2027 · contract sha256 … · slakit 0.1.0"
    blocks: tuple[Block, ...]
    cover: tuple[tuple[str, str], ...] = ()        # label/value lines under the title
    toc: bool = True
    author: str = "slakit"
    keywords: tuple[str, ...] = field(default_factory=tuple)
    landscape: bool = False
    lang: str | None = None                        # BCP 47 tag of the contract's names (HTML marks them)
    watermark: str | None = None                   # e.g. "DRAFT": across every PDF page, atop the text formats
    created: date | None = None                    # PDF creation date when SOURCE_DATE_EPOCH is unset
    embedded: tuple[EmbeddedFile, ...] = ()        # PDF only: files attached to the document
    cover_page: bool = True                        # False: the blocks follow the title on the first page
    page_marks: tuple[PageMark, ...] = ()          # lines at the top of every page
    footer_note: str | None = None                 # a second footer line (e.g. who signed the evidence)
