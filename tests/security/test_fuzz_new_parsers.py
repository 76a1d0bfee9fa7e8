"""Property-based fuzzing of the parsers of the newer input files (claims ledger, sacct -P,
sacctmgr node events, waiver YAML, training logs): whatever the text, each either returns or
raises InputError with coded problems; no other exception escapes. A few seconds each."""

from __future__ import annotations

import string
from datetime import timezone

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slaschema.errors import InputError

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None)

LEDGER_HEADER = "contract,month,amount_claimed,currency,due,filed,reference,answer,amount_accepted,amount_paid,paid_on,note"
SACCT_HEADER = "JobID|State|ExitCode|NodeList|NNodes|AllocTRES|Start|End|Elapsed|Reason|Comment"
EVENTS_HEADER = "Cluster|NodeName|TimeStart|TimeEnd|State|Reason|User"

# cells that look almost right: far dates, huge numbers, hostlists, markup, formulas, NUL
TRICKY = st.sampled_from([
    "", "0001-01-01", "9999-12-31", "0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-12:00", "2027-13-01",
    "2027-02-30T25:61:61", "Unknown", "None", "1e99999999", "-1", "NaN", "Infinity", "9" * 40, "gpu-[01-02]",
    "n[0-99999999]", "gpu-[02-01]", "gres/gpu=" + "9" * 30, "gres/gpu:h100=-3", "=HYPERLINK(1)", "[/bold]",
    "\x1b]0;x\x07", '"', "\x00", "DOWN+DRAIN", "99999999-99:99:99", "checkpoint_interval=99999999999d",
    "last_checkpoint=0001-01-01T00:00:00", "2027-02-01T00:00:00", "2027-02-01T10:00:00", "USD", "partial", "gpu-01",
])
CELL = st.one_of(TRICKY, st.text(alphabet=string.printable + "é\u202e", max_size=12))


def _table(header: str, sep: str, cells=CELL):
    n = header.count(sep) + 1
    row = st.lists(cells, min_size=max(n - 2, 0), max_size=n + 2).map(lambda r: sep.join(c.replace("\n", " ") for c in r))
    return st.lists(row, max_size=6).map(lambda rows: "\n".join([header, *rows]) + "\n")


@FUZZ
@given(_table(LEDGER_HEADER, ","))
def test_ledger(tmp_path_factory, text):
    from calculators.claim_ledger import read_ledger, status_rows, totals

    p = tmp_path_factory.mktemp("ledger") / "claims.csv"
    p.write_text(text, encoding="utf-8")
    try:
        rows = read_ledger(p)
    except InputError as e:
        assert all(pr.code for pr in e.problems)
        return
    totals(status_rows(rows, 1_800_000_000))


@FUZZ
@given(_table(SACCT_HEADER, "|"))
def test_sacct(text):
    from calculators.goodput.sacct import parse_sacct

    for data in (text, text.encode("utf-8")):
        try:
            parse_sacct(data, ["gpu-01", "gpu-02"], [8, 8], "UTC", skip_bad_rows=False)
        except InputError as e:
            assert all(pr.code for pr in e.problems)


@FUZZ
@given(_table(EVENTS_HEADER, "|"))
def test_slurm_events(text):
    from calculators.importers.slurm_events import events_csv, parse_events

    try:
        imp = parse_events(text, "America/Chicago")
    except InputError as e:
        assert all(pr.code for pr in e.problems)
        return
    events_csv(imp)


WAIVER_VALUE = st.one_of(TRICKY, st.integers(), st.none(), st.lists(TRICKY, max_size=2), st.booleans())


@FUZZ
@given(st.lists(st.dictionaries(st.sampled_from(["criterion", "nodes", "reason", "approved_by", "expires", "x"]),
                                WAIVER_VALUE, max_size=6), max_size=4))
def test_waivers(tmp_path_factory, items):
    import json

    from acceptance.waivers import load_waivers

    p = tmp_path_factory.mktemp("waivers") / "w.yaml"
    p.write_text(json.dumps({"waivers": items}), encoding="utf-8")        # JSON is YAML
    try:
        load_waivers(p, criteria=["gpu-inventory"], units=["gpu-01", "gpu-02", "r1"], tz=timezone.utc)
    except InputError as e:
        assert all(pr.code for pr in e.problems)


@FUZZ
@given(st.lists(st.one_of(TRICKY, st.sampled_from([
    "[titan] 2027-01-01 00:00:00,000 - root - INFO - step: 10 loss: 1",
    "[titan] 9999-12-31 23:59:59,999 - root - INFO - step: 99999999999999999999 loss: 1",
    "[titan] 0001-01-01 00:00:00,000 - root - INFO - step: -1 loss: 1"])), max_size=8))
def test_training_log(lines):
    from calculators.goodput.trainlog import BUILTIN, productivity, step_points

    text = "\n".join(lines) + "\n"
    try:
        points = step_points(text, BUILTIN["torchtitan"])
        productivity("1", points, "torchtitan")
    except InputError as e:
        assert all(pr.code for pr in e.problems)
