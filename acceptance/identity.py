"""Copied evidence: one GPU reported by two nodes.

A GPU's UUID (`GPU-8f1c...`, `MIG-...`) is unique to that GPU, and so is its board serial
number. When the raw outputs of one criterion show the same UUID or serial on two nodes, at
most one of them is that node's own output: the other was copied from it (handed over for a
node that was never measured) or filed under the wrong node. Every node whose GPUs another
node reports too gets an `error` verdict `gpu_identity_repeated` naming the other nodes and
the identifiers, so the criterion cannot pass, nor the acceptance be granted, on that
evidence. Which of the nodes holds the real output cannot be told from the outputs, so all
of them get it.

Only identifiers that identify: a UUID of `GPU-` or `MIG-` and at least 16 hex digits, a
serial with at least 4 characters that is not all zeros or a placeholder (`N/A`, `[N/A]`,
`Not Supported`, ...): nvidia-smi prints those for boards that report none, and many boards
share them. Identical outputs without identifiers (two healthy nodes' `dcgmi diag`) are not
compared: nothing in them says which GPU they measured.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from acceptance.judge import verdict
from acceptance.results import Status, Verdict

_UUID = re.compile(r"(?:GPU|MIG)-[0-9a-f-]{16,}", re.I)
_PLACEHOLDER = re.compile(r"\[?(?:n/?a|none|null|unknown|not supported|not available|-+)\]?", re.I)


def _ident(kind: str, value: Any) -> str | None:
    """The identifier as compared (None where it identifies nothing)."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    if kind == "uuid":
        return text.upper() if _UUID.fullmatch(text) else None
    if len(text) < 4 or _PLACEHOLDER.fullmatch(text) or not text.strip("0"):
        return None
    return text


def repeated_gpu_verdicts(criterion_id: str, metrics_by_node: Mapping[str, Mapping[str, Any] | None]
                          ) -> list[Verdict]:
    """`error: gpu_identity_repeated` for each node of one criterion whose GPUs (UUID or
    serial, `metrics["gpus"]`) another node's output reports too, in node order. Pure."""
    seen: dict[tuple[str, str], set[str]] = {}
    for node, m in metrics_by_node.items():
        if not isinstance(m, Mapping) or node.startswith("_"):
            continue
        gpus = m.get("gpus")
        if not isinstance(gpus, list):
            continue
        for g in gpus:
            if not isinstance(g, Mapping):
                continue
            for kind in ("uuid", "serial"):
                ident = _ident(kind, g.get(kind))
                if ident is not None:
                    seen.setdefault((kind, ident), set()).add(node)
    shared: dict[str, dict[tuple[str, str], set[str]]] = {}
    for key, nodes in seen.items():
        if len(nodes) > 1:
            for node in nodes:
                shared.setdefault(node, {})[key] = nodes - {node}
    out = []
    for node in sorted(shared):
        keys = sorted(shared[node])
        others = sorted(set().union(*shared[node].values()))
        shown = ", ".join(f"{kind} {ident}" for kind, ident in keys[:3]) + (f" and {len(keys) - 3} more"
                                                                          if len(keys) > 3 else "")
        out.append(verdict(
            criterion_id, node, Status.ERROR, "gpu_identity_repeated",
            measured=f"{len(keys)} GPU identifier(s) also reported by {', '.join(others[:5])}"
                     + (f" and {len(others) - 5} more" if len(others) > 5 else ""),
            expected="GPUs of this node's own (no UUID or serial another node reports)",
            details={"also_reported_by": others, "identifiers": [{"kind": k, "value": v} for k, v in keys]},
            remediation=f"the output of {node} shows the same GPUs as {others[0]} ({shown}): it was copied or "
                        "filed under the wrong node; collect it again on the node itself"))
    return out
