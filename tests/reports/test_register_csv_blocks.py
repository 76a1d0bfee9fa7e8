"""The register CSV is written a block of rows at a time: the bytes do not depend on the block
size, and a cell that needs guarding is guarded whichever block it falls in."""

from __future__ import annotations

import csv
import io

from calculators.engine import compute
from calculators.reports.review_model import review_extras
from tests.calculators.helpers import EXAMPLE_CONTRACT, contract, inc, log


def _register():
    lc = contract(EXAMPLE_CONTRACT)
    recs = [inc(f"i{k:02d}", f"n{k % 4 + 1}", f"2027-02-{k + 1:02d}T01:00:00Z", f"2027-02-{k + 1:02d}T02:30:00Z",
                cause=f"cause {k}") for k in range(9)]
    recs[4]["cause"] = "=HYPERLINK(\"x\")"                       # a formula, in the second block of 3
    recs[7]["cause"] = "fan\u202eFAIL"                            # a bidi override, in the third
    recs[8]["ticket"] = "+1 555"
    recs.append(inc("open", "n[1-2]", "2027-02-27T00:00:00Z", None))
    return review_extras(compute(lc, log(lc, recs), ["2027-02"], incidents=True)).incidents


def test_register_csv_is_the_same_for_any_block_size():
    reg = _register()
    whole = reg.to_csv()
    assert len(reg) == 10
    for block in (1, 3, 4, 10, 11):
        assert reg.to_csv(block=block) == whole
    rows = list(csv.reader(io.StringIO(whole.decode("utf-8"))))
    assert len(rows) == 11 and rows[0][0] == "id"
    by_id = {r[0]: r for r in rows[1:]}
    assert by_id["i04"][13] == "'=HYPERLINK(\"x\")"
    assert by_id["i07"][13] == "fan<U+202E>FAIL"
    assert by_id["i08"][14] == "'+1 555"
    assert by_id["open"][2] == "n[1-2]" and by_id["open"][8] == "" and by_id["open"][12] == "open_incident"


def test_empty_register_csv_is_the_header():
    lc = contract(EXAMPLE_CONTRACT)
    reg = review_extras(compute(lc, log(lc, []), ["2027-02"], incidents=True)).incidents
    assert reg.to_csv(block=2) == (b"id,scope,target,units,category,impact,severity,start,end,counted_seconds,"
                                   b"downtime_seconds,excluded_seconds,flags,cause,ticket\n")
