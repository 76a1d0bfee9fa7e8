"""Every reason code of the incident-log loader, with its row and column."""

from __future__ import annotations

from pathlib import Path

import pytest

from calculators.incidents import IncidentLog, load_incidents
from slaschema.errors import InputError

HEADER = "id,scope,target,start,end,impact,gpus_affected,category,severity,notice_at\n"
GOOD = "G1,node,r01-n01,2027-02-03T10:00:00Z,2027-02-03T11:00:00Z,,,,,\n"


def errors(write, body: str, lc, **kw) -> list[tuple[str, int | None, str | None]]:
    path = write("log.csv", HEADER + body)
    with pytest.raises(InputError) as ei:
        load_incidents(path, lc, **kw)
    return [(p.code, p.row, p.column) for p in ei.value.problems if p.severity == "error"]


@pytest.mark.parametrize("line, code, column", [
    (",node,r01-n01,2027-02-03T10:00:00Z,,,,,,", "missing_id", "id"),
    ("X,,r01-n01,2027-02-03T10:00:00Z,,,,,,", "missing_value", "scope"),
    ("X,node,,2027-02-03T10:00:00Z,,,,,,", "missing_value", "target"),
    ("X,node,r01-n01,,,,,,,", "missing_value", "start"),
    ("X,node,r01-n01,yesterday,,,,,,", "timestamp_invalid", "start"),
    ("X,node,r01-n01,2027-02-30T10:00:00Z,,,,,,", "timestamp_invalid", "start"),
    ("X,node,r01-n01,2027-02-03T10:00:00Z,soon,,,,,", "timestamp_invalid", "end"),
    ("X,node,r01-n01,2027-02-03T10:00:00Z,,,,,,last week", "timestamp_invalid", "notice_at"),
    ("X,node,r01-n01,2027-02-03T10:00:00,,,,,,", "timestamp_naive", "start"),
    ("X,node,r01-n01,2027-02-03,,,,,,", "timestamp_naive", "start"),
    ("X,node,r01-n01,2027-02-03T10:00:00Z,2027-02-03T09:59:59Z,,,,,", "end_before_start", "end"),
    ("X,nodes,r01-n01,2027-02-03T10:00:00Z,,,,,,", "unknown_scope", "scope"),
    ("X,node,r01-n19,2027-02-03T10:00:00Z,,,,,,", "unknown_target", "target"),
    ("X,rack,r01-n01,2027-02-03T10:00:00Z,,,,,,", "unknown_target", "target"),
    ("X,rack,r09,2027-02-03T10:00:00Z,,,,,,", "unknown_target", "target"),
    ("X,cluster,c2,2027-02-03T10:00:00Z,,,,,,", "unknown_target", "target"),
    ("X,site,dfw2,2027-02-03T10:00:00Z,,,,,,", "unknown_target", "target"),
    ('X,node,"r01-n[01-03",2027-02-03T10:00:00Z,,,,,,', "unknown_target", "target"),
    ("X,node,r01-n[17-19],2027-02-03T10:00:00Z,,,,,,", "unknown_target", "target"),
    ("X,node,r01-n01,2027-02-03T10:00:00Z,,partial,,,,", "unknown_impact", "impact"),
    ("X,node,r01-n01,2027-02-03T10:00:00Z,,,,,P1,", "unknown_severity", "severity"),
    ("X,node,r01-n01,2027-02-03T10:00:00Z,,,,,sev5,", "unknown_severity", "severity"),
    ("X,node,r01-n01,2027-02-03T10:00:00Z,,degraded,5,,,", "gpus_affected_range", "gpus_affected"),
    ("X,node,r01-n01,2027-02-03T10:00:00Z,,degraded,0,,,", "gpus_affected_range", "gpus_affected"),
    ("X,node,r01-n01,2027-02-03T10:00:00Z,,degraded,1.5,,,", "gpus_affected_range", "gpus_affected"),
    ("X,node,r01-n01,2027-02-03T10:00:00Z,,degraded,two,,,", "gpus_affected_range", "gpus_affected"),
    ("X,rack,r02,2027-02-03T10:00:00Z,,degraded,5,,,", "gpus_affected_range", "gpus_affected"),
    # the example contract counts degraded time proportionally, so the GPU count is needed
    ("X,node,r01-n01,2027-02-03T10:00:00Z,,degraded,,,,", "missing_value", "gpus_affected"),
])
def test_each_code_with_row_and_column(write, lc, line, code, column):
    # the bad line is data row 2, after a good one
    assert errors(write, GOOD + line + "\n", lc) == [(code, 2, column)]


