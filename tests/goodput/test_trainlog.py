"""Training-log productivity on real public log excerpts (fixtures/, each with its SOURCE line)."""

from pathlib import Path

import pytest

from calculators.goodput.trainlog import load_profiles, productivity, productivity_from_file, with_job
from slaschema.errors import InputError

FIX = Path(__file__).parent / "fixtures"
PROFILES = load_profiles(None)


def test_fixtures_name_their_source():
    for f in FIX.glob("*.log"):
        assert f.read_text().splitlines()[0].startswith("SOURCE: https://github.com/"), f


def test_megatron_lm():
    p = productivity_from_file("1", str(FIX / "megatron-lm-issue756.log"), PROFILES)
    assert p.profile == "megatron"                                  # detected
    assert (p.step_lines, p.first_step, p.last_step, p.span_seconds) == (3, 43, 45, 11.0)   # 02:59:36 -> 02:59:47
    assert p.step_seconds == 5.5 and p.stall_seconds == 0 and p.fraction == 1.0


def test_torchtitan_with_profiler_pause():
    p = productivity_from_file("1", str(FIX / "torchtitan-pr1287.log"), PROFILES)
    assert p.profile == "torchtitan" and (p.first_step, p.last_step, p.step_lines) == (200, 250, 6)
    assert p.span_seconds == pytest.approx(70.524)                  # 22:30:50,322 -> 22:32:00,846
    assert p.stall_seconds == 0
    # the gap 200 -> 210 holds the profiler trace dump (14.648 s against 13.964-13.976 s for the others)
    strict = productivity_from_file("1", str(FIX / "torchtitan-pr1287.log"), PROFILES, stall_factor=1.03)
    assert strict.stall_seconds == pytest.approx(14.648 - 10 * strict.step_seconds, abs=1e-6)
    # measured against the job's elapsed time in sacct, time before the first step is not productive
    j = with_job(p, job_seconds=100, gpus=8)
    assert j.fraction == pytest.approx(0.70524) and j.to_json()["productive_gpu_hours"] == round(8 * 70.524 / 3600, 2)


def test_ranks_repeating_a_step_count_once():
    p = productivity_from_file("1", str(FIX / "torchtitan-pr2389.log"), PROFILES, "torchtitan")
    assert (p.step_lines, p.first_step, p.last_step) == (2, 4, 5)
    assert p.span_seconds == pytest.approx(1.637)


def test_restart_redoes_work_since_the_checkpoint():
    # a step a second up to 50, a crash, 6 s of restart, resumed at the step-30 checkpoint
    pts = [(s, 10.0 * s) for s in range(0, 51, 10)] + [(30, 560.0), (40, 660.0), (50, 760.0), (60, 860.0)]
    pts = [(s, t / 10) for s, t in pts]
    p = productivity("j", pts, "x")
    assert p.restarts == 1
    assert p.span_seconds == 86.0
    # 50 -> 30 (6 s restart) and 30 -> 50 (20 s redone) are not productive; 50 -> 60 is
    assert p.restart_seconds == pytest.approx(26.0)
    assert p.productive_seconds == pytest.approx(60.0)


def test_profiles_file_errors(tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text("profiles:\n  mine:\n    step: 'global_step=(\\d+)'\n    time: '^(?P<time>\\S+)'\n    colour: red\n")
    with pytest.raises(InputError) as e:
        load_profiles(f)
    assert {(p.code, p.path) for p in e.value.problems} == {("profile_invalid", "profiles.mine.step"),
                                                            ("profile_invalid", "profiles.mine.colour")}
    f.write_text("profiles:\n  mine:\n    step: 'global_step=(?P<step>\\d+)'\n    time: '^(?P<time>\\S+)'\n")
    log = tmp_path / "train.log"
    log.write_text("2027-01-01T00:00:00 global_step=1\n2027-01-01T00:00:10 global_step=2\n")
    p = productivity_from_file("1", str(log), load_profiles(f), "mine")
    assert p.span_seconds == 10.0
    with pytest.raises(InputError) as e:
        productivity_from_file("1", str(FIX / "megatron-lm-issue756.log"), PROFILES, "torchtitan")
    assert e.value.problems[0].code == "trainlog_no_steps"
