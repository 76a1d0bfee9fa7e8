"""Goodput figures of one month worked out by hand (GPU-seconds in the comments)."""

import json

import pytest
from click.testing import CliRunner

from calculators.goodput.compute import compute_goodput
from calculators.goodput.sacct import parse_sacct
from calculators.incidents import load_incidents
from calculators.periods import parse_periods
from slakit.cli import main
from tests.goodput._data import contract, sacct, write

INCIDENTS = """id,scope,target,start,end,impact,category,cause
inc-a,node,gpu-03,2027-01-10T10:00:00Z,2027-01-10T14:00:00Z,down,unplanned,PSU failure
inc-b,rack,r1,2027-01-20T00:00:00Z,2027-01-20T02:00:00Z,down,unplanned,ToR switch
"""
JOBS = sacct(
    "99|COMPLETED|0:0|gpu-04|1|gres/gpu=8|2026-12-31T22:00:00|2027-01-01T02:00:00|04:00:00|None|",      # 8 x 7200 in Jan
    "100|COMPLETED|0:0|gpu-[01-02]|2|cpu=16,gres/gpu=16|2027-01-05T00:00:00|2027-01-05T10:00:00|10:00:00|None|",
    "101|NODE_FAIL|0:0|gpu-03|1|cpu=8,node=1|2027-01-10T06:00:00|2027-01-10T10:00:30|04:00:30|None|",   # 8 x 14430
    "101|COMPLETED|0:0|gpu-04|1|cpu=8,node=1|2027-01-10T11:00:00|2027-01-10T13:00:00|02:00:00|None|",
    "102|REQUEUED|0:0|gpu-01|1|gres/gpu=8|2027-01-19T22:00:00|2027-01-20T00:01:00|02:01:00|None|"
    "last_checkpoint=2027-01-19T23:30:00",
    "103|REQUEUED|0:0|gpu-04|1|gres/gpu=8|2027-01-25T00:00:00|2027-01-25T01:00:00|01:00:00|None|",
    "104|NODE_FAIL|0:0|gpu-02|1|gres/gpu=8|2027-01-28T00:00:00|2027-01-28T03:20:00|03:20:00|None|",
    "105|FAILED|1:0|gpu-03|1|gres/gpu=8|2027-01-30T00:00:00|2027-01-30T01:00:00|01:00:00|None|",
    "106|RUNNING|0:0|gpu-01|1|gres/gpu=8|2027-01-31T20:00:00|Unknown|04:00:00|None|",
)


@pytest.fixture
def inputs(tmp_path):
    lc = contract(tmp_path)
    log = load_incidents(write(tmp_path, "inc.csv", INCIDENTS), lc)
    runs = parse_sacct(JOBS, lc.topology.nodes, lc.topology.node_gpus, "UTC")
    return lc, log, runs, tmp_path


def test_month_figures(inputs):
    lc, log, runs, _ = inputs
    plist = parse_periods(["2027-01"], "UTC")
    res = compute_goodput(lc, runs, plist, log=log, checkpoint_interval_s=3600)
    m = res.to_json()["periods"][0]
    assert m["paid_gpu_hours"] == m["contracted_gpu_hours"] == "23808.00"     # 32 GPUs x 744 h
    assert m["available_gpu_hours"] == "23744.00"                             # - gpu-03 4 h - r1 2 nodes x 2 h, x 8
    assert m["allocated_gpu_hours"] == "314.87"                               # 1,133,520 GPU-s
    assert m["completed_gpu_hours"] == "192.00"                               # 99 (Jan part), 100, 101 rerun
    assert m["lost_gpu_hours"] == "6.87"                                      # 240 + 14,880 + 9,600 GPU-s
    assert m["useful_gpu_hours"] == "308.00"
    assert m["goodput_pct"] == "1.29"
    assert (m["fee"], m["credit"]) == ("59520.00", "0.00")
    assert m["effective_price_per_useful_gpu_hour"] == "193.2468"            # 59,520 / 308
    assert m["jobs"] == {"runs": 9, "completed": 3, "ended_by_infrastructure": 3, "requeued_by_infrastructure": 1,
                         "infrastructure_unattributed": 1}
    costs = [(c["id"], c["jobs"], c["lost_gpu_hours"]) for c in res.to_json()["incidents"]]
    assert costs == [("inc-b", 1, "4.13"), ("inc-a", 1, "0.07")]