def test_duplicate_id_points_at_the_later_rows(write, lc):
    body = GOOD + GOOD.replace("r01-n01", "r01-n02") + GOOD.replace("r01-n01", "r01-n03")
    path = write("log.csv", HEADER + body)
    with pytest.raises(InputError) as ei:
        load_incidents(path, lc)
    probs = ei.value.problems
    assert [(p.code, p.row, p.column, p.value) for p in probs] == [
        ("duplicate_id", 2, "id", "G1"), ("duplicate_id", 3, "id", "G1")]
    assert "row 1" in probs[0].message


def test_every_bad_row_is_reported_at_once(write, lc):
    body = (GOOD
            + "B1,node,r01-n99,2027-02-03T10:00:00Z,,,,,,\n"
            + "B2,rack,r02,2027-02-03T10:00:00,2027-02-03T09:00:00Z,down,,,sev9,\n"
            + "G2,site,dfw1,2027-02-03T10:00:00+01:00,,,,,,\n"
            + ",bogus,,,,,,,,\n")
    got = errors(write, body, lc)
    assert got == [
        ("unknown_target", 2, "target"),
        ("timestamp_naive", 3, "start"),
        ("unknown_severity", 3, "severity"),
        ("missing_id", 5, "id"),
        ("unknown_scope", 5, "scope"),
        ("missing_value", 5, "target"),
        ("missing_value", 5, "start"),
    ]


def test_problem_carries_file_value_and_fix(write, lc):
    path = write("log.csv", HEADER + "X,node,r01-n1,2027-02-03T10:00:00Z,,,,,,\n")
    with pytest.raises(InputError) as ei:
        load_incidents(path, lc)
    (p,) = ei.value.problems
    assert (p.file, p.row, p.column, p.value, p.code) == (str(path), 1, "target", "r01-n1", "unknown_target")
    assert p.fix and "r01-n" in p.fix
    assert p.format().startswith(f"{path} row 1, column target:")


def test_missing_required_column_is_fatal_even_when_skipping(write, lc):
    path = write("log.csv", "id,target,start\nA,r01-n01,2027-02-03T10:00:00Z\n")
    with pytest.raises(InputError) as ei:
        load_incidents(path, lc, skip_bad_rows=True)
    assert [(p.code, p.column) for p in ei.value.problems] == [("missing_column", "scope")]


def test_unknown_column_is_a_warning_only(write, lc):
    path = write("log.csv", "id,scope,target,start,sevrity\nA,node,r01-n01,2027-02-03T10:00:00Z,sev1\n")
    log = load_incidents(path, lc)
    assert len(log.frame) == 1
    assert [(w.code, w.column, w.severity) for w in log.warnings] == [("unknown_column", "sevrity", "warning")]
    assert "severity" in (log.warnings[0].fix or "")


def test_unknown_column_warning_travels_with_errors(write, lc):
    path = write("log.csv", "id,scope,target,start,owner\nA,node,r01-n99,2027-02-03T10:00:00Z,x\n")
    with pytest.raises(InputError) as ei:
        load_incidents(path, lc)
    assert [(p.code, p.severity) for p in ei.value.problems] == [("unknown_target", "error"),
                                                                  ("unknown_column", "warning")]


