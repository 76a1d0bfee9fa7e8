"""How `slakit reconcile` builds its entries and writes its JSON for large logs, checked
against the plain way: the entries, built column by column from the loaded log (one string
per distinct value, one datetime per distinct second), are those its frame's rows give one by
one; the JSON, written in pieces as it is encoded, is the text `json.dumps(doc, indent=2)`
writes."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pytest

from calculators.reconcile import LogEntry, load_log, log_entries
from calculators.reconcile_cli import _echo_json
from slaschema.loader import load_contract
from tests.hostile.conftest import cli

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = ROOT / "examples" / "gb200-contract.yaml"
LOG = ROOT / "examples" / "gb200-incidents-2027Q1.csv"


def _row_by_row(log) -> list[LogEntry]:
    """The entries as one reads them off the frame's rows one at a time."""
    out = []
    for r in log.frame.itertuples(index=False):
        end = None if pd.isna(r.end) else datetime.fromtimestamp(int(r.end), tz=UTC)
        out.append(LogEntry(r.id, r.scope, r.target, datetime.fromtimestamp(int(r.start), tz=UTC), end,
                            r.category, int(r.row)))
    return out


def _theirs(tmp_path: Path) -> Path:
    """A provider's log: node hostlists, open incidents, a start equal to another's end, a
    maintenance incident, two rows at one second."""
    p = tmp_path / "theirs.csv"
    p.write_text("id,scope,target,start,end,category\n"
                 "P1,node,r01-n[07-09],2027-01-05T09:10:00Z,2027-01-05T12:00:00Z,\n"
                 "P2,node,r01-n07,2027-01-05T12:00:00Z,,\n"
                 "P3,rack,r04,2027-01-06T00:00:00Z,2027-01-06T02:00:00Z,maintenance\n"
                 "P4,node,r04-n15,2027-01-07T00:12:00Z,,unplanned\n"
                 "P5,node,r04-n[14-15],2027-01-07T00:12:00Z,2027-01-07T03:00:00Z,\n", encoding="utf-8")
    return p


def test_entries_are_those_of_the_frames_rows(tmp_path):
    for path, contract in ((LOG, None), (_theirs(tmp_path), None), (LOG, load_contract(CONTRACT))):
        log = load_log(path, contract)
        entries = log_entries(log)
        assert entries == _row_by_row(log)
        assert any(e.end is None for e in entries) and len({e.unit for e in entries}) > 2
        # one string per distinct value and one datetime per distinct second, for all entries
        assert len({id(e.category) for e in entries}) == len({e.category for e in entries})
        times = [t for e in entries for t in (e.start, e.end) if t is not None]
        assert len({id(t) for t in times}) == len(set(times))


@pytest.mark.parametrize("piece", [1, 7, 1 << 16])
def test_the_json_written_in_pieces_is_that_of_json_dumps(capsys, piece):
    doc = {"format": "slakit-reconcile/2", "agree": False, "tolerance_s": 300.0, "none": None, "empty": [],
           "nested": {}, "findings": [{"kind": "end_differs", "ours": "id \u00e9\u2192\x1b[31m\"\\",
                                        "delta_s": -1.5, "details": {"open_on": "ours"}} for _ in range(50)]}
    _echo_json(doc, piece=piece)
    assert capsys.readouterr().out == json.dumps(doc, indent=2) + "\n"


def test_the_commands_json_is_json_dumps_with_indent_2(tmp_path):
    for args in ((LOG, _theirs(tmp_path)), (CONTRACT, LOG, _theirs(tmp_path))):
        r = cli("reconcile", *args, "--format", "json")
        assert r.exit_code == 1, r.output
        doc = json.loads(r.stdout)
        assert doc["findings"] and doc["counts"]["missing_in_ours"] > 0
        assert r.stdout == json.dumps(doc, indent=2) + "\n"
