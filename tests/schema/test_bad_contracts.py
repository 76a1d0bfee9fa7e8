"""Malformed contracts: each must give its stable code at the right line, all at once."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from slaschema.errors import InputError
from slaschema.loader import load_contract, load_contract_text
from tests.schema.conftest import BASE


def _line_of(text: str, needle: str, nth: int = 1) -> int:
    seen = 0
    for i, line in enumerate(text.splitlines(), start=1):
        if (line.startswith(needle[1:]) if needle.startswith("^") else needle in line):
            seen += 1
            if seen == nth:
                return i
    raise AssertionError(f"{needle!r} not in text")


def _errors(text: str):
    with pytest.raises(InputError) as exc:
        load_contract_text(text, "bad.yaml")
    return exc.value.problems


# (name, old, new, expected code, needle whose line the error must point at or None)
CASES = [
    ("missing_section", "pricing:\n  per_gpu_hour: 2.00\n", "", "missing_field", None),
    ("key_typo", "  min_outage: 5m", "  min_outgae: 5m", "unknown_field", "min_outgae"),
    ("duplicate_key", "  currency: USD\n", "  currency: USD\n  currency: EUR\n", "yaml_duplicate_key", "EUR"),
    ("bare_number_duration", "  min_outage: 5m", "  min_outage: 5", "duration_unit_missing", "min_outage"),
    ("NO_as_value", "  currency: USD", "  currency: NO", "yaml_ambiguous_boolean", "currency"),
    ("on_as_value", "  min_outage: 5m", "  min_outage: on", "yaml_ambiguous_boolean", "min_outage"),
    ("sexagesimal", "  min_outage: 5m", "  min_outage: 1:30", "yaml_sexagesimal", "min_outage"),
    ("octal", "per_gpu_hour: 2.00", "per_gpu_hour: 010", "yaml_octal", "per_gpu_hour"),
    ("percent_over_100", "{below: 99%, credit: 25%}", "{below: 99%, credit: 125%}", "percent_range", "credit: 125%"),
    ("tiers_out_of_order", "{below: 99%, credit: 25%}", "{below: 99.9%, credit: 25%}", "tier_order", "99.9%"),
    ("tier_credit_order", "{below: 99%, credit: 25%}", "{below: 99%, credit: 5%}", "tier_credit_order", "credit: 5%"),
    ("target_below_first_tier", "    target: 99.5%", "    target: 99%", "target_inconsistent", "target: 99%"),
    ("unknown_check", "check: gpu.inventory", "check: gpu.inventroy", "unknown_check", "gpu.inventroy"),
    ("unknown_timezone", "timezone: UTC", "timezone: Mars/Olympus", "timezone_unknown", "timezone"),
    ("overlapping_hostlists", "nodes: n[5-8]", "nodes: n[4-8]", "duplicate_unit", "n[4-8]"),
    ("k_larger_than_rack", "down_when_nodes_down: 2", "down_when_nodes_down: 5", "rack_rule_k", "down_when_nodes_down"),
    ("two_pricing_bases", "  per_gpu_hour: 2.00\n", "  per_gpu_hour: 2.00\n  per_node_month: 9000\n",
     "pricing_basis", "pricing:"),
    ("no_pricing_basis", "  per_gpu_hour: 2.00\n", "  {}\n", "pricing_basis", "pricing:"),
    ("effective_order", "to: 2027-12-31", "to: 2026-12-31", "effective_order", "effective"),
    ("bad_date", "to: 2027-12-31", "to: 2027-13-40", "date_invalid", "effective"),
    ("currency_lowercase", "currency: USD", "currency: usd", "currency_invalid", "currency"),
    ("unknown_architecture", "architecture: hgx-8gpu", "architecture: hgx-16gpu", "invalid_choice", "architecture"),
    ("credits_and_pro_rata", "    target: 99.5%\n", "    target: 99.5%\n    pro_rata: {multiplier: 2}\n",
     "credit_basis", "node:"),
    ("hostlist_syntax", "nodes: n[1-4]", "nodes: n[1-4", "hostlist_syntax", "n[1-4"),
    ("hostlist_reversed", "nodes: n[1-4]", "nodes: n[4-1]", "hostlist_range_reversed", "n[4-1]"),
    ("unknown_scope_key", "  node:\n    target", "  nodes:\n    target", "unknown_field", "^  nodes:"),
    ("negative_money", "per_gpu_hour: 2.00", "per_gpu_hour: -2.00", "money_negative", "per_gpu_hour"),
    ("duration_garbage", "notice: 72h", "notice: 3 days", "duration_invalid", "maintenance"),
    ("unplanned_excluded", "  maintenance: {notice", "  unplanned: {}\n  maintenance: {notice",
     "exclusion_reserved", "unplanned"),
    ("yaml_tag", "currency: USD", "currency: !!python/name:os.system USD", "yaml_tag", "currency"),
    ("wrong_version", "slakit: 1", "slakit: 2", "invalid_choice", "slakit"),
    ("duplicate_criterion", "      expect: {gpus_per_node: 8}\n",
     "      expect: {gpus_per_node: 8}\n    - id: inv\n      check: gpu.xid\n", "duplicate_criterion", "id: inv", ),
]


@pytest.mark.parametrize("name,old,new,code,needle", CASES, ids=[c[0] for c in CASES])
def test_bad_contract(name, old, new, code, needle):
    assert old in BASE, name
    text = BASE.replace(old, new, 1)
    problems = _errors(text)
    codes = [p.code for p in problems]
    assert code in codes, (name, [p.format() for p in problems])
    p = next(p for p in problems if p.code == code)
    assert p.file == "bad.yaml"
    if needle is not None:
        nth = 2 if name == "duplicate_criterion" else 1
        assert p.line == _line_of(text, needle, nth), p.format()
        assert p.col is not None and p.col >= 1
    assert f"[{code}]" in p.format()


def test_base_is_valid():
    lc = load_contract_text(BASE, "ok.yaml")
    assert lc.topology.counts() == {"sites": 1, "clusters": 1, "racks": 2, "nodes": 8, "gpus": 64}


def test_all_errors_reported_at_once():
    text = (BASE.replace("min_outage: 5m", "min_outage: 5")
                .replace("currency: USD", "currency: usd")
                .replace("credit: 25%", "credit: 125%"))
    codes = sorted(p.code for p in _errors(text))
    assert codes == ["currency_invalid", "duration_unit_missing", "percent_range"]


def test_yaml_traps_all_reported_together():
    text = BASE.replace("currency: USD", "currency: NO").replace("min_outage: 5m", "min_outage: 1:30")
    assert sorted(p.code for p in _errors(text)) == ["yaml_ambiguous_boolean", "yaml_sexagesimal"]


def test_typo_suggests_the_right_key():
    p = _errors(BASE.replace("min_outage: 5m", "min_outgae: 5m"))[0]
    assert "min_outage" in (p.fix or "")


def test_quoted_values_are_strings_not_traps():
    text = BASE.replace("  provider: P Inc.", '  provider: "NO"')
    assert load_contract_text(text, "ok.yaml").model.contract.provider == "NO"


@pytest.mark.parametrize("text,code", [
    ("", "empty_file"),
    ("   \n# only a comment\n", "empty_file"),
    ("slakit: [1, 2\n", "yaml_syntax"),
    ("- just\n- a list\n", "not_a_mapping"),
    ("a: 1\n---\nb: 2\n", "yaml_multiple_documents"),
    ("\x00\x01binary", "yaml_syntax"),
])
def test_not_a_contract(text, code):
    assert code in [p.code for p in _errors(text)]


def test_control_character_is_located():
    # a NUL after non-ASCII text: libyaml counts its position in bytes; the problem names the
    # line and column of the character itself (was no line, and the reader's own two-line text)
    text = BASE.replace("  id: t-1", "  id: t-1\n  title: \"Zürich — Łódź\x00\"")
    (p,) = _errors(text)
    assert p.code == "yaml_syntax" and "U+0000" in p.message and "\n" not in p.message
    assert p.line == _line_of(text, "title:") and p.col == len("  title: \"Zürich — Łódź") + 1
    assert p.fix


def test_non_utf8():
    with pytest.raises(InputError) as exc:
        load_contract_text(b"\xff\xfe\x00garbage", "bin.yaml")
    assert exc.value.codes == ["not_utf8"]


def test_yaml_bomb_rejected_quickly():
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        prev = f"*a{i - 1}"
        lines.append(f"a{i}: &a{i} [{', '.join([prev] * 10)}]")
    with pytest.raises(InputError) as exc:
        load_contract_text("\n".join(lines) + "\n", "bomb.yaml")
    assert exc.value.codes == ["yaml_too_complex"]


def test_fifty_megabyte_file(tmp_path: Path):
    big = tmp_path / "big.yaml"
    with big.open("w") as fh:
        fh.write(BASE)
        fh.write("# " + "x" * 1000 + "\n" * 1)
        chunk = ("# padding " + "y" * 90 + "\n") * 10_000
        while fh.tell() < 50 * 1024 * 1024:
            fh.write(chunk)
    with pytest.raises(InputError) as exc:
        load_contract(big)
    assert exc.value.codes == ["file_too_large"]


def test_missing_file():
    with pytest.raises(InputError) as exc:
        load_contract("/nonexistent/contract.yaml")
    assert exc.value.codes == ["file_not_found"]


def test_validate_cli_json_and_exit_codes(tmp_path: Path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(BASE.replace("min_outage: 5m", "min_outage: 5").replace("currency: USD", "currency: NO"))
    good = tmp_path / "good.yaml"
    good.write_text(BASE)
    r = subprocess.run([sys.executable, "-m", "slakit", "validate", "--format", "json", str(good), str(bad)],
                       capture_output=True, text=True)
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    assert doc["ok"] is False
    assert doc["files"][0]["ok"] is True
    probs = doc["files"][1]["problems"]
    assert {p["code"] for p in probs} == {"duration_unit_missing", "yaml_ambiguous_boolean"}
    assert all("line" in p and "col" in p for p in probs)
    r = subprocess.run([sys.executable, "-m", "slakit", "validate", str(good)], capture_output=True, text=True)
    assert r.returncode == 0
    r = subprocess.run([sys.executable, "-m", "slakit", "validate", "--bogus"], capture_output=True, text=True)
    assert r.returncode == 2