def test_empty_file_is_an_error(write, lc):
    path = write("log.csv", "  \n")
    with pytest.raises(InputError) as ei:
        load_incidents(path, lc)
    assert ei.value.codes == ["empty_log"]


def test_header_only_log_is_empty_with_a_warning(write, lc):
    log = load_incidents(write("log.csv", HEADER), lc)
    assert log.frame.empty and list(log.frame.columns)[:4] == ["id", "row", "scope", "target"]
    assert [w.code for w in log.warnings] == ["empty_log"]


def test_missing_file(lc, tmp_path):
    with pytest.raises(InputError) as ei:
        load_incidents(tmp_path / "nope.csv", lc)
    assert ei.value.codes == ["file_not_found"]


def test_ragged_csv(write, lc):
    path = write("log.csv", "id,scope,target,start\nA,node,r01-n01,2027-02-03T10:00:00Z,extra,cells\n")
    with pytest.raises(InputError) as ei:
        load_incidents(path, lc)
    assert ei.value.codes == ["csv_invalid"]


def test_bad_json_lines_report_their_line(write, lc):
    path = write("log.jsonl", '{"id": "A", "scope": "node", "target": "r01-n01", "start": "2027-02-03T10:00:00Z"}\n'
                 '\n{"id": "B", oops}\n[1, 2]\n')
    with pytest.raises(InputError) as ei:
        load_incidents(path, lc)
    assert [(p.code, p.row) for p in ei.value.problems] == [("json_invalid", 3), ("json_invalid", 4)]


def test_json_array_element_not_object(write, lc):
    path = write("log.json", '[{"id": "A", "scope": "node", "target": "r01-n01", "start": "2027-02-03T10:00:00Z"}, 7]')
    with pytest.raises(InputError) as ei:
        load_incidents(path, lc)
    assert [(p.code, p.row) for p in ei.value.problems] == [("json_invalid", 2)]


def test_from_records_reports_the_same_codes(lc):
    with pytest.raises(InputError) as ei:
        IncidentLog.from_records([
            {"id": "A", "scope": "node", "target": "r01-n01", "start": 1_801_000_000, "end": 1_800_000_000},
            {"id": "B", "scope": "rack", "target": "r01", "start": "not a time"},
            {"id": "C", "scope": "node", "target": "r01-n01", "start": 1_801_000_000, "impact": "degraded",
             "gpus_affected": 9},
        ], lc.topology)
    assert [(p.code, p.row, p.column) for p in ei.value.problems] == [
        ("end_before_start", 1, "end"), ("timestamp_invalid", 2, "start"), ("gpus_affected_range", 3, "gpus_affected")]


def test_repeated_column_is_an_error(write, lc):
    path = write("log.csv", "id,scope,target,start,start\nA,node,r01-n01,2027-02-03T10:00:00Z,2027-02-03T11:00:00Z\n")
    with pytest.raises(InputError) as ei:
        load_incidents(path, lc, skip_bad_rows=True)
    assert [(p.code, p.column) for p in ei.value.problems] == [("duplicate_column", "start")]


def test_unknown_assume_tz(write, lc):
    path = write("log.csv", HEADER + GOOD)
    with pytest.raises(InputError) as ei:
        load_incidents(path, lc, assume_tz="Mars/Olympus_Mons")
    assert ei.value.codes == ["unknown_timezone"]


