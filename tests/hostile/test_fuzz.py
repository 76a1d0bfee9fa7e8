"""Property-based fuzzing of the commands' inputs (hypothesis), bounded to about a minute.

Every input either works or is refused as a coded problem: no traceback, exit status 1
(2 for a bad command-line value), and no output file left behind by a failed command."""

from __future__ import annotations

import json
import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slaschema.errors import InputError
from tests.hostile.conftest import cli

REPO = Path(__file__).resolve().parents[2]
CONTRACT = REPO / "examples" / "gb200-contract.yaml"
CONTRACT_TEXT = CONTRACT.read_text(encoding="utf-8")
LOG_HEADER = "id,scope,target,start,end,impact,gpus_affected,category,cause"
FAST = settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck), database=None)
SLOW = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), database=None)

# values that broke things once, and their neighbours
NASTY = st.one_of(
    st.sampled_from(["99999999999d", "1e99999999", "1e-99999999", "-1", "0", "NaN", ".inf", "1:30", "010", "yes",
                     "0001-01-01", "9999-12-31", "2027-02-30", "P99999999999D", "100.0000001%", "1e9999%", "[]", "{}",
                     "*x", "&x y", "!!python/object:os.system", "~", "''", "\"\\u0000\"", "n[0-99999999999]",
                     "r[1-3]-n[0-999999,0-999999]", "[/bold]", "\x1b[31m", "=HYPERLINK(1)", "x" * 2000, "%Q",
                     "+14:00", "Etc/GMT+99", "-0", "1_000", "0x10", "1e308", "2e400"]),
    st.integers(min_value=-(10 ** 30), max_value=10 ** 30).map(str),
    st.text(min_size=0, max_size=40),
    st.from_regex(r"[0-9]{1,14}(\.[0-9]{1,30})?(e-?[0-9]{1,9})?[smhdw%]?", fullmatch=True),
)

_VALUE_LINE = re.compile(r"^(\s*[-\s]*[A-Za-z_]+:\s)(\S.*)$")
VALUE_LINES = [i for i, ln in enumerate(CONTRACT_TEXT.splitlines()) if _VALUE_LINE.match(ln) and "#" not in ln]


def _yaml_scalar(v: str) -> str:
    return json.dumps(v) if not re.fullmatch(r"[A-Za-z0-9.%_:+\-]*", v) else v


@FAST
@given(edits=st.lists(st.tuples(st.sampled_from(VALUE_LINES), NASTY), min_size=1, max_size=3))
def test_contract_values(edits):
    """Any field of the example contract set to a hostile value: loads or InputError."""
    from slaschema.loader import load_contract_text

    lines = CONTRACT_TEXT.splitlines()
    for i, v in edits:
        m = _VALUE_LINE.match(lines[i])
        if m:
            lines[i] = m.group(1) + _yaml_scalar(v)
    try:
        load_contract_text("\n".join(lines) + "\n", "fuzz.yaml", CONTRACT.parent)
    except InputError as exc:
        assert exc.problems and all(p.code for p in exc.problems)


@FAST
@given(st.text(alphabet="ab01-9[],- \n", max_size=60))
def test_hostlists(expr):
    from slaschema import hostlist

    try:
        names = hostlist.expand(expr, limit=5000)
    except hostlist.HostlistError as exc:
        assert exc.code.startswith("hostlist_")
        return
    assert hostlist.count(expr) == len(names)


@FAST
@given(st.text(max_size=400))
def test_inventory_text(text):
    from slaschema.topology import parse_inventory

    topo, problems = parse_inventory("node,rack,cluster,site,gpus\n" + text, "inv.csv", 8)
    assert (topo is None) == bool(problems)


@settings(max_examples=300, deadline=None, database=None)
@given(NASTY)
def test_field_parsers(value):
    from pydantic_core import PydanticCustomError

    from slaschema.types import parse_duration, parse_money, parse_percent, parse_threshold

    for parse in (parse_duration, parse_money, parse_percent, parse_threshold):
        try:
            parse(value)
        except PydanticCustomError:
            pass


CELL = st.one_of(NASTY, st.sampled_from(["node", "rack", "cluster", "site", "r01-n01", "r01-n[01-03]", "down",
                                         "degraded", "2027-01-05T03:00:00Z", "2027-01-05T04:00:00-06:00", ""]))


def _csv_cell(v: str) -> str:
    return '"' + v.replace('"', '""') + '"'


