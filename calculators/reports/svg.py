"""The report charts as SVG, for the HTML renderings: the same bars, reference lines, legend,
heatmap shading and axes as the PDF charts in `calculators.reports.pdf`.

`bar_chart_svg(chart)` and `heatmap_svg(heatmap)` return one `<svg>` element (text, no
scripts); its size scales with the page (`viewBox`, width 100%). Labels are escaped, and the
`<title>` of each bar or cell gives its value for a mouse-over.
"""

from __future__ import annotations

from html import escape

from calculators.reports import doc as d
from calculators.reports.fmt import axis_label, nice_step

SERIES = ("#2f80ed", "#f2994a", "#27ae60", "#9b51e0", "#eb5757", "#56ccf2", "#828282", "#f2c94c")
TARGET = "#c0392b"
INK, MUTED, RULE = "#1f2933", "#616e7c", "#cbd2d9"
WIDTH = 720.0
FONT = "font-family:'DejaVu Sans',Helvetica,Arial,sans-serif"


def _text(x: float, y: float, text: str, size: float = 10, anchor: str = "start", fill: str = INK,
          weight: str = "normal", extra: str = "") -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" fill="{fill}" '
            f'font-weight="{weight}"{extra}>{escape(text)}</text>')


def _approx_width(text: str, size: float) -> float:
    """Rough text width for layout (wide CJK characters count double)."""
    return sum(1.0 if ord(ch) > 0x2E80 else 0.58 for ch in text) * size


def _axis(lo: float, hi: float) -> tuple[float, float, float]:
    if hi <= lo:
        hi = lo + 1
    step = nice_step(hi - lo)
    top = lo + step * (int((hi - lo) / step) + (0 if (hi - lo) % step == 0 else 1))
    return lo, top, step


def bar_chart_svg(c: d.BarChart) -> str:
    n_series = len(c.series)
    values = [x for _, v in c.series for x in v] or [0.0]
    if c.stacked:
        values = [sum(v[i] for _, v in c.series) for i in range(len(c.categories))] or [0.0]
    refs = [r for _, r in c.reference]
    lo = c.value_min if c.value_min is not None else min(0.0, min(values + refs))
    hi = c.value_max if c.value_max is not None else max(values + refs)
    lo, top, step = _axis(lo, hi)
    span = top - lo
    legend = [(SERIES[i % len(SERIES)], name) for i, (name, _) in enumerate(c.series)]
    legend += [(TARGET if k == 0 else SERIES[(k + 3) % len(SERIES)], f"{label} (dashed line)")
               for k, (label, _) in enumerate(c.reference)]
    legend_h = 20 if (n_series > 1 or c.reference) else 0
    out: list[str] = []
    if c.horizontal:
        label_w = min(280.0, max([_approx_width(x, 9) for x in c.categories] + [30.0]) + 10)
        per = 14.0 * (1 if c.stacked else max(1, n_series))
        plot_h = max(60.0, (per + 6) * len(c.categories))
        px, py, pw = label_w + 10, 24 + legend_h, WIDTH - label_w - 30
        height = py + plot_h + 34
    else:
        px, py, pw, plot_h = 56.0, 24 + legend_h, WIDTH - 70, 200.0
        height = py + plot_h + (60 if len(c.categories) > 8 else 40)
    out.append(f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" viewBox="0 0 {WIDTH:.0f} '
               f'{height:.0f}" width="100%" style="max-width:{WIDTH:.0f}px;{FONT}">')
    out.append(f"<title>{escape(c.title)}</title>")
    out.append(_text(0, 14, c.title, 12, weight="bold"))
    x = px
    for color, name in legend:
        out.append(f'<rect x="{x:.1f}" y="{py - legend_h + 2:.1f}" width="10" height="10" fill="{color}"/>')
        out.append(_text(x + 14, py - legend_h + 11, name, 9))
        x += 24 + _approx_width(name, 9)

    def pos(v: float) -> float:
        return (v - lo) / span

    # grid and value axis
    k = 0
    while lo + k * step <= top + 1e-9:
        v = lo + k * step
        if c.horizontal:
            gx = px + pw * pos(v)
            out.append(f'<line x1="{gx:.1f}" y1="{py:.1f}" x2="{gx:.1f}" y2="{py + plot_h:.1f}" stroke="{RULE}" '
                       'stroke-width="0.6"/>')
            out.append(_text(gx, py + plot_h + 12, axis_label(v), 9, "middle", MUTED))
        else:
            gy = py + plot_h * (1 - pos(v))
            out.append(f'<line x1="{px:.1f}" y1="{gy:.1f}" x2="{px + pw:.1f}" y2="{gy:.1f}" stroke="{RULE}" '
                       'stroke-width="0.6"/>')
            out.append(_text(px - 4, gy + 3, axis_label(v), 9, "end", MUTED))
        k += 1
    n = max(1, len(c.categories))
    band = (plot_h if c.horizontal else pw) / n
    slots = 1 if c.stacked else max(1, n_series)
    bar = max(1.0, (band - 6) / slots)
    for ci, cat in enumerate(c.categories):
        base = ci * band + 3
        acc = 0.0
        for si, (name, vals) in enumerate(c.series):
            v = vals[ci]
            color = SERIES[si % len(SERIES)]
            if c.stacked:
                a, b = pos(lo + acc), pos(lo + acc + v)
                acc += v
                off = base
            else:
                a, b = pos(max(lo, min(0.0, v))) if lo < 0 else 0.0, pos(v)
                off = base + si * bar
            a, b = max(0.0, min(a, b)), min(1.0, max(a, b))
            tip = f"<title>{escape(f'{cat} — {name}: {axis_label(v)}')}</title>"
            if c.horizontal:
                out.append(f'<rect x="{px + pw * a:.1f}" y="{py + off:.1f}" width="{pw * (b - a):.1f}" '
                           f'height="{bar - 1:.1f}" fill="{color}">{tip}</rect>')
            else:
                out.append(f'<rect x="{px + off:.1f}" y="{py + plot_h * (1 - b):.1f}" width="{bar - 1:.1f}" '
                           f'height="{plot_h * (b - a):.1f}" fill="{color}">{tip}</rect>')
        if c.horizontal:
            out.append(_text(px - 6, py + base + (band - 6) / 2 + 3, cat, 9, "end"))
        elif len(c.categories) > 8:
            cx, cy = px + base + (band - 6) / 2, py + plot_h + 12
            out.append(_text(cx, cy, cat, 9, "end", extra=f' transform="rotate(-30 {cx:.1f} {cy:.1f})"'))
        else:
            out.append(_text(px + base + (band - 6) / 2, py + plot_h + 14, cat, 9, "middle"))
    for k, (label, ref) in enumerate(c.reference):
        if not (lo <= ref <= top):
            continue
        col = TARGET if k == 0 else SERIES[(k + 3) % len(SERIES)]
        if c.horizontal:
            rx = px + pw * pos(ref)
            out.append(f'<line x1="{rx:.1f}" y1="{py:.1f}" x2="{rx:.1f}" y2="{py + plot_h:.1f}" stroke="{col}" '
                       'stroke-width="1.5" stroke-dasharray="4 3"/>')
        else:
            ry = py + plot_h * (1 - pos(ref))
            out.append(f'<line x1="{px:.1f}" y1="{ry:.1f}" x2="{px + pw:.1f}" y2="{ry:.1f}" stroke="{col}" '
                       'stroke-width="1.5" stroke-dasharray="4 3"/>')
    out.append(_text(px, height - 4, c.value_label, 9, fill=MUTED))
    out.append("</svg>")
    return "".join(out)