@pytest.mark.parametrize("name, text", [
    ("log.csv", HEADER + GOOD + "X,node,r01-n01,2027-02-03T10:00:00Z, 2027-02-03T09:59:59Z ,,,,,\n"),   # Arrow
    ("log.csv", HEADER + GOOD + "X,node,r01-n01,2027-02-03T10:00:00Z,2027-02-03 09:59:59Z,,,,\n"),     # pandas (short row)
    ("log.jsonl", '{"id":"G1","scope":"node","target":"r01-n01","start":"2027-02-03T10:00:00Z"}\n'
                  '{"id":"X","scope":"node","target":"r01-n01","start":"2027-02-03T10:00:00Z",'
                  '"end":"2027-02-03T09:59:59Z"}\n'),
])
def test_end_before_start_shows_the_end_as_written(write, lc, name, text):
    """The value of an end_before_start problem is the end cell as the log writes it (what
    the user looks for in the file), not the parsed epoch seconds."""
    path = write(name, text)
    with pytest.raises(InputError) as ei:
        load_incidents(path, lc)
    (p,) = [p for p in ei.value.problems if p.code == "end_before_start"]
    assert (p.row, p.column) == (2, "end")
    assert p.value in ("2027-02-03T09:59:59Z", "2027-02-03 09:59:59Z")
    skipped = load_incidents(path, lc, skip_bad_rows=True).skipped
    assert [s.value for s in skipped] == [p.value]


@pytest.mark.parametrize("body, row, line", [
    (GOOD + "X,node,r01-n01,2027-02-03T10:00:00Z,,,,,,,extra\n", 2, 3),
    (GOOD + "\n" + GOOD.replace("G1", "G2") + "X,node,r01-n01,2027-02-03T10:00:00Z,,,,,,,extra,more\n", 3, 5),
    ("X,node,r01-n01,2027-02-03T10:00:00Z,,,,,,,extra\n", 1, 2),          # the only data row
    (GOOD + 'Q,node,r01-n01,2027-02-03T10:00:00Z,,,,,,"two\nlines",extra\n', 2, 3),
])
def test_a_row_with_more_cells_than_the_header_is_located(write, lc, body, row, line):
    """csv_invalid for a row with too many cells names that row (data rows, blank lines not
    counted) and the file line it starts on, with or without --skip-bad-rows."""
    path = write("log.csv", HEADER + body)
    for skip in (False, True):
        with pytest.raises(InputError) as ei:
            load_incidents(path, lc, skip_bad_rows=skip)
        (p,) = ei.value.problems
        assert (p.code, p.row, p.line) == ("csv_invalid", row, line)
        assert f"the header has {len(HEADER.split(','))}" in p.message


def test_rows_with_only_an_id_are_reported_not_a_crash(write, lc):
    # every scope, target and impact cell empty: the columns have no value at all (an
    # IndexError once, from numpy's float type of an empty list)
    assert errors(write, "abc\nabd,,,,,,,,,\n", lc) == [
        ("missing_value", 1, "scope"), ("missing_value", 1, "target"), ("missing_value", 1, "start"),
        ("missing_value", 2, "scope"), ("missing_value", 2, "target"), ("missing_value", 2, "start")]


@pytest.mark.parametrize("line, code", [
    ("X,,r01-n01,2027-02-03T10:00:00Z,,,,,,", "missing_value"),
    ("X,galaxy,r01-n01,2027-02-03T10:00:00Z,,,,,,", "unknown_scope"),
    ("X,node,,2027-02-03T10:00:00Z,,,,,,", "missing_value"),
    ("X,node,r01-n01,2027-02-03T10:00:00Z,,degraded,1.5,,,", "gpus_affected_range"),
    ("X,node,r01-n01,2027-02-03T10:00:00Z,,degraded,5,,,", "gpus_affected_range"),
    ("X,node,r01-n01,2027-02-03T10:00:00Z,,,,,sev9,", "unknown_severity"),
])
def test_every_row_problem_says_how_to_fix_it(write, lc, line, code):
    path = write("log.csv", HEADER + line + "\n")
    with pytest.raises(InputError) as ei:
        load_incidents(path, lc)
    (p,) = [p for p in ei.value.problems if p.code == code]
    assert p.fix and p.row == 1, p.format()


