"""`slaschema.plain_table` on claim-ledger-like tables (short cells, right-aligned money, unicode,
markup-like text, titles wider than the table) prints what Rich prints."""

from __future__ import annotations

import io
import random

import pytest
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from slaschema.plain_table import PlainTable

WORDS = ["", "a", "n1", "2027-02", "1,234.50 USD", "—", "résumé", "中文", "x[y]", "to file", "lapsed 3 days ago"]


def rich(title, headers, rows, right, width):
    buf = io.StringIO()
    t = Table(title=title)
    for j, h in enumerate(headers):
        t.add_column(h, justify="right" if j in right else "left")
    for r in rows:
        t.add_row(*(escape(c) for c in r))
    Console(file=buf, width=width, force_terminal=False, color_system=None).print(t)
    return buf.getvalue()


def plain(title, headers, rows, right, width):
    buf = io.StringIO()
    t = PlainTable(title=title)
    for j, h in enumerate(headers):
        t.add_column(h, justify="right" if j in right else "left")
    for r in rows:
        t.add_row(*r)
    t.print(Console(file=buf, width=width, force_terminal=False, color_system=None))
    return buf.getvalue()


@pytest.mark.parametrize("seed", range(60))
def test_the_same_text_as_rich(seed):
    rnd = random.Random(seed)
    n = rnd.randint(1, 6)
    headers = [rnd.choice(["contract", "month", "claimed", "state", "x"]) for _ in range(n)]
    rows = [[rnd.choice(WORDS) for _ in range(n)] for _ in range(rnd.randint(0, 12))]
    right = {j for j in range(n) if rnd.random() < 0.4}
    title = rnd.choice([None, "Claims", "Claims in ledger.csv as of 2027-04-01T00:00:00Z"])
    width = rnd.choice([40, 80, 140])
    assert plain(title, headers, rows, right, width) == rich(title, headers, rows, right, width)


def test_times_and_emoji_like_text():
    """A timestamp's colons are no emoji code (plain text); a real code is left to Rich."""
    t = PlainTable(title="t")
    for h in ("due", "note", "x"):
        t.add_column(h)
    t.add_row("2030-01-01T00:00:00Z", ":smile:", "a:b:c")
    assert not t.plain()
    t2 = PlainTable()
    t2.add_column("due")
    t2.add_row("2030-01-01T00:00:00Z")
    assert t2.plain()
    cells = [["2030-01-01T00:00:00Z"]]
    assert plain(None, ["due"], cells, set(), 80) == rich(None, ["due"], cells, set(), 80)