@SLOW
@given(rows=st.lists(st.lists(CELL, min_size=9, max_size=9), min_size=1, max_size=4))
def test_incident_logs(tmp_path_factory, rows):
    tmp = tmp_path_factory.mktemp("log")
    log = tmp / "log.csv"
    log.write_text(LOG_HEADER + "\n" + "\n".join(",".join(_csv_cell(c) for c in r) for r in rows) + "\n",
                   encoding="utf-8", errors="replace")
    out = tmp / "credits.json"
    r = cli("credits", CONTRACT, log, "--period", "2027-01", "--format", "json", "-o", out)
    _no_traceback(r)
    if r.exit_code != 0:
        assert not out.exists()


@SLOW
@given(rows=st.lists(st.lists(CELL, min_size=5, max_size=5), min_size=1, max_size=4))
def test_reconcile_inputs(tmp_path_factory, rows):
    tmp = tmp_path_factory.mktemp("rec")
    ours = tmp / "ours.csv"
    ours.write_text("id,scope,target,start,end\nI1,node,n1,2027-01-05T03:00:00Z,2027-01-05T04:00:00Z\n")
    theirs = tmp / "theirs.csv"
    theirs.write_text("id,scope,target,start,end\n" + "\n".join(",".join(_csv_cell(c) for c in r) for r in rows)
                      + "\n", encoding="utf-8", errors="replace")
    _no_traceback(cli("reconcile", ours, theirs, "--format", "json"))


@SLOW
@given(label=NASTY, option=st.sampled_from(["--period", "--quarter", "--history-from", "--as-of", "--assume-tz"]))
def test_command_line_values(label, option):
    args = ["credits", CONTRACT, REPO / "examples" / "gb200-incidents-2027Q1.csv", option, label]
    if option in ("--history-from", "--as-of", "--assume-tz"):
        args += ["--period", "2027-02"]
    _no_traceback(cli(*args), usage_ok=True)


@SLOW
@given(fmt=NASTY, tz=NASTY, start=NASTY)
def test_ticket_maps(tmp_path_factory, fmt, tz, start):
    tmp = tmp_path_factory.mktemp("map")
    m = (REPO / "examples" / "ticket-map.yaml").read_text(encoding="utf-8")
    m = m.replace('format: "%m/%d/%Y %H:%M"', f"format: {json.dumps(fmt)}").replace(
        "timezone: America/Chicago", f"timezone: {json.dumps(tz)}")
    (tmp / "map.yaml").write_text(m, encoding="utf-8")
    (tmp / "export.csv").write_text("Number,Level,Configuration item,Fault start,Restored,Type,Short description\n"
                                    f"INC1,Node,r01-n01,{_csv_cell(start)},01/05/2027 04:00,Incident,x\n",
                                    encoding="utf-8", errors="replace")
    out = tmp / "out.csv"
    r = cli("import", "csv", tmp / "export.csv", "--map", tmp / "map.yaml", "-o", out)
    _no_traceback(r)
    if r.exit_code != 0:
        assert not out.exists()


JSONISH = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), NASTY),
                       lambda kids: st.lists(kids, max_size=3) | st.dictionaries(NASTY, kids, max_size=3),
                       max_leaves=12)


@SLOW
@given(doc=st.one_of(JSONISH, st.fixed_dictionaries({"format": st.just("slakit-acceptance-run/1"),
                                                     "criteria": st.lists(JSONISH, max_size=2),
                                                     "contract": JSONISH, "run": JSONISH, "status": NASTY})))
def test_results_documents(tmp_path_factory, doc):
    from acceptance.evidence import Bundle

    tmp = tmp_path_factory.mktemp("bundle")
    b = Bundle(tmp / "b")
    b.write("results.json", json.dumps(doc))
    b.write_manifest()
    for fmt in ("json", "table"):
        _no_traceback(cli("accept", "report", tmp / "b", "--format", fmt))
    out = tmp / "cert.pdf"
    r = cli("accept", "report", tmp / "b", "-o", out)
    _no_traceback(r)
    if r.exit_code != 0:
        assert not out.exists()


def _no_traceback(result, usage_ok: bool = False) -> None:
    text = result.output
    assert "Traceback" not in text, text[-3000:]
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    allowed = (0, 1, 2) if usage_ok else (0, 1)
    assert result.exit_code in allowed, text[-2000:]
    if result.exit_code == 1:
        assert re.search(r"\[[a-z_]+\]|\"code\": \"[a-z_]+\"|NOT OK|fail|error", text), text[-2000:]