def test_a_header_separated_by_semicolons_says_so(write, lc):
    path = write("log.csv", (HEADER + GOOD).replace(",", ";"))
    with pytest.raises(InputError) as ei:
        load_incidents(path, lc)
    missing = [p for p in ei.value.problems if p.code == "missing_column"]
    assert [p.column for p in missing] == ["id", "scope", "target", "start"]
    assert all("separated by ';', not commas" in p.fix for p in missing)
    path = write("log.csv", HEADER.replace("id,", "ident,") + GOOD)       # a plain missing column: the usual fix
    with pytest.raises(InputError) as ei:
        load_incidents(path, lc)
    assert [p.fix for p in ei.value.problems if p.code == "missing_column"] == [
        "the header needs id,scope,target,start (plus end, impact, category, ... as needed)"]


def test_an_unknown_column_of_megabytes_is_named_in_a_short_line(write, lc):
    path = write("log.csv", HEADER.replace("notice_at", "B" * (1 << 22)) + GOOD)
    (w,) = [p for p in load_incidents(path, lc).warnings if p.code == "unknown_column"]
    assert len(w.format()) < 400 and w.column == "B" * 57 + "..."


@pytest.mark.parametrize("sep", [";", "\t", "|"])
def test_a_file_separated_otherwise_says_so_when_a_cell_holds_a_comma(write, lc, sep):
    """Free text with a comma makes the general reader count two cells against a header of one:
    the csv_invalid of that row says how the file is separated."""
    header = HEADER.rstrip("\n").replace(",", sep) + sep + "cause\n"
    row = GOOD.rstrip("\n").replace(",", sep) + sep + '"drained, then replaced"\n'
    path = write("log.csv", header + row)
    with pytest.raises(InputError) as ei:
        load_incidents(path, lc)
    (p,) = ei.value.problems
    assert p.code == "csv_invalid" and f"separated by {sep!r}, not commas" in p.fix, p.format()


def test_a_header_of_forty_thousand_names_warns_of_twenty_and_counts_the_rest(write, lc):
    names = [f"extra_{i:05d}_" + "x" * 40 for i in range(40_000)]       # (52 characters: shown whole)
    path = write("log.csv", HEADER.rstrip("\n") + "," + ",".join(names) + "\n" + GOOD.rstrip("\n") + ","
                 * 40_000 + "\n")
    unknown = [p for p in load_incidents(path, lc).warnings if p.code == "unknown_column"]
    assert [p.column for p in unknown[:20]] == names[:20]
    assert len(unknown) == 21 and unknown[-1].message.startswith("39,980 more columns")


@pytest.mark.parametrize("head, what", [
    (b"\x1f\x8b\x08\x00", "a gzip-compressed file"), (b"BZh91AY", "a bzip2-compressed file"),
    (b"\xfd7zXZ\x00\x00", "an xz-compressed file"), (b"\x28\xb5\x2f\xfd\x00", "a zstd-compressed file"),
    (b"PK\x03\x04\x14\x00", "a ZIP archive"), (b"%PDF-1.7\n", "a PDF"),
    (b"# signed 2026-12-01\nslakit: 1\ncontract:\n  id: x\n", "a slakit contract (YAML)"),
])
def test_a_file_that_is_no_log_says_what_it_is(tmp_path, lc, head, what):
    path = tmp_path / "log.csv"
    path.write_bytes(head + b"id,scope,target,start\n" * 3)
    with pytest.raises(InputError) as ei:
        load_incidents(path, lc, skip_bad_rows=True)
    (p,) = ei.value.problems
    assert p.code == "not_a_log" and p.message.startswith(f"the incident log is {what}") and p.fix


def test_a_quote_never_closed_names_its_row(write, lc):
    path = write("log.csv", HEADER + GOOD + '"G2,node,r01-n02,2027-02-03T10:00:00Z,,,,,,\n')
    with pytest.raises(InputError) as ei:
        load_incidents(path, lc)
    (p,) = ei.value.problems
    assert (p.code, p.row, p.line) == ("csv_invalid", 2, 3) and "never closed" in p.message