def test_jobs_only_on_request(inputs):
    lc, log, runs, _ = inputs
    res = compute_goodput(lc, runs, parse_periods(["2027-01"], "UTC"), log=log, checkpoint_interval_s=3600)
    text = json.dumps(res.to_json())
    assert "\"104\"" not in text and "infrastructure_jobs" not in res.to_json()
    jobs = {j["job_id"]: j for j in res.to_json(include_jobs=True)["infrastructure_jobs"]}
    assert set(jobs) == {"101", "102", "104"}
    assert jobs["101"]["incidents"] == ["inc-a"] and jobs["101"]["lost_from"] == "2027-01-10T10:00:00Z"
    assert jobs["102"]["incidents"] == ["inc-b"] and jobs["102"]["lost_from"] == "2027-01-19T23:30:00Z"
    assert jobs["104"]["incidents"] == [] and jobs["104"]["lost_gpu_hours"] == "2.67"


def test_without_checkpoints_work_is_lost_from_start(inputs):
    lc, log, runs, _ = inputs
    m = compute_goodput(lc, runs, parse_periods(["2027-01"], "UTC"), log=log).to_json()["periods"][0]
    # 101: 8 x 14,430; 102: its comment names the checkpoint (8 x 1,860); 104: 8 x 12,000
    assert m["lost_gpu_hours"] == "62.87"                 # 226,320 GPU-s


def test_window_for_incidents_logged_after_the_job_ended(inputs):
    lc, _, runs, tmp = inputs
    # Slurm ends a job when it marks the node down; the provider's ticket may open a little later
    log = load_incidents(write(tmp, "late.csv", INCIDENTS + "inc-c,node,gpu-02,2027-01-28T03:22:00Z,"
                               "2027-01-28T05:00:00Z,down,unplanned,fan\n"), lc)
    plist = parse_periods(["2027-01"], "UTC")
    wide = compute_goodput(lc, runs, plist, log=log).to_json()           # default window 5 min
    assert "inc-c" in [c["id"] for c in wide["incidents"]]
    assert wide["periods"][0]["jobs"]["infrastructure_unattributed"] == 0
    # an incident that was over while the job still ran did not end it
    over = load_incidents(write(tmp, "over.csv", INCIDENTS + "inc-d,node,gpu-02,2027-01-28T03:00:00Z,"
                                "2027-01-28T03:19:59Z,down,unplanned,flap\n"), lc)
    assert "inc-d" not in [c["id"] for c in compute_goodput(lc, runs, plist, log=over).to_json()["incidents"]]
    narrow = compute_goodput(lc, runs, plist, log=log, window_s=60).to_json()
    assert "inc-c" not in [c["id"] for c in narrow["incidents"]]
    assert narrow["periods"][0]["jobs"]["infrastructure_unattributed"] == 1


def test_without_incident_log_no_availability(inputs):
    lc, _, runs, _ = inputs
    m = compute_goodput(lc, runs, parse_periods(["2027-01"], "UTC"), log=None).to_json()["periods"][0]
    assert m["available_gpu_hours"] is None and m["fee"] is None
    assert m["jobs"]["ended_by_infrastructure"] == 2       # NODE_FAIL only: a REQUEUED run needs an incident
    assert m["jobs"]["infrastructure_unattributed"] == 2


