"""`slakit draft` (the SLA schedule) and `slakit review` (the SLA review)."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import click

FORMATS = ("pdf", "md", "html")


def _format_for(output: str, fmt: str | None) -> str:
    if fmt:
        return fmt
    suffix = Path(output).suffix.lower().lstrip(".")
    return {"markdown": "md", "htm": "html"}.get(suffix, suffix) if suffix in FORMATS + ("markdown", "htm") else "pdf"


def write_atomic(path: str | Path, data: bytes) -> None:
    """Write `data` to `path` via a temporary file in the same folder and os.replace."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", dir=p.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def render(document, fmt: str) -> bytes:
    if fmt == "pdf":
        from calculators.reports.pdf import render_pdf

        return render_pdf(document)
    from calculators.reports.text import render_html, render_markdown

    text = render_markdown(document) if fmt == "md" else render_html(document)
    return text.encode("utf-8")


@click.command()
@click.argument("contract", type=click.Path(dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="Output file; .pdf, .md or .html picks the format.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default=None,
              help="Output format (default: from the file name, else pdf).")
def draft(contract: str, output: str, fmt: str | None) -> None:
    """Write the SLA schedule of CONTRACT: every clause as plain sentences, from the contract itself.

    The footer of every page carries the contract's SHA-256 and the slakit version, so both
    parties can check they signed the same terms. Builds are byte-identical
    (set SOURCE_DATE_EPOCH to fix the PDF creation date; default 2000-01-01).
    """
    from calculators.reports.schedule import schedule_document
    from slakit import __version__
    from slaschema.cli import load_or_exit

    lc = load_or_exit(contract)
    fmt = _format_for(output, fmt)
    data = render(schedule_document(lc, __version__), fmt)
    write_atomic(output, data)
    click.echo(f"{output}: SLA schedule for {lc.id} ({fmt}, {len(data):,} bytes, contract sha256 {lc.sha256[:12]})")


def register(group: click.Group) -> None:
    group.add_command(draft)
