"""Markdown and HTML renderers for `calculators.reports.doc.Document`.

Same blocks as the PDF. In Markdown charts become their data tables (`fallback`); in HTML
they are drawn as SVG (`calculators.reports.svg`, the same bars, lines and shading as the
PDF) with the data table under them, so both carry every figure the PDF shows.
"""

from __future__ import annotations

import html

from calculators.reports import doc as d


def _md(text: object) -> str:
    """Input text as Markdown text: raw HTML, javascript: links and control characters made
    harmless (slaschema.textsafe.md_text)."""
    from slaschema.textsafe import md_text

    return md_text(text)


def _md_cell(text: str) -> str:
    return "<br>".join(_md(line) for line in str(text).split("\n"))


def _md_table(t: d.Table) -> list[str]:
    align = t.align or tuple("l" for _ in t.header)
    marks = {"l": ":---", "r": "---:", "c": ":---:"}
    lines = ["| " + " | ".join(_md_cell(h) for h in t.header) + " |",
             "|" + "|".join(marks[a] for a in align) + "|"]
    marked = set(t.marks) | {(r, c) for r, c, _ in t.colors}
    for i, row in enumerate(t.rows):
        cells = [_md_cell(v) for v in row]
        for j, c in enumerate(cells):
            if (i, j) in t.marks:
                cells[j] = f"**{c}** ✓"
            elif (i, j) in marked and c:
                first, sep, rest = c.partition("<br>")
                cells[j] = f"**{first}**{sep}{rest}"
        if t.total_row and i == len(t.rows) - 1:
            cells = [f"**{c}**" if c else c for c in cells]
        lines.append("| " + " | ".join(cells) + " |")
    if t.caption:
        lines += ["", f"*{_md(t.caption)}*"]
    return lines


def render_markdown(document: d.Document) -> str:
    out: list[str] = [f"# {_md(document.title)}", ""]
    if document.watermark:
        out += [f"**{_md(document.watermark)}**", ""]
    out += [line for m in document.page_marks for line in (f"**{_md(m.text)}**", "")]
    if document.subtitle:
        out += [f"**{_md(document.subtitle)}**", ""]
    for k, v in document.cover:
        out.append(f"- **{_md(k)}:** {_md(v)}")
    if document.cover:
        out.append("")
    if document.toc:
        out += ["## Contents", ""]
        for b in document.blocks:
            if isinstance(b, d.Heading) and b.level <= 2:
                out.append(("  " * (b.level - 1)) + f"- {_md(b.text)}")
        out.append("")
    for b in document.blocks:
        if isinstance(b, d.Heading):
            out += ["#" * min(6, b.level + 1) + " " + _md(b.text), ""]
        elif isinstance(b, d.Para):
            text = _md(b.text)
            if b.style in ("strong", "warning"):
                text = f"**{text}**"
            elif b.style == "note":
                text = f"*{text}*"
            out += [text, ""]
        elif isinstance(b, d.Bullets):
            out += [f"- {_md(x)}" for x in b.items] + [""]
        elif isinstance(b, d.Table):
            out += _md_table(b) + [""]
        elif isinstance(b, d.KeyValues):
            out += [f"- **{_md(k)}:** {_md(v)}" for k, v in b.items] + [""]
        elif isinstance(b, d.Callout):
            out += [f"> **{_md(b.title)}**"] + [line for x in b.lines for line in (">", f"> {_md(x)}")] + [""]
        elif isinstance(b, (d.BarChart, d.Heatmap)):
            out += [f"**{_md(b.title)}**", ""] + _md_table(b.fallback) + [""]
        elif isinstance(b, d.PageBreak):
            continue
    out += ["---", "", f"*{_md(document.footer)}*", ""]
    if document.footer_note:
        out += [f"*{_md(document.footer_note)}*", ""]
    return "\n".join(out)


_CSS = """body{font-family:Helvetica,Arial,sans-serif;color:#1f2933;max-width:60em;margin:2em auto;padding:0 1em}
h1,h2,h3{color:#243b53}table{border-collapse:collapse;margin:.5em 0 1em;font-size:.85em}
th{background:#243b53;color:#fff;text-align:left;padding:.25em .5em}td{padding:.2em .5em;border-bottom:1px solid #cbd2d9}
td.r,th.r{text-align:right}td.best{background:#d5f0d5;font-weight:bold}.callout{border:2px solid;padding:.3em 1em;margin:1em 0}.callout p.title{font-size:1.4em;font-weight:bold}tr.warn td{background:#fde8e8}tr.total td{font-weight:bold;border-top:2px solid #1f2933}
.note{color:#616e7c;font-size:.85em}figure.chart{margin:1em 0}summary{color:#616e7c;font-size:.85em}.warning{color:#9b1c1c;font-weight:bold}footer{color:#616e7c;font-size:.8em;margin-top:2em}"""


