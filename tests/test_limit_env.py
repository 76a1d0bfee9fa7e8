"""SLAKIT_MAX_NODES and SLAKIT_MAX_FILE_BYTES set to something that is no whole number of at
least 1 are a usage error naming the variable ([env_invalid], exit 2), not the default limit
taken silently; a valid value still raises the limit, and the option given wins."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from slakit.cli import main

CONTRACT = str(Path(__file__).resolve().parents[1] / "examples" / "gb200-contract.yaml")   # 72 nodes


def _validate(env: dict, *flags: str):
    from slaschema import hostlist, safefiles

    try:
        return CliRunner().invoke(main, [*flags, "validate", CONTRACT], env=env)
    finally:
        hostlist.set_max_nodes(None)
        safefiles.set_max_file_bytes(None)


@pytest.mark.parametrize("name", ["SLAKIT_MAX_NODES", "SLAKIT_MAX_FILE_BYTES"])
@pytest.mark.parametrize("value", ["abc", "2,000,000", "2e6", "0", "-5", "64MiB", "\u0663"])
def test_a_bad_limit_variable_is_a_usage_error_naming_it(name, value):
    r = _validate({name: value})
    assert r.exit_code == 2, r.output
    assert f"{name}={value!r}" in r.output and "[env_invalid]" in r.output, r.output


def test_a_valid_limit_variable_still_counts_and_the_option_wins():
    r = _validate({"SLAKIT_MAX_NODES": "10"})
    assert r.exit_code == 1 and "[hostlist_too_large]" in r.output, r.output
    assert _validate({"SLAKIT_MAX_NODES": "100"}).exit_code == 0
    assert _validate({"SLAKIT_MAX_NODES": "abc"}, "--max-nodes", "100").exit_code == 0
    assert _validate({"SLAKIT_MAX_NODES": ""}).exit_code == 0
