"""Every CSV slakit writes shows what a terminal or a spreadsheet would act on: ESC and the
other C0/C1 controls, bidi overrides, zero-width characters are written as `<U+hhhh>` (the
table drops them), after which the formula rule (`=`, `+`, `-`, `@`, TAB, CR -> leading `'`)
applies. Amounts are not touched: the credits CSV still sums exactly."""

from __future__ import annotations

import csv
import io
import re
import tarfile
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from slaschema.textsafe import csv_cell, csv_column, csv_uncell
from tests.hostile.conftest import cli

REPO = Path(__file__).resolve().parents[2]
CONTRACT = REPO / "examples" / "gb200-contract.yaml"
LOG = REPO / "examples" / "gb200-incidents-2027Q1.csv"

# an OSC 8 hyperlink, a CSI colour, a C1 CSI, BEL, a right-to-left override, a zero-width space
HOSTILE_ID = "I1\x1b]8;;http://evil.example\x07click\x1b]8;;\x07\x1b[31mred\x9b2J\u202eevil\u200b"
HOSTILE_CAUSE = "=HYPERLINK(\"http://evil.example\")\x1b[2J\rmasked"
HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")


def _cells(text: str) -> list[str]:
    return [c for row in csv.reader(io.StringIO(text)) for c in row]


def _assert_safe(text: str) -> None:
    """No hidden character anywhere in the file, no cell a spreadsheet would run."""
    bad = [c for c in _cells(text) if HIDDEN.search(c)]
    assert bad == [], bad
    formulas = [c for c in _cells(text) if c and c[0] in "=+-@\t\r" and not re.fullmatch(r"[-+]?[\d.]+%?", c)]
    assert formulas == [], formulas


def test_cell_rule_shows_hidden_characters_then_guards_formulas():
    assert csv_cell("a\x1b[31mb") == "a<U+001B>[31mb"
    assert csv_cell("\x9b2J") == "<U+009B>2J"
    assert csv_cell("abc\u202edef") == "abc<U+202E>def"
    assert csv_cell("x\u200by") == "x<U+200B>y"
    assert csv_cell("\r=1+1") == "<U+000D>=1+1"          # a lone CR would hide text before it
    assert csv_cell("line one\r\nline two") == "line one\nline two"
    assert csv_cell("tab\tand\nnewline") == "tab\tand\nnewline"
    assert csv_cell("=1+\x1b") == "'=1+<U+001B>"
    assert csv_cell("\x00=1") == "<U+0000>=1"
    assert csv_cell("-12.50") == "-12.50" and csv_cell(Decimal("-1")) == Decimal("-1")
    assert csv_cell("ordinary text, ümlaut, 日本") == "ordinary text, ümlaut, 日本"
    assert csv_column(["a\x1b", "=x", "-3", 7, None, ""]) == ["a<U+001B>", "'=x", "-3", 7, None, ""]


class _Text(str):
    """A str subclass (numpy's str_ is one): a text for the CSV rule."""


_CELLS = st.one_of(
    st.text(alphabet=st.sampled_from(list("ab=+-@'.1e%\t\n\r\x1b\u202e\u200b ")), max_size=6),
    st.none(), st.integers(-5, 5), st.floats(allow_nan=False, width=16), st.sampled_from(["-12.50", "+1", "=A1"]),
    st.text(alphabet="ab=\n", max_size=4).map(_Text))


@given(st.lists(_CELLS, max_size=30))
def test_csv_column_is_csv_cell_of_each_value(values):
    """The column fast path (one search over the joined texts) gives what the rule gives cell
    by cell, whatever mix of texts, numbers and None a column holds; a newline inside a cell
    followed by a formula character is no formula start."""
    got = csv_column(values)
    assert got == [csv_cell(v) for v in values]
    assert [type(v) for v in got] == [type(csv_cell(v)) for v in values]


def test_csv_column_sees_formula_starts_and_hidden_characters_in_any_cell():
    ids = [f"INC-{i}" for i in range(1000)]
    assert csv_column(ids) == ids
    assert csv_column(ids + ["=cmd"])[-1] == "'=cmd" and csv_column(["=cmd"] + ids)[0] == "'=cmd"
    assert csv_column(ids + ["a\n=b"])[-1] == "a\n=b"              # not at the cell's start
    assert csv_column([None] * 5 + ["\tx"]) == [None] * 5 + ["'\tx"]
    assert csv_column([1, 2, "x\x1b"]) == [1, 2, "x<U+001B>"]


