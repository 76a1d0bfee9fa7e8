"""Round trips: the same incidents written as CSV, JSON Lines and JSON load to the same frame,
with the instants they were written from, whatever offsets the times carry."""

from __future__ import annotations

import csv
import io
import json
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calculators.incidents import IncidentLog, load_incidents
from slaschema.errors import InputError
from slaschema.loader import load_contract

from .conftest import EXAMPLE_CONTRACT

LC = load_contract(EXAMPLE_CONTRACT)
BASE = int(datetime(2027, 1, 1, tzinfo=timezone.utc).timestamp())
UNITS = {"node": list(LC.topology.nodes) + ["r01-n[01-03]", "r04-n[17-18]"], "rack": list(LC.topology.racks),
         "cluster": list(LC.topology.clusters), "site": list(LC.topology.sites)}


def text_time(sec: int, offset_min: int, style: int) -> str:
    tz = timezone(timedelta(minutes=offset_min))
    d = datetime.fromtimestamp(sec, tz)
    if offset_min == 0 and style == 1:
        return d.strftime("%Y-%m-%dT%H:%M:%SZ")
    if style == 2:
        return d.strftime("%Y-%m-%d %H:%M:%S%z")
    return d.isoformat()


incident = st.fixed_dictionaries({
    "scope": st.sampled_from(["node", "node", "rack", "cluster", "site"]),
    "pick": st.integers(0, 10_000),
    "start": st.integers(0, 90 * 86400),
    "length": st.one_of(st.none(), st.integers(0, 3 * 86400)),
    "degraded": st.booleans(),
    "gpus": st.integers(1, 4),
    "severity": st.sampled_from(["", "sev1", "sev2", "sev3", "sev4"]),
    "category": st.sampled_from(["", "unplanned", "maintenance", "vendor_recall"]),
})


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(incident, min_size=1, max_size=25), st.sampled_from([[0], [0, -360, -300], [60, 330, -480]]),
       st.integers(0, 2))
def test_formats_agree_and_keep_instants(incs, offsets, style):
    records, expected = [], []
    for i, x in enumerate(incs):
        units = UNITS[x["scope"]]
        target = units[x["pick"] % len(units)]
        start = BASE + x["start"]
        end = None if x["length"] is None else start + x["length"]
        off = offsets[i % len(offsets)]
        rec = {"id": f"I{i}", "scope": x["scope"], "target": target, "start": text_time(start, off, style),
               "end": "" if end is None else text_time(end, offsets[(i + 1) % len(offsets)], style),
               "impact": "degraded" if x["degraded"] else "", "gpus_affected": str(x["gpus"]) if x["degraded"] else "",
               "category": x["category"], "severity": x["severity"]}
        records.append(rec)
        expected.append((f"I{i}", start, end))
    with tempfile.TemporaryDirectory() as d:
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=list(records[0]))
        w.writeheader()
        w.writerows(records)
        paths = {"csv": Path(d) / "l.csv", "jsonl": Path(d) / "l.jsonl", "json": Path(d) / "l.json"}
        paths["csv"].write_text(buf.getvalue())
        as_json = [{k: (v if v != "" else None) for k, v in r.items()} for r in records]
        paths["jsonl"].write_text("\n".join(json.dumps(r) for r in as_json))
        paths["json"].write_text(json.dumps(as_json))
        frames = {k: load_incidents(p, LC).frame for k, p in paths.items()}
    frames["records"] = IncidentLog.from_records(records, LC.topology).frame
    first = frames["csv"]
    for k, f in frames.items():
        pd.testing.assert_frame_equal(f.reset_index(drop=True), first.reset_index(drop=True), check_dtype=True,
                                      obj=k)
    per_id = first.drop_duplicates("id")
    got = [(r.id, int(r.start), None if pd.isna(r.end) else int(r.end)) for r in per_id.itertuples()]
    assert got == expected
    assert set(first["category"]) <= {"unplanned", "maintenance", "vendor_recall"}


def _example_rows() -> tuple[list[str], list[list[str]]]:
    from .conftest import EXAMPLE_LOG

    rows = list(csv.reader(io.StringIO(EXAMPLE_LOG.read_text())))
    return rows[0], rows[1:]


HEADER_ROW, EXAMPLE_ROWS = _example_rows()
CORRUPTIONS = {
    "target": ("r09-n01", "unknown_target"),
    "start": ("2027-02-31T10:00:00Z", "timestamp_invalid"),
    "scope": ("pod", "unknown_scope"),
    "impact": ("sideways", "unknown_impact"),
    "severity": ("sev0", "unknown_severity"),
    "notice_at": ("2027-02-03T10:00:00", "timestamp_naive"),
    "id": (None, "duplicate_id"),
    "end": (None, "end_before_start"),
}


@settings(max_examples=30, deadline=None)
@given(st.integers(0, len(EXAMPLE_ROWS) - 1), st.sampled_from(sorted(CORRUPTIONS)), st.integers(0, 10_000))
def test_one_corrupted_cell_is_reported_exactly_there(i, column, other):
    rows = [list(r) for r in EXAMPLE_ROWS]
    c = HEADER_ROW.index(column)
    value, code = CORRUPTIONS[column]
    where = i + 1
    if column == "id":
        j = other % len(rows)
        if j == i:
            j = (i + 1) % len(rows)
        rows[i][c] = rows[j][c]
        where = max(i, j) + 1
    elif column == "end":
        s = datetime.fromisoformat(rows[i][HEADER_ROW.index("start")])
        rows[i][c] = (s - timedelta(hours=1)).isoformat()
    else:
        rows[i][c] = value
    buf = io.StringIO()
    csv.writer(buf).writerows([HEADER_ROW] + rows)
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "log.csv"
        p.write_text(buf.getvalue())
        try:
            load_incidents(p, LC)
        except InputError as e:
            got = [(x.code, x.row, x.column) for x in e.problems]
        else:
            got = []
    assert got == [(code, where, column)]