def _marker(lang: str | None):
    """Escape text; text with non-ASCII letters is marked as written in the contract's language
    (names of the parties, the title, definitions), the rest is the report's English."""
    if not lang:
        return html.escape
    tag = html.escape(lang, quote=True)

    def mark(text: str) -> str:
        if text.isascii() or not any(c.isalpha() and ord(c) > 127 for c in text):
            return html.escape(text)
        return f'<span lang="{tag}">{html.escape(text)}</span>'
    return mark


def _html_table(t: d.Table, e=html.escape) -> list[str]:
    align = t.align or tuple("l" for _ in t.header)
    lines = ["<table>", "<tr>" + "".join(f'<th class="{a}">{e(h)}</th>' for a, h in zip(align, t.header)) + "</tr>"]
    tinted = {(r, c): col for r, c, col in t.colors}

    def cell(i: int, j: int, a: str, v: object) -> str:
        if (i, j) not in t.marks and (i, j) not in tinted:
            return f'<td class="{a}">{e(str(v))}</td>'
        text = "<br>".join(e(line) for line in str(v).split("\n"))
        if (i, j) in t.marks:
            return f'<td class="{a} best">{text} ✓</td>'
        first, sep, rest = text.partition("<br>")
        color = html.escape(tinted[(i, j)], quote=True)
        text = f'<strong style="color:{color}">{first}</strong>{sep}{rest}'
        return f'<td class="{a}">{text}</td>'
    for i, row in enumerate(t.rows):
        cls = []
        if i in t.highlight:
            cls.append("warn")
        if t.total_row and i == len(t.rows) - 1:
            cls.append("total")
        attr = f' class="{" ".join(cls)}"' if cls else ""
        lines.append(f"<tr{attr}>" + "".join(cell(i, j, a, v) for j, (a, v) in enumerate(zip(align, row)))
                     + "</tr>")
    lines.append("</table>")
    if t.caption:
        lines.append(f'<p class="note">{e(t.caption)}</p>')
    return lines


def render_html(document: d.Document) -> str:
    e = html.escape
    m = _marker(document.lang)
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">', f"<title>{e(document.title)}</title>"]
    if document.lang:
        out.append(f'<meta name="contract-language" content="{e(document.lang)}">')
    out += [f"<style>{_CSS}</style></head><body>"]
    if document.watermark:
        out.append(f'<p class="warning">{e(document.watermark)}</p>')
    for pm in document.page_marks:
        out.append(f'<p class="warning" style="color:{e(pm.color)}">{e(pm.text)}</p>')
    out.append(f"<h1>{m(document.title)}</h1>")
    if document.subtitle:
        out.append(f"<p><strong>{m(document.subtitle)}</strong></p>")
    if document.cover:
        out.append("<ul>" + "".join(f"<li><strong>{e(k)}:</strong> {m(v)}</li>" for k, v in document.cover) + "</ul>")
    n = 0
    toc: list[str] = []
    body: list[str] = []
    for b in document.blocks:
        if isinstance(b, d.Heading):
            n += 1
            level = min(6, b.level + 1)
            body.append(f'<h{level} id="s{n}">{e(b.text)}</h{level}>')
            if b.level <= 2:
                toc.append(f'<li style="margin-left:{(b.level - 1) * 1.5}em"><a href="#s{n}">{e(b.text)}</a></li>')
        elif isinstance(b, d.Para):
            cls = {"note": "note", "small": "note", "warning": "warning"}.get(b.style)
            text = f"<strong>{e(b.text)}</strong>" if b.style == "strong" else e(b.text)
            body.append(f'<p class="{cls}">{text}</p>' if cls else f"<p>{text}</p>")
        elif isinstance(b, d.Bullets):
            body.append("<ul>" + "".join(f"<li>{e(x)}</li>" for x in b.items) + "</ul>")
        elif isinstance(b, d.Table):
            body += _html_table(b, m)
        elif isinstance(b, d.KeyValues):
            body.append("<ul>" + "".join(f"<li><strong>{e(k)}:</strong> {m(v)}</li>" for k, v in b.items) + "</ul>")
        elif isinstance(b, d.Callout):
            color = e(b.color)
            body.append(f'<div class="callout" style="border-color:{color}">'
                        f'<p class="title" style="color:{color}">{e(b.title)}</p>'
                        + "".join(f"<p>{m(x)}</p>" for x in b.lines) + "</div>")
        elif isinstance(b, (d.BarChart, d.Heatmap)):
            from calculators.reports.svg import bar_chart_svg, heatmap_svg

            body.append('<figure class="chart">'
                        + (bar_chart_svg(b) if isinstance(b, d.BarChart) else heatmap_svg(b)))
            body.append(f"<figcaption><details><summary>{e(b.title)}: the figures</summary>")
            body += _html_table(b.fallback)
            body.append("</details></figcaption></figure>")
    if document.toc and toc:
        out += ["<h2>Contents</h2>", '<ul style="list-style:none;padding-left:0">'] + toc + ["</ul>"]
    out += body
    note = f"<br>{e(document.footer_note)}" if document.footer_note else ""
    out += [f"<footer>{e(document.footer)}{note}</footer>", "</body></html>", ""]
    return "\n".join(out)
