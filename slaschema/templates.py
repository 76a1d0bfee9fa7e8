"""Bundled contract templates and `slakit init`.

Templates are complete, valid contracts with the source of each number written next to
it. `init` edits the template text (not a re-dump) so those comments survive, replaces
the parties, id and topology, and validates the result before it is written.
"""

from __future__ import annotations

import os
import re
from datetime import date
from pathlib import Path

from slaschema import hostlist
from slaschema.errors import InputError, Problem
from slaschema.loader import load_contract_text
from slaschema.schema import SCHEMA_PATH

TEMPLATE_DIR = Path(__file__).resolve().parent.parent / "templates" / "contracts"
_RACK_SIZE = {"gb200-nvl72": 18, "gb300-nvl72": 18, "hgx-8gpu": 8, "mi355x-8gpu": 8}


def list_templates() -> list[tuple[str, str]]:
    out = []
    for p in sorted(TEMPLATE_DIR.glob("*.yaml")):
        m = re.search(r"^# description: (.*)$", p.read_text(encoding="utf-8"), re.M)
        out.append((p.stem, m.group(1) if m else ""))
    return out


def template_path(name: str) -> Path:
    p = TEMPLATE_DIR / f"{name}.yaml"
    if not p.is_file():
        names = ", ".join(n for n, _ in list_templates())
        raise KeyError(f"unknown template {name!r}; one of: {names}")
    return p


def group_racks(names: list[str], rack_size: int) -> list[tuple[str, list[str]]]:
    """Racks from node names: `r01-n05` -> rack `r01`; otherwise consecutive chunks."""
    two_numbers = re.compile(r"^(.*?\d+)[^\d]+\d+$")
    if all(two_numbers.match(n) for n in names):
        racks: dict[str, list[str]] = {}
        for n in names:
            key = two_numbers.match(n).group(1)  # type: ignore[union-attr]
            racks.setdefault(key, []).append(n)
        if len(racks) > 1 or len(names) <= rack_size:
            return list(racks.items())
    width = len(str((len(names) - 1) // rack_size + 1))
    return [(f"rack{str(i // rack_size + 1).zfill(max(2, width))}", names[i:i + rack_size])
            for i in range(0, len(names), rack_size)]


def _yaml_str(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


# Latin letters that Unicode does not write as a base letter and a mark (so NFKD keeps them)
_LATIN = str.maketrans({"ł": "l", "Ł": "L", "ø": "o", "Ø": "O", "đ": "d", "Đ": "D", "ß": "ss", "æ": "ae",
                        "Æ": "AE", "œ": "oe", "Œ": "OE", "þ": "th", "Þ": "Th", "ı": "i", "ħ": "h", "Ħ": "H"})


def _latin(text: str) -> str:
    """`text` with accented Latin letters as their base letters (Łódź Příbram -> Lodz Pribram),
    for the default contract id: the id takes ASCII letters only, and an accented letter was
    cut out of it (d-p-bram-...). Letters of other scripts are left for the id rule to drop."""
    import unicodedata

    return "".join(ch for ch in unicodedata.normalize("NFKD", text.translate(_LATIN)) if not unicodedata.combining(ch))


def render_template(name: str, *, provider: str, customer: str, nodes: str, rack_size: int | None = None,
                    contract_id: str | None = None, start: str | None = None,
                    base_dir: Path | None = None) -> str:
    text = template_path(name).read_text(encoding="utf-8")
    try:
        names = hostlist.expand(nodes)
    except hostlist.HostlistError as e:
        raise InputError([Problem(e.code, str(e), file="--nodes", value=nodes,
                                  fix="write e.g. 'r[01-04]-n[01-18]' or 'gpu-[001-128]'")]) from None
    arch = re.search(r"^  architecture: (\S+)", text, re.M).group(1)  # type: ignore[union-attr]
    size = rack_size or _RACK_SIZE.get(arch, 8)
    racks = group_racks(names, size)
    rack_lines = "".join(f'            - {{id: {rid}, nodes: "{hostlist.compress(members)}"}}\n'
                         for rid, members in racks)
    text = re.sub(r"(          racks:\n)(            - .*\n)+", lambda m: m.group(1) + rack_lines, text, count=1)
    text = re.sub(r"^  provider: .*$", f"  provider: {_yaml_str(provider)}", text, count=1, flags=re.M)
    text = re.sub(r"^  customer: .*$", f"  customer: {_yaml_str(customer)}", text, count=1, flags=re.M)
    cid = contract_id or re.sub(r"[^A-Za-z0-9._-]+", "-", _latin(f"{customer}-{name}")).strip("-").lower()
    text = re.sub(r"^  id: .*$", f"  id: {cid}", text, count=1, flags=re.M)
    if start:
        try:
            d = date.fromisoformat(start)
        except ValueError:
            raise InputError([Problem("date_invalid", "start must be YYYY-MM-DD", file="--start",
                                      value=start)]) from None
        end = date(d.year + (2 if "gold" in name else 1), d.month, 1)
        end = date.fromordinal(end.toordinal() - 1)
        text = re.sub(r"^  effective: .*$", f"  effective: {{from: {d}, to: {end}}}", text, count=1, flags=re.M)
        deadline = date.fromordinal(d.toordinal() + 14)
        text = re.sub(r"^  deadline: .*$", f"  deadline: {deadline}", text, count=1, flags=re.M)
    if base_dir is not None:
        rel = os.path.relpath(SCHEMA_PATH, base_dir.resolve())
        text = re.sub(r"\$schema=\S+", f"$schema={rel}", text, count=1)
    text = re.sub(r"^# description: .*\n", "", text, count=1, flags=re.M)
    load_contract_text(text, "<generated>", base_dir)  # raises InputError if the result is not valid
    return text
