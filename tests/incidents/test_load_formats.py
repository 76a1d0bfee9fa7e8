"""Formats, defaults, hostlists, time zones, skipping bad rows and the frame's shape."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from zoneinfo import ZoneInfo

import pandas as pd
import pytest

from calculators.incidents import FRAME_COLUMNS, IncidentLog, detect_format, load_incidents
from slaschema.errors import InputError

from .conftest import EXAMPLE_LOG

T0 = int(datetime(2027, 2, 3, 10, 0, tzinfo=timezone.utc).timestamp())
RECORDS = [
    {"id": "A", "scope": "node", "target": "r01-n01", "start": "2027-02-03T10:00:00Z",
     "end": "2027-02-03T11:00:00Z", "severity": "sev2", "cause": "PSU"},
    {"id": "B", "scope": "rack", "target": "r02", "start": "2027-02-03T04:00:00-06:00", "impact": "degraded",
     "gpus_affected": 2, "category": "maintenance", "notice_at": "2027-01-30T10:00:00Z"},
]


def frame_as_tuples(log: IncidentLog) -> list[tuple]:
    f = log.frame
    return [(r.id, r.row, r.scope, r.target, r.start, None if pd.isna(r.end) else int(r.end), r.impact,
             None if pd.isna(r.gpus_affected) else int(r.gpus_affected), r.category)
            for r in f.itertuples()]


EXPECTED = [("A", 1, "node", "r01-n01", T0, T0 + 3600, "down", None, "unplanned"),
            ("B", 2, "rack", "r02", T0, None, "degraded", 2, "maintenance")]


def test_csv(write, lc):
    text = ("cause,severity,id,scope,target,start,end,impact,gpus_affected,category,notice_at\n"
            "PSU,sev2,A,node,r01-n01,2027-02-03T10:00:00Z,2027-02-03T11:00:00Z,,,,\n"
            ",,B,rack,r02,2027-02-03T04:00:00-06:00,,degraded,2,maintenance,2027-01-30T10:00:00Z\n")
    log = load_incidents(write("log.csv", text), lc)
    assert frame_as_tuples(log) == EXPECTED
    assert log.sha256 and len(log.sha256) == 64 and log.file.endswith("log.csv")


def test_json_lines(write, lc):
    text = "\n".join(json.dumps(r) for r in RECORDS) + "\n"
    log = load_incidents(write("log.jsonl", text), lc)
    assert frame_as_tuples(log) == EXPECTED


def test_json_array(write, lc):
    log = load_incidents(write("log.json", json.dumps(RECORDS, indent=2)), lc)
    assert frame_as_tuples(log) == EXPECTED


def test_json_nulls_are_defaults(write, lc):
    recs = [dict(RECORDS[0], end=None, impact=None, category=None, severity=None)]
    log = load_incidents(write("log.json", json.dumps(recs)), lc)
    r = log.frame.iloc[0]
    assert pd.isna(r["end"]) and r["impact"] == "down" and r["category"] == "unplanned" and pd.isna(r["severity"])


def test_from_records_strings_ints_and_datetimes(lc):
    recs = [dict(RECORDS[0]), dict(RECORDS[1], start=T0, notice_at=datetime(2027, 1, 30, 4, 0,
                                                                          tzinfo=ZoneInfo("America/Chicago")))]
    log = IncidentLog.from_records(recs, lc.topology)
    assert frame_as_tuples(log) == EXPECTED
    assert int(log.frame["notice_at"].iloc[1]) == int(datetime(2027, 1, 30, 10, tzinfo=timezone.utc).timestamp())


def test_from_records_fast_path_all_ints(lc):
    n = 5000
    recs = {"id": [f"I{i}" for i in range(n)], "scope": ["node"] * n,
            "target": [lc.topology.nodes[i % 72] for i in range(n)],
            "start": list(range(T0, T0 + n)), "end": list(range(T0 + 60, T0 + 60 + n))}
    log = IncidentLog.from_records([dict(zip(recs, v)) for v in zip(*recs.values())], lc.topology)
    assert len(log.frame) == n
    assert log.frame["start"].dtype == "int64" and str(log.frame["end"].dtype) == "Int64"
    assert (log.frame["end"] - log.frame["start"] == 60).all()


def test_from_records_empty(lc):
    log = IncidentLog.from_records([], lc.topology)
    assert log.frame.empty and tuple(log.frame.columns) == FRAME_COLUMNS


def test_frame_columns_and_dtypes(write, lc):
    log = load_incidents(EXAMPLE_LOG, lc)
    f = log.frame
    assert tuple(f.columns) == FRAME_COLUMNS
    assert f["start"].dtype == "int64" and f["row"].dtype == "int64"
    for c in ("end", "gpus_affected", "notice_at", "detected_at", "reported_at", "responded_at", "resolved_at"):
        assert str(f[c].dtype) == "Int64", c


def test_sub_seconds_dropped_and_offsets_applied(lc):
    log = IncidentLog.from_records([
        {"id": "A", "scope": "node", "target": "r01-n01", "start": "2027-02-03T10:00:00.999Z"},
        {"id": "B", "scope": "node", "target": "r01-n01", "start": "2027-02-03T11:30:00+01:30"},
        {"id": "C", "scope": "node", "target": "r01-n01", "start": "2027-02-03 10:00:00+0000"},
    ], lc.topology)
    assert log.frame["start"].tolist() == [T0, T0, T0]


def test_whitespace_and_case_are_normalised(write, lc):
    text = "id,scope,target,start,impact,severity\n A , Node , r01-n01 , 2027-02-03T10:00:00Z ,DOWN,SEV1\n"
    r = load_incidents(write("log.csv", text), lc).frame.iloc[0]
    assert (r["id"], r["scope"], r["target"], r["start"], r["impact"], r["severity"]) == \
        ("A", "node", "r01-n01", T0, "down", "sev1")


def test_hostlist_target_expands_to_one_row_per_node(lc):
    log = IncidentLog.from_records([
        {"id": "A", "scope": "node", "target": "r01-n[03-05],r02-n01", "start": T0},
        {"id": "B", "scope": "node", "target": "r03-n07", "start": T0},
    ], lc.topology)
    f = log.frame
    assert f[["id", "row", "target"]].values.tolist() == [
        ["A", 1, "r01-n03"], ["A", 1, "r01-n04"], ["A", 1, "r01-n05"], ["A", 1, "r02-n01"], ["B", 2, "r03-n07"]]
    assert log.incident_ids == ["A", "B"]


def test_assume_tz_resolves_naive_times(write, lc):
    text = "id,scope,target,start,end\nA,node,r01-n01,2027-02-03T04:00:00,2027-02-03T05:00:00\n"
    path = write("log.csv", text)
    with pytest.raises(InputError) as ei:
        load_incidents(path, lc)
    assert ei.value.codes == ["timestamp_naive", "timestamp_naive"]
    f = load_incidents(path, lc, assume_tz="America/Chicago").frame
    assert (f["start"].iloc[0], f["end"].iloc[0]) == (T0, T0 + 3600)


def test_assume_tz_keeps_explicit_offsets(write, lc):
    text = "id,scope,target,start\nA,node,r01-n01,2027-02-03T10:00:00Z\n"
    f = load_incidents(write("log.csv", text), lc, assume_tz="Asia/Tokyo").frame
    assert f["start"].iloc[0] == T0


def test_assume_tz_rejects_times_that_do_not_exist_or_repeat(write, lc):
    text = ("id,scope,target,start\n"
            "A,node,r01-n01,2027-03-14T02:30:00\n"      # spring-forward gap in Chicago
            "B,node,r01-n01,2027-11-07T01:30:00\n"      # repeated hour
            "C,node,r01-n01,2027-03-14T03:30:00\n")
    with pytest.raises(InputError) as ei:
        load_incidents(write("log.csv", text), lc, assume_tz="America/Chicago")
    assert [(p.code, p.row) for p in ei.value.problems] == [("timestamp_invalid", 1), ("timestamp_invalid", 2)]


def test_skip_bad_rows_keeps_the_good_ones_and_lists_the_rest(write, lc):
    text = ("id,scope,target,start,end\n"
            "A,node,r01-n01,2027-02-03T10:00:00Z,\n"
            "B,node,r01-n99,2027-02-03T10:00:00Z,\n"
            "A,node,r01-n02,2027-02-03T10:00:00Z,\n"
            "C,rack,r01,2027-02-03T10:00:00Z,2027-02-03T09:00:00Z\n"
            "D,site,dfw1,2027-02-03T10:00:00Z,2027-02-03T12:00:00Z\n")
    log = load_incidents(write("log.csv", text), lc, skip_bad_rows=True)
    assert log.frame["id"].tolist() == ["A", "D"] and log.frame["row"].tolist() == [1, 5]
    assert [(p.code, p.row) for p in log.skipped] == [("unknown_target", 2), ("duplicate_id", 3),
                                                      ("end_before_start", 4)]
    assert log.skipped_rows == [2, 3, 4]
    assert [d["code"] for d in log.skipped_json()] == ["unknown_target", "duplicate_id", "end_before_start"]


def test_skip_bad_rows_with_hostlists(lc):
    log = IncidentLog.from_records([
        {"id": "A", "scope": "node", "target": "r01-n[01-02]", "start": "bad"},
        {"id": "B", "scope": "node", "target": "r02-n[01-02]", "start": T0},
    ], lc.topology, skip_bad_rows=True)
    assert log.frame["target"].tolist() == ["r02-n01", "r02-n02"] and log.frame["row"].tolist() == [2, 2]


def test_unknown_category_is_kept(lc):
    log = IncidentLog.from_records([{"id": "A", "scope": "node", "target": "r01-n01", "start": T0,
                                     "category": "vendor_recall"}], lc.topology)
    assert log.frame["category"].tolist() == ["vendor_recall"]


def test_end_equal_to_start_is_allowed(lc):
    log = IncidentLog.from_records([{"id": "A", "scope": "node", "target": "r01-n01", "start": T0, "end": T0}],
                                   lc.topology)
    assert int(log.frame["end"].iloc[0]) == T0


def test_detect_format():
    assert detect_format("x.csv", "[") == "csv"
    assert detect_format("x.jsonl", "{}") == "jsonl"
    assert detect_format("x.ndjson", "{}") == "jsonl"
    assert detect_format("x.json", " [ {} ]") == "json"
    assert detect_format("x.json", '{"id": 1}\n') == "jsonl"
    assert detect_format("incidents", "[{}]") == "json"
    assert detect_format("incidents", '{"id": 1}') == "jsonl"
    assert detect_format("incidents", "id,scope") == "csv"


def test_example_log_loads_cleanly_and_covers_the_rules(lc):
    log = load_incidents(EXAMPLE_LOG, lc)
    f = log.frame
    assert log.skipped == [] and log.warnings == []
    per = f.drop_duplicates("id")
    assert 55 <= len(per) <= 70
    assert {"unplanned", "maintenance", "security_patch", "customer_caused", "force_majeure"} <= set(per.category)
    assert set(per.category) - set(lc.model.exclusions) - {"unplanned"} == {"vendor_recall"}
    assert set(per.scope) == {"node", "rack", "cluster", "site"}
    assert set(per.impact) == {"down", "degraded"}
    assert per["end"].isna().sum() == 1
    assert set(per.severity.dropna()) == {"sev1", "sev2", "sev3", "sev4"}
    assert (f.groupby("id").size() > 1).any()  # a hostlist target
    # late notice: maintenance announced less than 72h ahead, or not at all
    m = per[per.category == "maintenance"]
    late = m["notice_at"].isna() | (m["start"] - m["notice_at"].fillna(0) < 72 * 3600)
    assert late.any() and (~late).any()
    # detection breaches (> 2 minutes)
    assert ((per["detected_at"] - per["start"]) > 120).any()


def test_example_log_has_three_r02_nodes_down_at_once(lc):
    f = load_incidents(EXAMPLE_LOG, lc).frame
    r02 = f[(f.scope == "node") & f.target.str.startswith("r02-") & (f.impact == "down") & f["end"].notna()]
    events = sorted([(int(s), 1) for s in r02.start] + [(int(e), -1) for e in r02["end"]])
    level = peak = 0
    for _, d in events:
        level += d
        peak = max(peak, level)
    assert peak >= 3


def test_example_log_crosses_a_month_boundary_in_the_contract_zone(lc):
    f = load_incidents(EXAMPLE_LOG, lc).frame.drop_duplicates("id")
    zone = ZoneInfo(lc.model.contract.timezone)
    closed = f[f["end"].notna()]
    months = [(datetime.fromtimestamp(s, zone).month, datetime.fromtimestamp(int(e) - 1, zone).month)
              for s, e in zip(closed.start, closed["end"])]
    assert any(a != b for a, b in months)


def test_json_numbers_are_epoch_seconds_but_csv_numbers_are_not(write, lc):
    log = load_incidents(write("log.json", json.dumps([{"id": "A", "scope": "node", "target": "r01-n01",
                                                         "start": T0, "end": T0 + 60.9}])), lc)
    assert (log.frame["start"].iloc[0], int(log.frame["end"].iloc[0])) == (T0, T0 + 60)
    with pytest.raises(InputError) as ei:
        load_incidents(write("log.csv", f"id,scope,target,start\nA,node,r01-n01,{T0}\n"), lc)
    assert ei.value.codes == ["timestamp_invalid"]


def test_example_log_is_what_the_script_generates():
    import importlib.machinery
    import importlib.util

    from .conftest import REPO

    loader = importlib.machinery.SourceFileLoader("make_example_incidents", str(REPO / "scripts" / "make-example-incidents"))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    assert mod.build(2027) == EXAMPLE_LOG.read_text()


def test_from_records_accepts_columns(lc):
    cols = {"id": ["A", "B"], "scope": ["node", "rack"], "target": ["r01-n01", "r02"], "start": [T0, T0 + 5],
            "end": [T0 + 60, None]}
    by_dict = IncidentLog.from_records(cols, lc.topology).frame
    by_frame = IncidentLog.from_records(pd.DataFrame(cols), lc.topology).frame
    by_rows = IncidentLog.from_records([dict(zip(cols, v)) for v in zip(*cols.values())], lc.topology).frame
    pd.testing.assert_frame_equal(by_dict, by_rows)
    pd.testing.assert_frame_equal(by_frame, by_rows)
    assert by_rows["end"].isna().tolist() == [False, True]
