"""slaschema.boxtable draws the text Rich draws for the same table, or declines."""

from __future__ import annotations

import io
import random

import pytest
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from slaschema.boxtable import box_table

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


@pytest.mark.parametrize("seed", range(40))
def test_the_same_text_as_rich(seed):
    rnd = random.Random(seed)
    n = rnd.randint(1, 6)
    headers = [rnd.choice(["contract", "month", "claimed", "state", "x"]) for _ in range(n)]
    rows = [[rnd.choice(WORDS) for _ in range(n)] for _ in range(rnd.randint(0, 12))]
    right = {j for j in range(n) if rnd.random() < 0.4}
    title = rnd.choice([None, "Claims", "Claims in ledger.csv as of 2027-04-01T00:00:00Z"])
    text = box_table(title, headers, rows, right=right, width=140)
    if text is None:                     # the title is wider than the table: Rich wraps it
        assert title is not None and len(title) > sum(max([len(h)] + [len(r[j]) for r in rows]) + 3
                                                       for j, h in enumerate(headers)) + 1
    else:
        assert text == rich(title, headers, rows, right, 140)


def test_declines_what_rich_would_wrap():
    assert box_table(None, ["a"], [["x" * 200]], width=140) is None
    assert box_table(None, ["a"], [["two\nlines"]], width=140) is None
    assert box_table("t", ["a"], [["x"]], width=140) is not None