def test_an_empty_header_cell_is_named_for_what_it_is(write, lc):
    path = write("log.csv", HEADER.replace("severity,", ",") + GOOD)
    (w,) = [p for p in load_incidents(path, lc).warnings if p.code == "unknown_column"]
    assert w.message == "the header's cell 9 is empty: its column is ignored" and w.fix


@pytest.mark.parametrize("cell, fix", [
    ("2027-02-03T23:59:60Z", "leap seconds are not read"), ("2027-02-03T23:59:60.5+01:00", "leap seconds"),
    ("2027-02-03t10:00:00Z", "in upper case"), ("2027-02-03T10:00:00z", "in upper case"),
    ("yesterday", "write e.g. 2027-02-03T10:00:00Z"),
])
def test_a_timestamp_slakit_does_not_read_gets_the_fix_for_its_form(write, lc, cell, fix):
    path = write("log.csv", HEADER + f"X,node,r01-n01,{cell},,,,,,\n")
    with pytest.raises(InputError) as ei:
        load_incidents(path, lc)
    (p,) = ei.value.problems
    assert p.code == "timestamp_invalid" and fix in p.fix, p.format()
    jsonl = write("log.jsonl", '{"id": "X", "scope": "node", "target": "r01-n01", "start": "%s"}\n' % cell)
    with pytest.raises(InputError) as ei:
        load_incidents(jsonl, lc)
    (p,) = ei.value.problems
    assert p.code == "timestamp_invalid" and fix in p.fix, p.format()


@pytest.mark.parametrize("suffix", ["\u200b", "\x1b[31m", "\x00", "\u202e", "\U000e0041"])
def test_ids_with_hidden_characters_are_named_in_a_warning(write, lc, suffix):
    """INC-1 and INC-1 with a zero-width space are two ids that look the same: a warning names
    the rows (the log is read; the outputs show such characters as <U+hhhh>), on the Arrow path
    and the JSON one."""
    import json

    body = GOOD + GOOD.replace("G1", "G1" + suffix).replace("r01-n01", "r01-n02") + GOOD.replace("G1", "G3")
    log = load_incidents(write("log.csv", HEADER + body), lc)
    (w,) = [p for p in log.warnings if p.code == "id_hidden_characters"]
    assert w.severity == "warning" and "(row 2; the first: G1<U+" in w.message and w.fix
    assert len(log.frame) == 3
    rows = [dict(zip(HEADER.strip().split(","), line.split(","))) for line in body.splitlines()]
    jsonl = write("log.jsonl", "".join(json.dumps({k: v for k, v in r.items() if v}) + "\n" for r in rows))
    (w,) = [p for p in load_incidents(jsonl, lc).warnings if p.code == "id_hidden_characters"]
    assert "(row 2;" in w.message


def test_plain_ids_get_no_hidden_character_warning(write, lc):
    log = load_incidents(write("log.csv", HEADER + GOOD + GOOD.replace("G1", "G-2_x.y/z").replace("n01", "n02")), lc)
    assert not [p for p in log.warnings if p.code == "id_hidden_characters"]


