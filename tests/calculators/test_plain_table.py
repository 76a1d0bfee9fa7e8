"""`calculators.plain_table` writes the text Rich writes for the same table, and the credits
table (`render_table`) is the text Rich lays out, on several results."""

from __future__ import annotations

import io
import random

import pytest
from rich.console import Console

from slaschema.plain_table import PlainTable

WORDS = ["n1", "c1-r001-n02", "INC-1736,", "notice_not_met", "open_incident", "99.9523", "12600", "é-node",
         "日本-ノード", "x" * 30, "a", "", "exclusion_cap_exceeded", "+12", "NO", "yes", "1234567.89", "—", "…"]


def rich_text(t: PlainTable, width: int = 120) -> str:
    buf = io.StringIO()
    Console(file=buf, width=width, force_terminal=False, color_system=None).print(t.rich())
    return buf.getvalue()


def random_table(rng: random.Random) -> PlainTable:
    n_cols = rng.randint(1, 11)
    title = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 30))) or None
    t = PlainTable(title=title)
    for k in range(n_cols):
        t.add_column(rng.choice(["id", "downtime s", "availability %", "incidents", "flags", "note", "claim due"]),
                     justify=rng.choice(["left", "right"]), no_wrap=rng.random() < 0.2)
    for _ in range(rng.randint(0, 8)):
        t.add_row(*(" ".join(rng.choice(WORDS) for _ in range(rng.choice([0, 1, 1, 2, 5, 14])))
                    for _ in range(n_cols)))
    return t


@pytest.mark.parametrize("seed", range(300))
def test_random_tables_match_rich(seed):
    rng = random.Random(seed)
    t = random_table(rng)
    width = rng.choice([120, 120, 80, 160])
    assert t.plain()
    assert t.text(width) == rich_text(t, width)


def test_wide_cells_wrap_and_crop_like_rich():
    t = PlainTable(title="2027-01 — node: 12600 of 12600 with downtime; 12600 below target 99.0%")
    for col in ("id", "downtime s", "excluded s", "availability %", "met", "credit %", "credit", "incidents", "flags"):
        t.add_column(col, justify="right" if col.endswith(("s", "%", "credit")) else "left")
    t.add_row("c1-r001-n02", "294548", "22004", "89.0028", "NO", "100", "9672.00",
              "INC-1, INC-22, INC-333, INC-4444 +31", "notice_not_met exclusion_cap_exceeded unknown_category open_incident")
    t.add_row("日本-ノード-" * 4, "268830.25", "0", "100.0000", "yes", "0", "0.00", "", "")
    t.add_row("y" * 140, "1", "2", "3", "NO", "4", "5", "z" * 90, "open_incident")
    assert t.text() == rich_text(t)


def test_markup_and_emoji_codes_are_left_to_rich():
    for text in ("a[b]", "x:fire:y", "tab\there", "bell\x07"):
        t = PlainTable()
        t.add_column("id")
        t.add_row(text)
        assert not t.plain()
    t = PlainTable()
    t.add_column("claim due")
    t.add_row("2027-03-31 00:00 CDT")
    assert t.plain() and t.text() == rich_text(t)


def _both(result, monkeypatch):
    """render_table as written (plain text) and with every table laid out by Rich."""
    from calculators.cli import render_table
    from slaschema.plain_table import PlainTable as P

    fast = render_table(result)
    with monkeypatch.context() as m:
        m.setattr(P, "print", lambda self, console: console.print(self.rich()))
        slow = render_table(result)
    return fast, slow


