"""The performance service level: re-check measurements -> performance incidents -> the
level and credit per node and month (the worked example of docs/performance.md)."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from datetime import datetime, timezone
from decimal import Decimal

import pytest

from acceptance.performance_log import Measurement, apply, read_rows, write_rows

CONTRACT = """\
slakit: 1
contract: {id: perf-example, provider: P, customer: C, timezone: UTC, currency: USD}
topology:
  architecture: hgx-8gpu
  gpu_model: H100
  gpus_per_node: 8
  sites:
    - id: s1
      clusters:
        - id: c1
          racks:
            - {id: r1, nodes: "n[1-4]"}
pricing: {per_gpu_hour: 2.00}
downtime: {min_outage: 5m, degraded: DEGRADED}
service_levels:
  node:
    credits:
      - {below: 99.5%, credit: 10%}
      - {below: 99%, credit: 25%}
acceptance:
  criteria:
    - {id: gemm-bf16, check: gpu.gemm, metric: tflops_bf16, min: 1500}
performance:
  - id: gemm-perf
    criterion: gemm-bf16
    published: 2000
    floor: 90%
    target: 99%
    credits:
      - {below: 99%, credit: 10%}
      - {below: 95%, credit: 25%}
    source: provider datasheet, dense BF16 per GPU
"""

UTC = timezone.utc
FLOOR = Decimal("1800")


def at(day: int, hour: int) -> datetime:
    return datetime(2027, 2, day, hour, tzinfo=UTC)


def m(node: str, value: float, when: datetime) -> Measurement:
    return Measurement("gemm-perf", node, value, FLOOR, when)


def test_incidents_open_at_the_first_failing_measurement_and_close_at_the_next_passing():
    rows, ch = apply([], [m("n2", 1700, at(10, 0)), m("n1", 1990, at(10, 0))])
    assert [c.kind for c in ch] == ["opened"] and rows[0]["target"] == "n2" and rows[0]["end"] == ""
    assert rows[0]["category"] == "performance" and rows[0]["impact"] == "degraded"
    rows, ch = apply(rows, [m("n2", 1750, at(10, 6))])        # still below: stays open, no new row
    assert ch == [] and len(rows) == 1
    rows, ch = apply(rows, [m("n2", None, at(10, 9))])        # no measurement: nothing changes
    assert ch == [] and rows[0]["end"] == ""
    rows, ch = apply(rows, [m("n2", 1950, at(10, 12))])
    assert [c.kind for c in ch] == ["closed"] and rows[0]["end"] == "2027-02-10T12:00:00Z"
    rows, ch = apply(rows, [m("n2", 1800, at(11, 0))])        # exactly at the floor is not below
    assert ch == [] and len(rows) == 1


def _log(tmp_path):
    rows: list = []
    for meas in ([m("n2", 1700, at(10, 0))], [m("n2", 1950, at(10, 12))],
                 [m("n3", 1790, at(20, 6))], [m("n3", 1810, at(20, 8))]):
        rows, _ = apply(rows, meas)
    # An ordinary unplanned outage too, so availability has something to count.
    rows.append({"id": "INC-1", "scope": "node", "target": "n4", "start": "2027-02-03T10:00:00Z",
                 "end": "2027-02-03T15:00:00Z", "impact": "down", "category": "unplanned", "cause": "PSU"})
    path = tmp_path / "incidents.csv"
    write_rows(path, ["id", "scope", "target", "start", "end", "impact", "category", "cause"], rows)
    return path


@pytest.mark.parametrize("degraded", ["ignore", "down"])
def test_worked_example_performance_level_and_credit(tmp_path, degraded):
    contract = tmp_path / "c.yaml"
    contract.write_text(CONTRACT.replace("DEGRADED", degraded), encoding="utf-8")
    log = _log(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "slakit", "credits", str(contract), str(log), "--period", "2027-02",
                           "--format", "json"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    (month,) = doc["periods"]
    # Availability: only n4's 5 h outage counts (performance incidents never do, even with
    # degraded: down): 1 - 300/40320 = 99.2559% -> 10% of 10,752.00.
    units = {u["id"]: u for u in month["units"] if u["scope"] == "node"}
    assert units["n2"]["downtime_seconds"] == 0 and units["n3"]["downtime_seconds"] == 0
    assert units["n4"]["credit"] == "1075.20" and month["credit_total"] == "1075.20"
    (level,) = doc["performance"]
    assert level["floor_value"] == "1800" and level["target_pct"] == "99"
    (pm,) = level["months"]
    perf = {u["node"]: u for u in pm["units"]}
    # n2 below the floor 12 h: 1 - 720/40320 = 98.2142% < 99% -> 10% -> 1,075.20.
    assert perf["n2"]["seconds_below_floor"] == 12 * 3600 and perf["n2"]["met"] is False
    assert perf["n2"]["credit"] == "1075.20"
    # n3 below 2 h: 99.7023%, met, no credit.
    assert perf["n3"]["seconds_below_floor"] == 7200 and perf["n3"]["met"] is True and perf["n3"]["credit"] == "0.00"
    assert pm["credit_total"] == "1075.20" and pm["nodes_below_target"] == 1


def test_table_shows_the_performance_level(tmp_path):
    contract = tmp_path / "c.yaml"
    contract.write_text(CONTRACT.replace("DEGRADED", "ignore"), encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "slakit", "credits", str(contract), str(_log(tmp_path)),
                           "--period", "2027-02"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "Performance level gemm-perf" in proc.stdout and "1 of 4 node(s) below target" in proc.stdout


def test_contract_checks_the_level(tmp_path):
    bad = CONTRACT.replace("DEGRADED", "ignore").replace("criterion: gemm-bf16", "criterion: gemm-fp8") \
        .replace("published: 2000", "published: 0")
    path = tmp_path / "c.yaml"
    path.write_text(bad, encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "slakit", "validate", str(path), "--format", "json"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert "performance[0].published" in proc.stdout
    # Once the structure is valid, the named criterion must exist.
    bad = CONTRACT.replace("DEGRADED", "ignore").replace("criterion: gemm-bf16", "criterion: gemm-fp8")
    path.write_text(bad, encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "slakit", "validate", str(path), "--format", "json"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "unknown_criterion" in proc.stdout


def test_log_rewrite_keeps_other_rows_and_columns(tmp_path):
    path = tmp_path / "log.csv"
    path.write_text("id,scope,target,start,end,ticket\nT-1,node,n1,2027-02-01T00:00:00Z,,=cmd\n", encoding="utf-8")
    header, rows = read_rows(path)
    assert header[:6] == ["id", "scope", "target", "start", "end", "ticket"] and "category" in header
    rows, _ = apply(rows, [m("n2", 1, at(1, 0))])
    write_rows(path, header, rows)
    back = list(csv.DictReader(path.open(encoding="utf-8")))
    assert back[0]["id"] == "T-1" and back[0]["ticket"] == "=cmd" and back[1]["target"] == "n2"


@pytest.mark.parametrize("row", ["T-2,node,n1,2027-02-01T00:00:00Z", "T-2,node,n1,2027-02-01T00:00:00Z,,x,extra"])
def test_a_cut_off_or_overlong_row_is_refused_and_the_log_left_as_it_is(tmp_path, row):
    from slaschema.errors import InputError

    path = tmp_path / "log.csv"
    text = "id,scope,target,start,end,ticket\nT-1,node,n1,2027-02-01T00:00:00Z,,=cmd\n\n" + row + "\n"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as exc:
        read_rows(path)
    (p,) = exc.value.problems
    assert (p.code, p.file, p.row) == ("log_row_fields", str(path), 2) and "where the header has 6" in p.message
    assert path.read_text(encoding="utf-8") == text


def test_as_incidents_refuses_a_contract_or_log_it_cannot_use_before_running_anything(tmp_path):
    """`accept run --as-incidents LOG` found a contract without performance levels, or a LOG it
    cannot read, only after the run (hours of burn-in or NCCL lost); now before, with no bundle made."""
    from click.testing import CliRunner

    from slakit.cli import main

    no_levels = tmp_path / "no-levels.yaml"
    text = CONTRACT.replace("DEGRADED", "proportional")
    no_levels.write_text(text.split("performance:\n")[0], encoding="utf-8")
    with_levels = tmp_path / "perf.yaml"
    with_levels.write_text(text, encoding="utf-8")
    bad_log = tmp_path / "bad.csv"
    bad_log.write_bytes(b"id,scope\n\xff\xfe\n")
    for contract, log, code in ((no_levels, tmp_path / "new.csv", "no_performance_levels"),
                                (with_levels, bad_log, "log_not_utf8")):
        out = tmp_path / f"run-{code}"
        r = CliRunner().invoke(main, ["accept", "run", str(contract), "--out", str(out), "--no-progress",
                                      "--as-incidents", str(log)])
        assert r.exit_code == 1 and f"[{code}]" in r.output, r.output
        assert not out.exists()
    assert bad_log.read_bytes() == b"id,scope\n\xff\xfe\n"