def _shade(v: float, vmax: float) -> str:
    if v <= 0 or vmax <= 0:
        return "#f4f6f8"
    f = min(1.0, v / vmax) ** 0.5
    lo, hi = (0.99, 0.93, 0.80), (0.70, 0.09, 0.11)
    r, g, b = (round(255 * (a + (z - a) * f)) for a, z in zip(lo, hi))
    return f"#{r:02x}{g:02x}{b:02x}"


def heatmap_svg(h: d.Heatmap) -> str:
    n_r, n_c = len(h.row_labels), len(h.col_labels)
    label_w = min(130.0, max([_approx_width(x, 8) for x in h.row_labels] + [24.0]) + 8)
    cell_h = 14.0 if n_r <= 30 else max(4.0, 420.0 / n_r)
    grid_w = WIDTH - label_w - 10
    cell_w = grid_w / max(1, n_c)
    top = 24.0
    height = top + n_r * cell_h + 56
    vmax = max([v for row in h.values for v in row] + [0.0])
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart heatmap" role="img" viewBox="0 0 {WIDTH:.0f} '
           f'{height:.0f}" width="100%" style="max-width:{WIDTH:.0f}px;{FONT}">',
           f"<title>{escape(h.title)}</title>", _text(0, 14, h.title, 12, weight="bold")]
    for i, row in enumerate(h.values):
        y = top + i * cell_h
        if cell_h >= 7:
            out.append(_text(label_w - 5, y + cell_h * 0.72, h.row_labels[i], min(8.0, cell_h * 0.8), "end"))
        for j, v in enumerate(row):
            out.append(f'<rect x="{label_w + j * cell_w:.2f}" y="{y:.2f}" width="{cell_w:.2f}" height="{cell_h:.2f}" '
                       f'fill="{_shade(v, vmax)}" stroke="#ffffff" stroke-width="{0.4 if cell_w > 3 else 0}">'
                       f"<title>{escape(f'{h.row_labels[i]} {h.col_labels[j]}: {axis_label(round(v, 1))}')}</title></rect>")
    every = max(1, int(30 / cell_w + 0.999))
    base = top + n_r * cell_h
    for j, lab in enumerate(h.col_labels):
        if j % every == 0:
            out.append(_text(label_w + j * cell_w + cell_w / 2, base + 11, lab, 8, "middle", MUTED))
    sx, sy = label_w, base + 24
    out.append(_text(sx, sy + 9, h.value_label + ":", 9, fill=MUTED))
    start = sx + _approx_width(h.value_label + ":", 9) + 8
    for k, v in enumerate((0.0, vmax * 0.05, vmax * 0.25, vmax * 0.5, vmax)):
        x = start + k * 64
        out.append(f'<rect x="{x:.1f}" y="{sy:.1f}" width="12" height="10" fill="{_shade(v, vmax)}" '
                   f'stroke="{RULE}" stroke-width="0.5"/>')
        out.append(_text(x + 16, sy + 9, axis_label(round(v, 1)), 9, fill=MUTED))
    out.append("</svg>")
    return "".join(out)
