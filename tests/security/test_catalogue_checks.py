"""The security checks through the acceptance catalogue's pipeline (params, collect, judge_output)."""

from __future__ import annotations

import socket
from datetime import datetime

import pytest

base = pytest.importorskip("acceptance.checks.base")

from acceptance.executors.local import LocalExecutor  # noqa: E402
from acceptance.results import Status  # noqa: E402
from acceptance.security.checks import contract_overrides  # noqa: E402
from acceptance.security.minimums import load_minimums, staleness  # noqa: E402
from slaschema.errors import InputError  # noqa: E402
from slaschema.models import Criterion  # noqa: E402

from .test_access_check import CUSTOMER, STAFF  # noqa: E402


def run(check_id, criterion, contract=None, node="n1"):
    check = base.REGISTRY[check_id]()
    params = check.params(criterion, contract_overrides(contract))
    ctx = base.CollectContext(executor=LocalExecutor(), nodes=(node,), timeout_s=120)
    raws = check.collect(params, ctx)
    assert set(raws) == {node}
    return base.judge_output(check, criterion, params, node, raws[node])


def test_registered():
    for name in ("security.versions", "security.access", "security.isolation"):
        assert name in base.REGISTRY


def test_versions_on_this_host():
    crit = Criterion(id="sec-ver", check="security.versions", expect={"table_date": "2026-09-01"},
                     metric="vulnerable_components", max=0)
    doc, verdicts = run("security.versions", crit)
    assert doc["check"] == "security.versions"
    reasons = {v.reason for v in verdicts}
    # the probe's own clock judges the shipped table's age (current until 90 days after its date)
    age = staleness(load_minimums(), datetime.fromisoformat(doc["collected_at"]))
    assert {age.reason, "table_date_met"} <= reasons
    judged = [v for v in verdicts if v.details.get("metric") == "vulnerable_components"]
    assert len(judged) == 1
    failing = sum(1 for v in verdicts if v.reason in ("below_minimum", "unsupported_line"))
    assert judged[0].status is (Status.FAIL if failing else Status.PASS)
    assert all(v.criterion == "sec-ver" and v.node == "n1" for v in verdicts)


def test_access_with_contract_lists_and_a_live_port():
    srv = socket.socket()
    srv.bind(("0.0.0.0", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    try:
        contract = {"access": {"provider_staff_keys": [STAFF], "customer_keys": [CUSTOMER], "allowed_ports": [22]}}
        crit = Criterion(id="sec-acc", check="security.access")
        _, verdicts = run("security.access", crit, contract)
        mine = [v for v in verdicts if v.reason == "port_not_allowed" and v.details["port"] == port]
        assert len(mine) == 1 and mine[0].status is Status.FAIL
    finally:
        srv.close()


def test_isolation_params_are_validated():
    check = base.REGISTRY["security.isolation"]()
    with pytest.raises(InputError) as exc:
        check.params(Criterion(id="iso", check="security.isolation", params={"kubeconfig": "relative/path"}))
    assert "path_not_absolute" in exc.value.codes
    with pytest.raises(InputError):
        check.params(Criterion(id="iso", check="security.isolation", params={"scan_subnet": "10.0.0.0/8"}))


def test_isolation_on_this_host_with_bmc():
    crit = Criterion(id="iso", check="security.isolation", params={"connect_timeout_s": 1})
    _, verdicts = run("security.isolation", crit, {"access": {"bmc_address": "127.0.0.1:1"}})
    bmc = [v for v in verdicts if v.details.get("subject") == "BMC network"]
    assert [(v.status, v.reason) for v in bmc] == [(Status.PASS, "bmc_not_reachable")]


def test_every_security_check_takes_the_whole_access_section():
    overrides = contract_overrides({"access": {"provider_staff_keys": [STAFF], "customer_keys": [CUSTOMER],
                                               "allowed_ports": [22, "8000-8100"], "bmc_address": "10.0.0.5"}})
    for name in ("security.versions", "security.access", "security.isolation"):
        params = base.REGISTRY[name]().params(Criterion(id="c", check=name), overrides)
        assert params.customer_keys == [CUSTOMER] and params.bmc_address == "10.0.0.5"


def test_contract_overrides():
    assert contract_overrides(None) == {}
    assert contract_overrides({"access": {"customer_keys": ["k"]}}) == {"customer_keys": ["k"], "provider_staff_keys": []}