def test_a_number_followed_by_a_line_end_is_no_number():
    # (a regex's "$" matches before a final newline: "-0\n" passed for the number -0)
    assert csv_cell("-0\n") == "'-0\n" and csv_cell("+1\n") == "'+1\n"
    assert csv_cell("-0") == "-0" and csv_column(["-1.5e3%", "-1\n"]) == ["-1.5e3%", "'-1\n"]


@given(st.text(alphabet=st.sampled_from(list("ab=+-@'<>U0\t\n\r\x1b\x07\x9b\u202e\u200b\ufeff1B")), max_size=12))
def test_cell_rule_is_idempotent_and_leaves_nothing_hidden(text):
    once = csv_cell(text)
    assert csv_cell(once) == once
    assert not HIDDEN.search(once)
    assert not (once and once[0] in "=+-@\t\r" and not re.fullmatch(r"[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?%?",
                                                                      once))


@given(st.text(alphabet=st.sampled_from(list("ab=+-@<>U0\t\n\x1b\x07\x9b\u202e\u200b\ufeff1B")), max_size=12))
def test_uncell_gives_back_what_cell_was_given(text):
    # (a text starting with `'` then a formula character, a literal `<U+001B>`, or a CR
    # cannot be told from what csv_cell writes; the alphabet leaves them out)
    if "<U+" in text:
        return
    assert csv_uncell(csv_cell(text)) == text


def _hostile_log(tmp_path: Path) -> Path:
    rows = list(csv.reader(LOG.open(encoding="utf-8")))
    header = rows[0]
    for row in rows[1:]:                    # every id: whichever incident a file lists carries them
        row[header.index("id")] = HOSTILE_ID + "-" + row[header.index("id")]
        row[header.index("cause")] = HOSTILE_CAUSE
    p = tmp_path / "log.csv"
    with p.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    return p


def test_credits_csv_shows_escapes_and_still_sums_exactly(tmp_path):
    log = _hostile_log(tmp_path)
    r = cli("credits", CONTRACT, log, "--quarter", "2027-Q1", "--format", "csv")
    assert r.exit_code == 0, r.output
    _assert_safe(r.stdout)
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    shown = [x["incidents"] for x in rows if "I1<U+001B>" in x["incidents"]]
    assert shown, "the hostile id is in no incidents cell"
    assert "<U+0007>" in shown[0] and "<U+202E>" in shown[0] and "<U+009B>" in shown[0]
    for month in ("2027-01", "2027-02", "2027-03"):
        nodes = [Decimal(x["settled_credit"]) for x in rows if x["period"] == month and x["row"] == "node"]
        total = [Decimal(x["credit_owed"]) for x in rows if x["period"] == month and x["row"] == "total"]
        assert len(total) == 1 and sum(nodes, Decimal(0)) == total[0]
    # the same ids in the table: the characters are dropped there (a terminal shows no <U+...>)
    table = cli("credits", CONTRACT, log, "--quarter", "2027-Q1").stdout
    assert not HIDDEN.search(table)

    raw = cli("--raw-csv", "credits", CONTRACT, log, "--quarter", "2027-Q1", "--format", "csv")
    assert "\x1b]8;;" in raw.stdout          # --raw-csv: as the log has it


def test_review_register_csv_shows_escapes(tmp_path):
    out = tmp_path / "review.pdf"
    r = cli("review", CONTRACT, _hostile_log(tmp_path), "--month", "2027-01", "-o", out, "--register-limit", "1")
    assert r.exit_code == 0, r.output
    register = (tmp_path / "review.incidents.csv").read_text(encoding="utf-8")
    _assert_safe(register)
    assert "I1<U+001B>]8;;" in register
    _assert_safe((tmp_path / "review.node-credits.csv").read_text(encoding="utf-8"))


