"""A 4-node contract (two racks, 8 GPUs per node, USD 2.50 per GPU-hour) and helpers."""

from pathlib import Path

from tests.contracts import small_contract

CONTRACT = small_contract("goodput-test", {"r1": "gpu-[01-02]", "r2": "gpu-[03-04]"})
HEADER = "JobID|State|ExitCode|NodeList|NNodes|AllocTRES|Start|End|Elapsed|Reason|Comment"


def write(tmp: Path, name: str, text: str) -> Path:
    p = tmp / name
    p.write_text(text)
    return p


def contract(tmp: Path):
    from slaschema.loader import load_contract

    return load_contract(write(tmp, "contract.yaml", CONTRACT))


def sacct(*rows: str) -> str:
    return "\n".join((HEADER, *rows)) + "\n"