def test_credits_tables_are_rich_s_layout(monkeypatch):
    """On the example (claims columns), the revision 1.1 fixture (service and not-charged
    columns) and a small fleet with unicode incident ids and long incident and flag cells."""
    from pathlib import Path

    from calculators.engine import compute
    from calculators.incidents import load_incidents
    from slaschema.loader import load_contract
    from tests.calculators.helpers import contract, inc, log
    from tests.calculators.test_rules import HEAD, NODE_TIERS, t, topo

    root = Path(__file__).resolve().parents[2]
    results = []
    for c, lg in (("examples/gb200-contract.yaml", "examples/gb200-incidents-2027Q1.csv"),
                  ("tests/fixtures/rev11-contract.yaml", "tests/fixtures/rev11-incidents.csv")):
        lc = load_contract(str(root / c))
        results.append(compute(lc, load_incidents(str(root / lg), lc), ["2027-Q1"]))
    lc = contract(HEAD + topo({"r1": "n[1-9]", "r2": "m[1-9]"}) + NODE_TIERS)
    recs = [inc(f"障害-{k:03d}-ÉVÉNEMENT-très-long-identifiant", f"n{k % 9 + 1}", t(k % 20 + 1, k % 23), t(k % 20 + 1, 23))
            for k in range(60)]
    recs += [inc("late", "m1", t(2, 0), t(2, 9), category="maintenance", notice_at=t(1, 23))]
    results.append(compute(lc, log(lc, recs), ["2027-02"]))
    for res in results:
        fast, slow = _both(res, monkeypatch)
        assert fast == slow
    assert "claim due" in _both(results[0], monkeypatch)[0] and "not charged" in _both(results[1], monkeypatch)[0]
    assert "障害-" in _both(results[2], monkeypatch)[0]


# --- the lines between the tables: `PlainConsole` against Rich's console --------------------

LINE_PIECES = ["[bold]", "[/]", "[yellow]", "[bold red]", "[red]", "[/bold]", "[italic]", "[b]", "[link=x]",
               "\\[bold]", "\\", "[", "]", "a[b]", ":fire:", ":00:", "x:smile:y", "2027-03-31T00:00:00Z", "—", "…",
               "日本-ノード", "é", "\t", "\x07", "\u200b", " ", "  ", "credits in EUR", "INC-1736,", "c1-r001-n02",
               "x" * 40, "Chronic failure: termination right", "open incidents, counted until as_of:"]


def rich_line(markup: str, width: int, emoji: bool) -> str:
    buf = io.StringIO()
    Console(file=buf, width=width, force_terminal=False, color_system=None).print(markup, emoji=emoji)
    return buf.getvalue()


def plain_console_line(markup: str, width: int, emoji: bool) -> str:
    from slaschema.plain_table import PlainConsole

    buf = io.StringIO()
    PlainConsole(buf, width=width).print(markup, emoji=emoji)
    return buf.getvalue()


@pytest.mark.parametrize("seed", range(400))
def test_plain_console_prints_what_rich_prints(seed):
    from rich.errors import MarkupError

    rng = random.Random(seed)
    markup = "".join(rng.choice(LINE_PIECES) for _ in range(rng.randint(0, 12)))
    width, emoji = rng.choice([120, 120, 40, 80]), rng.random() < 0.7
    try:
        expected = rich_line(markup, width, emoji)
    except MarkupError:                     # a closing tag with nothing open: Rich's error, both ways
        with pytest.raises(MarkupError):
            plain_console_line(markup, width, emoji)
        return
    assert plain_console_line(markup, width, emoji) == expected


def test_plain_console_writes_the_simple_lines_itself_and_leaves_the_rest_to_rich():
    from slaschema.plain_table import plain_line

    assert plain_line("[bold]ctr-1[/] — credits in EUR, months in UTC") == "ctr-1 — credits in EUR, months in UTC"
    assert plain_line("[bold red]Chronic failure: termination right[/] for n1, n2") == (
        "Chronic failure: termination right for n1, n2")
    assert plain_line("as_of 2027-03-31T00:00:00Z") == "as_of 2027-03-31T00:00:00Z"   # not an emoji name
    for markup in ("[/]closing first", "x[italic]y", "a\\[bold]b", "tab\there", "bell\x07", "x:fire:y", "[link=x]y"):
        assert plain_line(markup) is None, markup
    assert plain_line("x:fire:y", emoji=False) == "x:fire:y"
    # Rich looks for emoji codes piece by piece between the tags: "::fire:" joined would hide it
    assert plain_line("as_of:[yellow]:fire:[/]") is None
    # a line wider than the console is wrapped by Rich
    long = "word " * 40
    assert plain_console_line(long, 120, True) == rich_line(long, 120, True) and "\n" in rich_line(long, 120, True)[:-1]


@pytest.mark.parametrize("seed", range(200))
def test_rich_text_escapes_as_rich_does(seed):
    from rich.markup import escape

    from slaschema.textsafe import rich_text, terminal_text

    rng = random.Random(seed)
    text = "".join(rng.choice(["a", "[", "]", "\\", "[bold]", "b", " ", "[/]", "\\\\", "é"]) for _ in range(rng.randint(0, 10)))
    assert rich_text(text) == escape(terminal_text(text))
