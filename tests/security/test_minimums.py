"""The minimum-version table: the shipped JSON, the CSV, the ClusterMAX JSON, URLs, and age."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from datetime import date, datetime, timezone
from functools import partial
from http.server import HTTPServer, SimpleHTTPRequestHandler
from pathlib import Path

import pytest

from acceptance.security.minimums import (
    entries_for,
    load_minimums,
    parse_table,
    staleness,
)
from slaschema.errors import InputError

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
CSV = SHARED / "data" / "security-minimum-versions.csv"
FIXTURES = Path(__file__).parent / "fixtures"


def test_shipped_table_keeps_every_fact():
    t = load_minimums()
    assert t.generated == date(2026, 9, 25)
    assert t.source == "https://clustermax.ai/minimum-versions"
    assert len(t.entries) == 26
    cuda = t.for_component("cuda_toolkit")[0]
    assert cuda.minimum == "13.1"
    assert cuda.cves == ("CVE-2025-33228", "CVE-2025-33229", "CVE-2025-33230", "CVE-2025-33231")
    assert cuda.source == "https://nvidia.custhelp.com/app/answers/detail/a_id/5755/"
    assert cuda.published == date(2026, 1, 20)
    assert sorted(t.lines("nvidia_driver")) == ["535", "570", "580", "590", "595"]
    assert {e.minimum for e in entries_for(t, "linux_kernel_ubuntu_noble", "6.8.0")} == {"6.8.0-137.137", "6.8.0-124.124"}


def test_build_script_reproduces_the_shipped_json(tmp_path):
    if not CSV.exists():
        pytest.skip(f"{CSV} not present (shared data lives next to the repository)")
    out = tmp_path / "m.json"
    subprocess.run([sys.executable, str(REPO / "scripts" / "build-security-minimums"), "--csv", str(CSV),
                    "--out", str(out), "--generated", "2026-09-25"], check=True, capture_output=True)
    shipped = (REPO / "acceptance" / "security" / "minimums.json").read_text()
    assert out.read_text() == shipped
    doc = json.loads(shipped)
    assert doc["built_from"] == "security-minimum-versions.csv"
    assert all(set(e) == {"component", "line", "minimum", "advisory", "cves", "source", "published"}
               for e in doc["entries"])


def test_csv_loads_dated_by_newest_advisory():
    if not CSV.exists():
        pytest.skip(f"{CSV} not present")
    t = load_minimums(CSV)
    assert t.generated is None and t.date_basis == "latest_advisory"
    assert t.as_of == date(2026, 8, 12)
    assert len(t.entries) == 26


def test_clustermax_shape():
    t = load_minimums(FIXTURES / "clustermax-minimums.json")
    assert t.generated == date(2026, 10, 20)
    drv = {e.line: e for e in t.for_component("nvidia_driver")}
    assert set(drv) == {"570", "580", "595"}
    assert drv["570"].advisory == "NVIDIA security bulletin a_id 5747"          # floor's own advisory
    assert drv["580"].advisory == "NVIDIA security bulletin a_id 5821"          # component default
    assert drv["580"].published == date(2026, 5, 19)
    cuda = t.for_component("cuda_toolkit")                                       # "cuda" normalised
    assert [(e.line, e.minimum, e.cves) for e in cuda] == [("", "13.1", ("CVE-2025-33228", "CVE-2025-33229"))]
    runc = {e.line: e for e in t.for_component("runc")}
    assert runc["1.2"].minimum == "1.2.8" and runc["1.2"].cves == ("CVE-2026-0001",)
    fw = {e.line: e.minimum for e in t.for_component("connectx_firmware")}
    assert fw == {"28": "28.4702", "32": "32.1908"}
    ladder = t.for_component("linux_kernel_ubuntu_noble")
    assert [(e.line, e.minimum, e.advisory) for e in ladder] == [
        ("6.8.0", "6.8.0-124.124", "USN-8373-1"),
        ("6.8.0", "6.8.0-137.137", "USN-8630-1"),
        ("6.14.0", "6.14.0-37.37", "USN-8631-1"),
    ]
    assert t.for_component("slurm")[0].minimum == "25.05.5"                    # unknown component kept


@pytest.mark.parametrize("doc,code", [
    ({"components": {"runc": {"branches": {"1.2": "one.two"}}}}, "minimums_bad_version"),
    ({"components": {"runc": {"versions": ["1.2.8"]}}}, "minimums_unknown_shape"),
    ({"components": {"runc": {"ladder": {"1.2": "1.2.8"}}}}, "minimums_unknown_shape"),
    ({"components": {"runc": {"branches": {"1.2": {"advisory": "x"}}}}}, "minimums_missing_field"),
    ({"generated": "25/09/2026", "components": {"runc": {"minimum": "1.2.8"}}}, "minimums_bad_date"),
    ({"components": ["runc"]}, "minimums_unknown_shape"),
])
def test_clustermax_problems(doc, code):
    with pytest.raises(InputError) as exc:
        parse_table(json.dumps(doc), "t.json")
    assert code in exc.value.codes


def test_all_problems_reported_at_once():
    text = "component,line,minimum,advisory,cves,source,published\n" \
           "runc,1.2,1.2.x,a,,s,2026-01-01\nnvidia_driver,570,570.211.01,a,,s,2026-13-01\ncuda_toolkit,,,a,,s,\n"
    with pytest.raises(InputError) as exc:
        parse_table(text, "t.csv")
    assert [(p.code, p.row, p.column) for p in exc.value.problems] == [
        ("minimums_bad_version", 1, "minimum"), ("minimums_bad_date", 2, "published"),
        ("minimums_missing_field", 3, "minimum")]


def test_unknown_shape_and_bad_json():
    with pytest.raises(InputError) as exc:
        parse_table("hello", "t.txt")
    assert exc.value.codes == ["minimums_unknown_shape"]
    with pytest.raises(InputError) as exc:
        parse_table('{"components": ', "t.json")
    assert exc.value.codes == ["minimums_bad_json"]
    assert exc.value.problems[0].line == 1



@pytest.mark.parametrize("text", ['{"entries": [], "x": 1' + "0" * 5000 + "}", '{"a":' * 100_000 + "1" + "}" * 100_000])
def test_json_python_cannot_read_is_bad_json(text):
    # a 5,001-digit integer (ValueError) or nesting 100,000 deep (RecursionError) was an
    # [unexpected_error] of `security audit --minimums FILE`
    with pytest.raises(InputError) as exc:
        parse_table(text, "t.json")
    assert exc.value.codes == ["minimums_bad_json"] and exc.value.problems[0].fix


def test_missing_file():
    with pytest.raises(InputError) as exc:
        load_minimums("/nonexistent/minimums.json")
    assert exc.value.codes == ["minimums_unreadable"]


@pytest.fixture
def http_dir(tmp_path):
    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), partial(Quiet, directory=str(tmp_path)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield tmp_path, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_load_from_url(http_dir):
    root, base = http_dir
    (root / "cmax.json").write_text((FIXTURES / "clustermax-minimums.json").read_text())
    t = load_minimums(f"{base}/cmax.json", timeout=5)
    assert t.generated == date(2026, 10, 20)
    assert len(t.for_component("runc")) == 3
    with pytest.raises(InputError) as exc:
        load_minimums(f"{base}/missing.json", timeout=5)
    assert exc.value.codes == ["minimums_unreachable"]


def test_unreachable_url_times_out_quickly():
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(0)            # accepts the connection but never answers
    try:
        with pytest.raises(InputError) as exc:
            load_minimums(f"http://127.0.0.1:{s.getsockname()[1]}/t.json", timeout=0.5)
        assert exc.value.codes == ["minimums_unreachable"]
    finally:
        s.close()


def test_staleness_boundary():
    t = load_minimums()                       # generated 2026-09-25
    assert staleness(t, datetime(2026, 12, 24, 23, 0, tzinfo=timezone.utc)).reason == "table_current"   # 90 days
    late = staleness(t, datetime(2026, 12, 25, tzinfo=timezone.utc))
    assert (late.status, late.reason, late.age_days) == ("warn", "table_stale", 91)
    assert staleness(t, date(2026, 11, 30), max_age_days=30).reason == "table_stale"
    undated = parse_table('{"components": {"runc": {"minimum": "1.2.8"}}}', "x.json")
    assert staleness(undated, date(2026, 11, 30)).reason == "table_undated"
