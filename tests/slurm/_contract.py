"""A small contract over the testbed's nodes gpu-[01-04]; DETECTION is filled in per test."""

from tests.contracts import small_contract

CONTRACT = small_contract("drill-test", {"r1": "gpu-[01-04]"}, "support:\n  detection: DETECTION\n")