def test_claim_package_claimed_csv_shows_escapes(tmp_path):
    out = tmp_path / "claim.pdf"
    r = cli("claim", CONTRACT, _hostile_log(tmp_path), "--month", "2027-01", "-o", out,
            "--as-of", "2027-02-05T00:00:00Z")
    assert r.exit_code == 0, r.output
    packages = list(tmp_path.glob("*.tar"))
    assert len(packages) == 1, list(tmp_path.iterdir())
    with tarfile.open(packages[0]) as tar:
        claimed = tar.extractfile("incidents/claimed.csv").read().decode("utf-8")
        excerpt = tar.extractfile("incidents/log.csv").read().decode("utf-8")
    _assert_safe(claimed)
    assert "I1<U+001B>]8;;" in claimed
    assert HOSTILE_ID + "-" in excerpt            # the provider's rows themselves are copied byte for byte


def test_import_slurm_events_output_shows_escapes(tmp_path):
    events = tmp_path / "events.txt"
    events.write_text("Cluster|NodeName|TimeStart|TimeEnd|State|Reason|User\n"
                      "c1|r01-n01|2027-01-05T03:00:00|2027-01-05T04:00:00|DOWN|"
                      "=cmd /C calc \x1b]0;pwn\x07|root(0)\n", encoding="utf-8")
    r = cli("import", "slurm-events", events, "--assume-tz", "UTC")
    assert r.exit_code == 0, r.output
    _assert_safe(r.stdout)
    assert "<U+001B>]0;pwn<U+0007>" in r.stdout


def test_claims_ledger_round_trips_neutralised_cells(tmp_path):
    from calculators.claim_ledger import LedgerRow, read_ledger, write_ledger

    row = LedgerRow(line=1, contract="=HYPERLINK(\"x\")\x1b[31m", month="2027-01", amount_claimed=Decimal("12.00"),
                    currency="USD", due=None, filed=None, reference="@ref\u202e", answer="", amount_accepted=None,
                    amount_paid=Decimal("0"), paid_on=None, note="-see mail\x07")
    path = tmp_path / "claims.csv"
    write_ledger(path, [row])
    text = path.read_text(encoding="utf-8")
    _assert_safe(text)
    back = read_ledger(path)
    assert [(b.contract, b.reference, b.note) for b in back] == [(row.contract, row.reference, row.note)]


@pytest.mark.parametrize("value", ["'plain", "<U+0041>", "'-1.5"])
def test_uncell_leaves_what_cell_never_writes(value):
    assert csv_uncell(value) == value


def test_performance_log_rows_are_neutralised_and_still_close(tmp_path):
    from datetime import datetime, timezone

    from acceptance.performance_log import Measurement, apply, read_rows, write_rows

    path = tmp_path / "perf.csv"
    level = "gemm\x1b]0;pwn\x07"
    t0, t1 = datetime(2027, 2, 1, tzinfo=timezone.utc), datetime(2027, 2, 2, tzinfo=timezone.utc)
    header, rows = read_rows(path)
    rows, changes = apply(rows, [Measurement(level, "=n1", 1.0, Decimal("2"), t0)])
    assert [c.kind for c in changes] == ["opened"]
    write_rows(path, header, rows)
    _assert_safe(path.read_text(encoding="utf-8"))
    header, rows = read_rows(path)
    rows, changes = apply(rows, [Measurement(level, "=n1", 3.0, Decimal("2"), t1)])
    assert [c.kind for c in changes] == ["closed"] and len(rows) == 1       # the row written before is found


def test_watch_log_update_finds_its_own_neutralised_row(tmp_path):
    from datetime import datetime, timezone

    from calculators.watch import Incident, update_log

    path = tmp_path / "watch.csv"
    t0 = datetime(2027, 2, 1, tzinfo=timezone.utc)
    opened = Incident("r01-n01\x1b[2J-20270201T000000Z", "r01-n01\x1b[2J", t0, None, "@reason\x07", t0)
    update_log(path, [opened])
    _assert_safe(path.read_text(encoding="utf-8"))
    closed = Incident(opened.id, opened.node, t0, datetime(2027, 2, 1, 1, tzinfo=timezone.utc), "@reason\x07", t0)
    update_log(path, [closed])
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    assert len(rows) == 1 and rows[0]["end"] == "2027-02-01T01:00:00Z"
