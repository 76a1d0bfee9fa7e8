"""Parameter validation, selection and overrides: nothing from the YAML reaches a shell."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acceptance.checks import REGISTRY, get_check
from acceptance.checks.base import CollectContext, format_size, load_checks, parse_size
from acceptance.executors.local import LocalExecutor
from acceptance.runner import parse_overrides, plan, select
from slaschema.checks import KNOWN_CHECKS
from slaschema.errors import InputError
from slaschema.models import Criterion


@pytest.mark.parametrize(("text", "n"), [("4k", 4096), ("1M", 1 << 20), ("8G", 8 << 30), ("8GiB", 8 << 30),
                                         ("1m", 1 << 20), (512, 512), ("64", 64)])
def test_sizes(text, n):
    assert parse_size(text) == n


@pytest.mark.parametrize("bad", ["1.5G", "-1M", "8 fortnights", "", "0", 0, True, "1G; rm -rf /"])
def test_bad_sizes(bad):
    with pytest.raises(Exception):
        parse_size(bad)


@given(st.integers(min_value=1, max_value=1 << 50))
@settings(max_examples=200)
def test_format_size_round_trips(n):
    assert parse_size(format_size(n)) == n


def fio(**params) -> Criterion:
    return Criterion(id="fs", check="storage.fio", metric="read_gbps", min=Decimal(1), params=params)


@pytest.mark.parametrize(
    ("path", "code"),
    [("data", "path_not_absolute"), ("/mnt/a:b", "path_invalid"), ("/mnt/$(reboot)", "path_invalid"),
     ("/mnt/../etc", "path_invalid"), ("/mnt/-rf", "path_invalid"), ("/mnt/a b\n", "path_invalid"),
     ("/mnt/*", "path_invalid")],
)
def test_fio_path_validation(path, code):
    with pytest.raises(InputError) as e:
        get_check("storage.fio").params(fio(path=path))
    assert [p.code for p in e.value.problems] == [code]
    assert e.value.problems[0].path == "acceptance.criteria[fs].params.path"


def test_argv_items_carry_one_value_each():
    check = get_check("storage.fio")
    params = check.params(fio(path="/mnt/shared fs", bs="1M", size="4G", numjobs=8))
    argv = check.argv(params, CollectContext(executor=LocalExecutor(), nodes=("n",), timeout_s=1))
    assert "--directory=/mnt/shared fs" in argv and "--bs=1048576" in argv and "--size=4294967296" in argv
    assert all(isinstance(a, str) for a in argv)
    check = get_check("network.iperf3")
    for server in ("-p1", "a;b", "$(x)", "host name"):
        with pytest.raises(InputError):
            check.params(Criterion(id="e", check="network.iperf3", params={"server": server}))
    with pytest.raises(InputError) as e:
        check.params(Criterion(id="e", check="network.iperf3", params={"server": "h", "unknown": 1}))
    assert e.value.problems[0].code == "extra_forbidden"


def test_every_known_check_is_registered():
    assert set(load_checks()) == set(KNOWN_CHECKS)
    assert {k for k in REGISTRY if not k.startswith("security.")} == {k for k, v in KNOWN_CHECKS.items()
                                                                     if v[0] != "security"}


CRITERIA = [Criterion(id="inv", check="gpu.inventory", expect={"gpus_per_node": 4}),
            Criterion(id="fs", check="storage.fio", metric="read_gbps", min=Decimal(1), params={"path": "/x"}),
            Criterion(id="eth", check="network.iperf3", metric="throughput_gbps", min=Decimal(1),
                      params={"server": "10.0.0.1"})]


@pytest.mark.parametrize(("only", "ids"), [((), ["inv", "fs", "eth"]), (("gpu",), ["inv"]),
                                           (("storage.fio", "eth"), ["fs", "eth"]), (("network",), ["eth"])])
def test_select(only, ids):
    assert [c.id for c in select(CRITERIA, only)] == ids


def test_select_unknown_and_overrides():
    with pytest.raises(InputError) as e:
        select(CRITERIA, ["gpus"])
    assert e.value.problems[0].code == "unknown_selection"
    assert parse_overrides(["fs.path=/tmp", "fs.numjobs=2", "fs.direct=true", "a.b.c=x"]) == {
        "fs": {"path": "/tmp", "numjobs": 2, "direct": True}, "a.b": {"c": "x"}}
    with pytest.raises(InputError) as e:
        parse_overrides(["path=/tmp", "fs.size"])
    assert [p.code for p in e.value.problems] == ["bad_param_override", "bad_param_override"]
    planned = plan(CRITERIA, {"fs": {"path": "/scratch", "numjobs": 4}}, timeout_s=5)
    fs = next(p for p in planned if p.criterion.id == "fs")
    assert fs.params.path == "/scratch" and fs.params.numjobs == 4 and fs.timeout_s == 5
    with pytest.raises(InputError) as e:
        plan(CRITERIA, {"nope": {"x": 1}, "fs": {"numjobs": 0}})
    assert sorted(p.code for p in e.value.problems) == ["greater_than_equal", "unknown_criterion"]


def test_drill_result_path_is_taken_relative_to_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    crit = Criterion(id="d", check="health.detection", params={"result": "drill.json"})
    assert get_check("health.detection").params(crit).result == str(tmp_path / "drill.json")


def test_a_contract_without_criteria_is_refused():
    with pytest.raises(InputError) as e:
        select([], ())
    assert e.value.problems[0].code == "no_criteria"


def test_a_value_given_with_param_that_its_check_refuses_is_a_usage_error(tmp_path):
    """`--param shared-fs-read.bs=zz` is the command line's mistake: exit 2 naming `--param
    ID.KEY` (it named the contract's field and exited 1); the same value in the contract is
    still a problem of the contract at its field, exit 1."""
    from click.testing import CliRunner

    from slakit.cli import main
    from tests.acceptance.conftest import EXAMPLE, contract_with

    (tmp_path / "handover" / "raw").mkdir(parents=True)
    for sub, extra in (("run", ["--out", str(tmp_path / "run"), "--no-progress"]),
                       ("evaluate", [str(tmp_path / "handover")])):
        r = CliRunner().invoke(main, ["accept", sub, str(EXAMPLE), *extra, "--param", "shared-fs-read.bs=zz",
                                      "--param", "shared-fs-read.numjobs=2"])
        assert r.exit_code == 2, r.output
        assert "--param shared-fs-read.bs: expected a size" in r.output and "[size_invalid]" in r.output
        assert "acceptance.criteria[shared-fs-read]" not in r.output
    with pytest.raises(InputError) as e:
        plan(CRITERIA, {"fs": {"numjobs": 0}})
    assert [(p.code, p.path) for p in e.value.problems] == [("greater_than_equal", "--param fs.numjobs")]
    bad = contract_with(tmp_path, """
        - id: fs
          check: storage.fio
          params: {path: /mnt/shared, bs: zz}
          metric: read_gbps
          min: 1
        """)
    r = CliRunner().invoke(main, ["accept", "run", str(bad), "--out", str(tmp_path / "run2"), "--no-progress"])
    assert r.exit_code == 1 and "acceptance.criteria[fs].params.bs" in r.output and "[size_invalid]" in r.output