def test_short_rows_are_filled_and_named_in_a_warning(write, lc):
    """A row with fewer cells than the header (an export cut short) is read with the missing
    cells empty, as before, but never silently: a `short_row` warning names the rows and the
    columns the first one lacks, and says when its end is among them (the incident then reads
    as open, counted until as_of)."""
    from calculators.incident_reasons import Reason

    header = "id,scope,target,start,end,impact\n"
    log = load_incidents(write("log.csv", header + "A1,node,r01-n01,2027-02-03T10:00:00Z,2027-02-03T11:00:00Z,down\n"
                               "\nA2,node,r01-n02,2027-02-03T10:00:00Z\n"
                               "A3,node,r01-n03,2027-02-03T10:00:00Z,2027-02-03T11:00:00Z\n"), lc)
    assert list(log.frame["id"]) == ["A1", "A2", "A3"]
    assert log.frame["end"].isna().tolist() == [False, True, False]
    (w,) = [p for p in log.warnings if p.code == Reason.SHORT_ROW]
    assert (w.severity, w.row, w.line) == ("warning", 2, 4)
    assert "2 rows have fewer cells than the header's 6" in w.message and "(rows 2, 3)" in w.message
    assert "no 'end', 'impact'" in w.message and "reads as open" in w.message and "(file line 4)" in w.message
    # a row lacking only a later column says nothing of an open incident
    log = load_incidents(write("log2.csv", header + "A1,node,r01-n01,2027-02-03T10:00:00Z,2027-02-03T11:00:00Z\n"), lc)
    (w,) = [p for p in log.warnings if p.code == Reason.SHORT_ROW]
    assert "no 'impact'" in w.message and "open" not in w.message
    # a cell longer than the csv module's default limit (131,072 characters) hides nothing
    big = "x" * 200_000
    log = load_incidents(write("log4.csv", header + f"A1,node,r01-n01,2027-02-03T10:00:00Z,,down\n"
                               f"A2,node,r01-n02\nA3,node,r01-n03,2027-02-03T10:00:00Z,,{big}\n"), lc,
                         skip_bad_rows=True)
    (w,) = [p for p in log.warnings if p.code == Reason.SHORT_ROW]
    assert w.row == 2
    # rows counted as the general reader counts them: a blank line or one of spaces and tabs
    # is no row, before the header too (such a line had hidden every short row, or been one)
    log = load_incidents(write("log5.csv", "\n \t\n" + header + "A1,node,r01-n01,2027-02-03T10:00:00Z,,down\n"
                               "  \nA2,node,r01-n02,2027-02-03T10:00:00Z\n"), lc)
    (w,) = [p for p in log.warnings if p.code == Reason.SHORT_ROW]
    assert (w.row, w.line) == (2, 6) and "1 row has" in w.message and "reads as open" in w.message
    log = load_incidents(write("log6.csv", header + "A1,node,r01-n01,2027-02-03T10:00:00Z,,down\n\t\n"
                               "A2,node,r01-n02,2027-02-03T10:00:00Z,,down\n"), lc)
    assert not [p for p in log.warnings if p.code == Reason.SHORT_ROW]
    # a hostile header name is shown as unknown_column shows it, cut short
    log = load_incidents(write("log7.csv", header.rstrip("\n") + ",x\x1b[2J" + "y" * 100 + "\n"
                               "A1,node,r01-n01,2027-02-03T10:00:00Z,,down\n"), lc)
    (w,) = [p for p in log.warnings if p.code == Reason.SHORT_ROW]
    assert "'x\\x1b[2J" in w.message and "..." in w.message and "\x1b" not in w.message
    # a whole log: no such warning
    log = load_incidents(write("log3.csv", header + "A1,node,r01-n01,2027-02-03T10:00:00Z,,down\n"), lc)
    assert not [p for p in log.warnings if p.code == Reason.SHORT_ROW]


def test_a_short_row_is_a_warning_on_the_command_line(write, tmp_path):
    from click.testing import CliRunner

    from slakit.cli import main

    root = Path(__file__).resolve().parents[2]
    log = write("log.csv", "id,scope,target,start,end\nA1,node,r01-n01,2027-02-03T10:00:00Z\n")
    res = CliRunner().invoke(main, ["credits", str(root / "examples" / "gb200-contract.yaml"), str(log),
                                    "--month", "2027-02", "-o", str(tmp_path / "out.txt")])
    assert res.exit_code == 0, res.output
    assert "[short_row]" in res.stderr and "log.csv row 1:" in res.stderr
