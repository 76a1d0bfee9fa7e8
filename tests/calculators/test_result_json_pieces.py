"""The credits JSON document in pieces: `document_chunks`, the batches `write_json` hands on
and what `slakit credits --format json` writes (to a file or stdout) are the document byte
for byte; the column-wise number texts are the per-unit ones."""

from __future__ import annotations

import random
from decimal import Decimal
from pathlib import Path

from click.testing import CliRunner

from calculators import credits as cr
from calculators.engine import compute
from calculators.result_json import NamesInfo, _number, document_bytes, document_chunks, downtime_texts
from slakit.cli import main
from tests.calculators.test_result_json import example, reference
from tests.calculators.test_rules import HEAD, NODE_TIERS, t, topo
from tests.calculators.helpers import contract, inc, log

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "fixtures" / "golden" / "example-credits-2027Q1.json"


def per_unit(lnum, dn):
    return [_number(cr.downtime_value(int(x), int(d))) for x, d in zip(lnum, dn)]


def test_downtime_texts_are_the_decimal_figures():
    rng = random.Random(7)
    lnum = [rng.randrange(0, 10**9) for _ in range(5000)] + [0, 1, 5, 71, 72, 73, 10**12, 10**12 + 1]
    dn = [rng.choice([1, 2, 3, 7, 8, 16, 72, 96, 999_999]) for _ in range(5000)] + [72] * 8
    # exact halves at the third decimal (x.yyy5, every k/16, k/80 and odd k/2000): rounded
    # half to even, as the Decimal is
    for d in (16, 80, 2000):
        lnum += list(range(1, 4001))
        dn += [d] * 4000
    assert downtime_texts(lnum, dn) == per_unit(lnum, dn)
    assert downtime_texts([1, 3], [2000, 2000]) == ["0.0", "0.002"]       # 0.0005 -> 0.000, 0.0015 -> 0.002
    assert downtime_texts([21], [8]) == ["2.625"]


def test_downtime_texts_of_large_figures_go_through_the_decimal():
    lnum = [2**53, 3 * 10**18 + 7, 10**20 + 1, 5]
    dn = [3, 7, 9, 10**6 + 1]
    got = downtime_texts(lnum, dn)
    assert got == per_unit(lnum, dn)
    assert got[-1] == repr(float(round(Decimal(5) / Decimal(10**6 + 1), 3)))


def test_each_once_formats_each_distinct_value_once_in_order():
    calls = []

    def fmt(v):
        calls.append(v)
        return f"<{v}>"

    values = [3, 1, 3, 2, 1, 3]
    assert cr.each_once(values, fmt) == ["<3>", "<1>", "<3>", "<2>", "<1>", "<3>"]
    assert calls == [3, 1, 2]


def test_pieces_and_batches_are_the_document():
    lc, lg = example()
    res = compute(lc, lg, ["2027-Q1"])
    want = reference(res).encode("utf-8")
    assert document_bytes(res) == want
    chunks = document_chunks(res)
    assert len(chunks) > 3 and b"".join(chunks) == want
    batches = []
    res.write_json(batches.append)
    assert len(batches) > 3 and b"".join(b"".join(b) for b in batches) == want


def test_ids_needing_escapes_take_the_general_path_in_pieces():
    lc = contract(HEAD + topo({"r1": "n[1-4]"}) + NODE_TIERS + "  rack:\n    credits: [{below: 99.9%, credit: 5%}]\n")
    r = compute(lc, log(lc, [inc('qu"ote', "n2", t(5, 0), t(5, 9)), inc("plain", "n3", t(6, 0), t(6, 1)),
                             inc("r", "r1", t(3, 0), t(3, 6), scope="rack")]), ["2027-02"])
    names = r.period("2027-02").scopes["node"].incidents.names()
    assert NamesInfo().get(names) is None                   # no id table in one piece: quoted one by one
    want = reference(r).encode("utf-8")
    assert b"".join(document_chunks(r)) == want
    assert b'"qu\\"ote"' in want


