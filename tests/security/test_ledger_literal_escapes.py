"""The claims ledger is the one CSV slakit writes and reads back: every text it was given
must come back as it was, including texts that look like what the CSV rule writes (a
literal `<U+001B>` typed by a user, a leading `'` before a formula character)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from slaschema.textsafe import _NUMBER, csv_cell, csv_exact, csv_uncell


def _row(**kw):
    from calculators.claim_ledger import LedgerRow

    base = dict(line=1, contract="C-1", month="2027-01", amount_claimed=Decimal("12.00"), currency="USD",
                due=None, filed=None, reference="", answer="", amount_accepted=None,
                amount_paid=Decimal("0"), paid_on=None, note="")
    base.update(kw)
    return LedgerRow(**base)


LOOKALIKES = ["<U+001B>", "a<U+001B>b", "<U+003C>U+001B>", "'=SUM(A1)", "''x", "'-see", "<U+202E>",
              "x\x1b<U+001B>", "<<U+0007>>", "'<U+000D>", "line\r\nbreak", "cr\ronly"]


@pytest.mark.parametrize("text", LOOKALIKES)
def test_ledger_gives_back_lookalike_texts(tmp_path, text):
    from calculators.claim_ledger import read_ledger, write_ledger

    path = tmp_path / "claims.csv"
    row = _row(contract="C" + text, reference=text, note=text)
    write_ledger(path, [row])
    back = read_ledger(path)
    assert [(b.contract, b.reference, b.note) for b in back] == [(row.contract, text, text)]


def test_ids_differing_by_literal_escape_or_hidden_character_stay_two_rows(tmp_path):
    from calculators.claim_ledger import read_ledger, write_ledger

    path = tmp_path / "claims.csv"
    rows = [_row(contract="C\x1b"), _row(contract="C<U+001B>")]
    write_ledger(path, rows)
    back = read_ledger(path)                      # two rows, not one duplicate (contract, month)
    assert sorted(b.contract for b in back) == sorted(["C\x1b", "C<U+001B>"])


@given(st.text(alphabet=st.sampled_from(list("ab=+-@'<>U+0\t\n\r\x1b\x07\x9b\u202e\u200b\ufeff1B3C")), max_size=14))
@example("-0")
@example("=0")
def test_exact_cell_round_trips_and_hides_nothing(text):
    cell = csv_exact(text)
    assert csv_uncell(cell) == text
    assert not any(c in cell for c in "\x1b\x07\x9b\u202e\u200b\ufeff\r")
    # a cell may start like a formula only when it is a plain number (-12.50 stays a number,
    # as the CSV rule writes it: test_exact_cell_writes_plain_texts_like_the_csv_rule)
    assert not (cell and cell[0] in "=+-@\t\r" and not _NUMBER.match(cell))


def test_exact_cell_writes_plain_texts_like_the_csv_rule():
    for text in ["plain", "=1+1", "-12.50", "a\x1bb", "<U+0041>", "'plain"]:
        assert csv_exact(text) == csv_cell(text)
