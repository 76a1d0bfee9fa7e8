import pytest
from click.testing import CliRunner

from calculators.importers.slurm_events import parse_events
from slakit.cli import main
from slaschema.errors import InputError

# the shape `sacctmgr -P show event` prints on the testbed (Slurm 22.05)
EVENTS = """Cluster|NodeName|TimeStart|TimeEnd|State|Reason|User
testbed17817||2026-12-01T09:31:20|Unknown||Cluster Registered TRES|
testbed17817|gpu-01|2026-12-01T09:31:20|2026-12-01T09:31:21|UNK|cold-start|root(0)
testbed17817|gpu-02|2026-12-01T09:31:27|Unknown|DOWN|gpu-02 lost power|root(0)
testbed17817|gpu-03|2026-12-01T09:31:27|2026-12-01T09:31:27|DOWN|gpu-03 xid 79|root(0)
testbed17817|gpu-04|2026-12-01T10:00:00|2026-12-01T10:20:00|DRAIN|bad fan|root(0)
testbed17817|gpu-04|2026-12-01T10:15:00|2026-12-01T10:40:00|DOWN*|Not responding|slurm(64030)
testbed17817|gpu-04|2026-12-01T11:00:00|2026-12-01T11:05:00|IDLE+DRAIN|none|root(0)
other|gpu-04|2026-12-01T12:00:00|2026-12-01T12:05:00|DOWN|other cluster|root(0)
"""


def test_out_of_service_events_become_incidents():
    imp = parse_events(EVENTS, "UTC", cluster="testbed17817")
    rows = [i.row() for i in imp.incidents]
    assert [(r["id"], r["start"], r["end"], r["cause"]) for r in rows] == [
        ("gpu-02-20261201T093127Z", "2026-12-01T09:31:27Z", "", "gpu-02 lost power"),       # still open
        ("gpu-03-20261201T093127Z", "2026-12-01T09:31:27Z", "2026-12-01T09:31:27Z", "gpu-03 xid 79"),
        ("gpu-04-20261201T100000Z", "2026-12-01T10:00:00Z", "2026-12-01T10:40:00Z", "bad fan"),  # drain then down: one
        ("gpu-04-20261201T110000Z", "2026-12-01T11:00:00Z", "2026-12-01T11:05:00Z", "IDLE+DRAIN"),  # no reason: state
    ]
    assert all(r["scope"] == "node" and r["impact"] == "down" and r["category"] == "unplanned" for r in rows)
    assert rows[0]["detected_at"] == rows[0]["start"]
    assert (imp.events_read, imp.events_out) == (6, 5)       # the cold-start UNK event is not an outage
    assert len(parse_events(EVENTS, "UTC").incidents) == 5   # without --cluster the other cluster's event counts


def test_zone_and_errors():
    imp = parse_events(EVENTS, "Europe/Berlin", cluster="testbed17817")
    assert imp.incidents[0].row()["start"] == "2026-12-01T08:31:27Z"
    bad = EVENTS.replace("2026-12-01T10:20:00", "yesterday").replace("2026-12-01T11:05:00", "2026-12-01T10:55:00")
    with pytest.raises(InputError) as e:
        parse_events(bad, "UTC", file="ev.txt")
    assert {(p.code, p.row, p.column) for p in e.value.problems} == {
        ("events_time_invalid", 5, "TimeEnd"), ("events_end_before_start", 7, "TimeEnd")}
    with pytest.raises(InputError) as e:
        parse_events("Cluster|NodeName\nx|y\n", "UTC")
    assert {p.code for p in e.value.problems} == {"events_missing_column"}


def test_cli(tmp_path):
    f = tmp_path / "events.txt"
    f.write_text(EVENTS)
    out = tmp_path / "inc.csv"
    r = CliRunner().invoke(main, ["import", "slurm-events", str(f), "--assume-tz", "UTC", "--cluster", "testbed17817",
                                  "-o", str(out)])
    assert r.exit_code == 0, r.output
    lines = out.read_text().splitlines()
    assert lines[0] == "id,scope,target,start,end,impact,category,cause,detected_at" and len(lines) == 5
    f.write_text(EVENTS.replace("2026-12-01T10:00:00|", "10 o'clock|"))
    r = CliRunner().invoke(main, ["import", "slurm-events", str(f), "--assume-tz", "UTC", "-o", str(tmp_path / "x.csv")])
    assert r.exit_code == 1 and "[events_time_invalid]" in r.output and "Traceback" not in r.output
    assert not (tmp_path / "x.csv").exists()
