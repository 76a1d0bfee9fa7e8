"""Every JSON document a command prints starts with its `format`, `slakit-<kind>/<version>`,
so a program reading it knows what it holds and which version of it (the documents that need
Slurm are checked in tests/slurm: `accept drill`, `accept burn-in`)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from slakit.cli import main

REPO = Path(__file__).resolve().parents[1]
C = str(REPO / "examples" / "gb200-contract.yaml")
LOG = str(REPO / "examples" / "gb200-incidents-2027Q1.csv")
FIO = str(REPO / "tests" / "fixtures" / "fio" / "fio_seqwrite_1M_numjobs2_json.txt")
FORMAT = re.compile(r"slakit-[a-z]+(-[a-z]+)*/[0-9]+")


def first_field(argv: list[str], code: int = 0) -> tuple[str, str]:
    res = CliRunner().invoke(main, argv)
    assert res.exit_code == code, res.output
    doc = json.loads(res.stdout)
    key, value = next(iter(doc.items()))
    return key, value


@pytest.mark.parametrize("argv, want", [
    (["validate", C], "slakit-validate/1"),
    (["show", C], "slakit-contract-summary/1"),
    (["lint", C], "slakit-lint/1"),
    (["lint", "--rules"], "slakit-lint-rules/1"),
    (["compare", C, C], "slakit-compare/2"),
    (["simulate", C, "--runs", "3", "--months", "1", "--no-progress"], "slakit-simulate/1"),
    (["simulate", C, "--show-model"], "slakit-failure-model/1"),
    (["credits", C, LOG, "--month", "2027-02"], "slakit-credits/2"),
    (["explain", C, LOG, "--unit", "r01-n07", "--month", "2027-01"], "slakit-explain/1"),
    (["explain", C, LOG, "--unit", "r01", "--month", "2027-01"], "slakit-explain/1"),
    (["reconcile", C, LOG, LOG, "--month", "2027-01"], "slakit-reconcile/2"),
    (["parse", "fio", FIO], "slakit-parse/1"),
    (["parse", FIO], "slakit-parse/1"),
    (["parse", "fio", FIO, "--all"], "slakit-parse/1"),
])
def test_a_document_starts_with_its_format(argv, want):
    key, value = first_field([*argv, "--format", "json"])
    assert (key, value) == ("format", want)
    assert FORMAT.fullmatch(value)


def test_the_problems_of_bad_input_and_a_failed_validation_say_their_format(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("slakit: 1\ncontract: {id: x}\n")
    assert first_field(["validate", str(bad), "--format", "json"], code=1) == ("format", "slakit-validate/1")
    assert first_field(["credits", str(bad), LOG, "--month", "2027-02", "--format", "json"], code=1) == \
        ("format", "slakit-problems/1")


def test_a_bundle_verification_and_a_security_audit_say_their_format(tmp_path):
    bundle = tmp_path / "ev"
    run = CliRunner().invoke(main, ["accept", "run", C, "--executor", "local", "--only", "software.versions",
                                    "-o", str(bundle), "--no-progress", "--format", "json"])
    assert run.exit_code in (0, 1), run.output
    assert json.loads((bundle / "results.json").read_text())["format"] == "slakit-acceptance-run/2"
    assert first_field(["accept", "verify", str(bundle), "--format", "json"]) == ("format", "slakit-verify/1")
    res = CliRunner().invoke(main, ["security", "audit", C, "--only", "versions", "--format", "json"])
    doc = json.loads(res.stdout)
    assert next(iter(doc)) == "format" and doc["format"] == "slakit-security-audit/1"


def test_explain_of_a_unit_the_contract_lacks_is_a_problems_document():
    """--unit naming no node, rack, cluster or site: an `unknown_unit` problem (the JSON
    problems document with --format json, the nearest names as the fix), exit 1."""
    argv = ["explain", C, LOG, "--unit", "r01-n7", "--month", "2027-01"]
    res = CliRunner().invoke(main, [*argv, "--format", "json"])
    assert res.exit_code == 1, res.output
    doc = json.loads(res.stdout)
    assert doc["format"] == "slakit-problems/1" and doc["ok"] is False
    [p] = doc["problems"]
    assert (p["code"], p["value"], p["file"]) == ("unknown_unit", "r01-n7", C)
    assert "r01-n07" in p["fix"]
    res = CliRunner().invoke(main, argv)
    assert res.exit_code == 1 and "[unknown_unit]" in res.stderr and "log_out_of_range" not in res.stderr


IBSTAT = """CA 'mlx5_0'
\tCA type: MT4123
\tNumber of ports: 1
\tFirmware version: 20.31.1014
\tPort 1:
\t\tState: Active
\t\tPhysical state: LinkUp
\t\tRate: 200
\t\tLink layer: InfiniBand
"""


def test_parse_names_the_tools_output_format_tool_format(tmp_path):
    """`parse --format json` is a `slakit-parse/1` document: the tool and the variant of its
    output (`tool_format`: ibstat text or sysfs, nvidia-smi csv/xml/table, ...) follow `format`,
    then the record; with --all the records are a list under `records`."""
    f = tmp_path / "ibstat.txt"
    f.write_text(IBSTAT)
    res = CliRunner().invoke(main, ["parse", "ibstat", str(f), "--format", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert list(doc)[:3] == ["format", "tool", "tool_format"]
    assert (doc["format"], doc["tool"], doc["tool_format"]) == ("slakit-parse/1", "ibstat", "ibstat")
    assert doc["cas"] == ["mlx5_0"] and doc["ports"][0]["state"] == "Active"
    res = CliRunner().invoke(main, ["parse", "ibstat", str(f), "--all", "--format", "json"])
    doc = json.loads(res.stdout)
    assert list(doc) == ["format", "tool", "records"] and doc["format"] == "slakit-parse/1"
    assert [(r["tool"], r["tool_format"], r["cas"]) for r in doc["records"]] == [("ibstat", "ibstat", ["mlx5_0"])]
    assert all("format" not in r for r in doc["records"])