def test_cli_formats_and_errors(inputs):
    lc, _, _, tmp = inputs
    s = write(tmp, "jobs.txt", JOBS)
    base = ["goodput", str(tmp / "contract.yaml"), "--sacct", str(s), "--incidents", str(tmp / "inc.csv"),
            "--month", "2027-01", "--assume-tz", "UTC", "--checkpoint-interval", "1h"]
    r = CliRunner().invoke(main, [*base, "--format", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert next(iter(doc)) == "format" and doc["format"] == "slakit-goodput/1"
    assert doc["version"] == 1 and doc["total"]["useful_gpu_hours"] == "308.00"
    r = CliRunner().invoke(main, [*base, "--format", "csv"])
    lines = r.output.splitlines()
    assert lines[0].startswith("period,contracted_gpu_hours") and lines[1].startswith("2027-01,23808.00,23808.00,23744.00")
    r = CliRunner().invoke(main, base)
    assert "Incidents that cost the most work" in r.output and "inc-b" in r.output and "104" not in r.output
    bad = write(tmp, "bad.txt", JOBS.replace("gpu-03|1|gres/gpu=8|2027-01-30T00:00:00", "gpu-77|1|gres/gpu=8|2027-01-30T00:00:00"))
    r = CliRunner().invoke(main, ["goodput", str(tmp / "contract.yaml"), "--sacct", str(bad), "--month", "2027-01",
                                  "--assume-tz", "UTC"])
    assert r.exit_code == 1 and "Traceback" not in r.output
    assert "bad.txt row 8, column NodeList: gpu-77" in r.output and "[sacct_unknown_node]" in r.output


def test_assume_tz_names_the_zone_and_tz_is_its_deprecated_alias(inputs):
    """`--assume-tz` is the zone of sacct's times (and of a local `--as-of`, as for credits);
    the older `--tz` gives the same document with a deprecation notice on stderr."""
    _, _, _, tmp = inputs
    s = write(tmp, "jobs.txt", JOBS)
    base = ["goodput", str(tmp / "contract.yaml"), "--sacct", str(s), "--incidents", str(tmp / "inc.csv"),
            "--month", "2027-01", "--checkpoint-interval", "1h", "--format", "json"]
    new = CliRunner().invoke(main, [*base, "--assume-tz", "UTC"])
    old = CliRunner().invoke(main, [*base, "--tz", "UTC"])
    assert new.exit_code == old.exit_code == 0, (new.output, old.output)
    assert new.stdout == old.stdout and json.loads(new.stdout)["total"]["useful_gpu_hours"] == "308.00"
    assert "deprecated" not in new.stderr and "slakit: --tz is deprecated; use --assume-tz" in old.stderr
    local = CliRunner().invoke(main, [*base, "--assume-tz", "UTC", "--as-of", "2027-02-01T00:00:00"])
    assert local.exit_code == 0 and local.stdout == new.stdout, local.output
    naive = CliRunner().invoke(main, [*base, "--as-of", "2027-02-01T00:00:00"])
    assert naive.exit_code == 2 and "--assume-tz" in naive.output, naive.output


def test_training_log_of_a_job(inputs):
    from pathlib import Path

    lc, _, _, tmp = inputs
    s = write(tmp, "jobs.txt", JOBS)
    log = Path(__file__).parent / "fixtures" / "torchtitan-pr1287.log"
    base = ["goodput", str(tmp / "contract.yaml"), "--sacct", str(s), "--incidents", str(tmp / "inc.csv"),
            "--month", "2027-01", "--assume-tz", "UTC", "--train-log", f"100={log}:torchtitan", "--format", "json"]
    doc = json.loads(CliRunner().invoke(main, base).output)
    (t,) = doc["training_logs"]
    # job 100 ran 10 h in sacct; the excerpt's 70.5 s of steps are all the log shows as productive
    assert t["job_seconds"] == 36000 and t["productive_seconds"] == 70.524
    assert t["productive_fraction"] == round(70.524 / 36000, 4) and "job_id" not in t
    doc = json.loads(CliRunner().invoke(main, [*base, "--include-jobs"]).output)
    assert doc["training_logs"][0]["job_id"] == "100"
    r = CliRunner().invoke(main, [*base[:-2], "--train-log", f"100={tmp / 'missing.log'}"])
    assert r.exit_code == 1 and "[file_not_found]" in r.output and "Traceback" not in r.output


def test_a_sacct_export_larger_than_the_file_cap_is_read(inputs):
    """Accounting exports of large fleets are hundreds of MB: named on the command line they are
    not held to the cap for files a contract names (`--max-file-size`), like incident logs."""
    lc, _, _, tmp = inputs
    s = write(tmp, "jobs.txt", JOBS)
    assert s.stat().st_size > 200
    base = ["goodput", str(tmp / "contract.yaml"), "--sacct", str(s), "--incidents", str(tmp / "inc.csv"),
            "--month", "2027-01", "--assume-tz", "UTC", "--checkpoint-interval", "1h", "--format", "json"]
    r = CliRunner().invoke(main, ["--max-file-size", "200", *base])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["total"]["useful_gpu_hours"] == "308.00"
    r = CliRunner().invoke(main, [*base[:3], "/proc/self/environ", *base[4:]])
    assert r.exit_code == 1 and "path_forbidden" in r.output and "PATH=" not in r.output


def test_a_large_sacct_file_shows_its_stages(inputs, monkeypatch):
    """On a terminal (faked: CliRunner's stderr is none) and a sacct file of PROGRESS_LOG_BYTES
    or more, the stages go to stderr; stdout is the same as without them."""
    import calculators.cli as ccli

    lc, _, _, tmp = inputs
    s = write(tmp, "jobs.txt", JOBS)
    argv = ["goodput", str(tmp / "contract.yaml"), "--sacct", str(s), "--incidents", str(tmp / "inc.csv"),
            "--month", "2027-01", "--assume-tz", "UTC", "--format", "json"]
    monkeypatch.setattr(ccli, "progress_wanted", lambda no_progress=False, **kw: not no_progress)
    quiet = CliRunner().invoke(main, argv)
    assert quiet.exit_code == 0 and quiet.stderr == ""
    monkeypatch.setattr(ccli, "PROGRESS_LOG_BYTES", 1)
    r = CliRunner().invoke(main, argv)
    assert r.exit_code == 0 and r.stdout == quiet.stdout
    lines = r.stderr.splitlines()
    assert [ln.split(" - ")[-1] for ln in lines] == ["job records and incidents read and checked",
                                                      "1 month(s) computed", "written"]
    assert lines[-1].startswith("goodput: 3/3 (100%)")
    assert CliRunner().invoke(main, [*argv, "--no-progress"]).stderr == ""