def test_the_command_writes_the_same_bytes_to_a_file_and_to_stdout(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)                    # the log is named as given in the golden file
    args = ["credits", "examples/gb200-contract.yaml", "examples/gb200-incidents-2027Q1.csv",
            "--quarter", "2027-Q1", "--format", "json"]
    out = tmp_path / "out.json"
    r = CliRunner().invoke(main, [*args, "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert out.read_bytes() == GOLDEN.read_bytes()
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    assert r.stdout_bytes == GOLDEN.read_bytes()



def test_the_first_gather_of_ids_begins_with_the_document_and_ends_with_it(monkeypatch):
    """The first scope-month's ids are gathered in the worker from the moment the document
    begins (while its other members are made); a document that fails while they are made
    stops the worker too, and the text of a written one is the reference either way."""
    import pytest

    import calculators.result_json as rj

    lc, lg = example()
    res = compute(lc, lg, ["2027-Q1"])
    order = [sm for pr in res.periods for sm in pr.scopes.values()]
    info = NamesInfo(order)
    assert list(info._ahead) == [0]                          # begun at once
    got, want = info.incident_text(order[0], 5), rj._incident_text(order[0], 5, NamesInfo())
    assert bytes(got[0]) == bytes(want[0]) and got[3] == want[3]
    assert got[1].tolist() == want[1].tolist() and got[2].tolist() == want[2].tolist()
    info.close()
    assert info._pool is None
    made = []
    real = NamesInfo.close

    def close(self):
        made.append(self._pool is not None)
        real(self)

    monkeypatch.setattr(NamesInfo, "close", close)
    monkeypatch.setattr(rj, "support_json", lambda s, *ids: (_ for _ in ()).throw(RuntimeError("failed")))
    with pytest.raises(RuntimeError):
        document_bytes(res)
    assert made == [True]                                    # the worker was stopped
    monkeypatch.undo()
    assert document_bytes(res) == reference(res).encode("utf-8")


def test_support_breach_ids_are_gathered_from_the_codes_into_the_members_text():
    """The support figures keep their breach ids as codes (`IdList`); the document gathers
    their text in one kernel pass into the places stand-ins took, and writes what `value`
    writes for the figures as Python lists: with ids to escape (a quote, a line break) the
    member is `value`'s text itself."""
    import pytest

    import calculators.result_json as rj
    from calculators import kernels
    from calculators.id_list import IdList

    if kernels.compiled is None:
        pytest.skip("the compiled kernels were not built (no C compiler)")
    lc, lg = example()
    s = compute(lc, lg, ["2027-Q1"]).support
    figures = [s.detection, *s.response, *s.restore]
    assert all(isinstance(f.breach_ids, IdList) for f in figures)
    assert sum(len(f.breach_ids) for f in figures) > 10          # breaches in more than one figure
    assert sum(1 for f in figures if len(f.breach_ids)) > 1

    def written(member):
        out = rj._Out(lambda chunks: got.extend(bytes(c) for c in chunks))
        member(out) if callable(member) else out.add(member)
        out.flush()
        return b"".join(got).decode("utf-8")

    want = rj.value(rj.support_json(s), 1)
    got: list[bytes] = []
    member = rj._support_member(s, NamesInfo())
    assert callable(member)                                      # gathered, not formatted per id
    assert written(member) == want
    # ids that JSON must escape: the member as value() writes it
    import numpy as np

    names = np.array(['INC-"1"', "INC-\n2", "INC-3"], dtype=object)
    odd = [f.__class__(**{**{k: getattr(f, k) for k in f.__slots__},
                          "breach_ids": IdList(np.array([0, 1, 2], dtype=np.int64), names)}) for f in figures]
    s2 = s.__class__(**{**{k: getattr(s, k) for k in s.__slots__}, "detection": odd[0]})
    got = []
    assert written(rj._support_member(s2, NamesInfo())) == rj.value(rj.support_json(s2), 1)
    assert '"INC-\\"1\\""' in rj.value(rj.support_json(s2), 1)
