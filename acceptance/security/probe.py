#!/usr/bin/env python3
"""Collect the raw security observations of this node and print one JSON document.

    python3 acceptance/security/probe.py versions|access|isolation [PARAMS_JSON]

Runs on the node under test (read-only; commands are argv lists with timeouts). Nothing
is judged here: the runner reads the document back (`serial.raw_from_json`) and evaluates it
with the contract and the minimum-version table, exactly as `slakit security audit` does
locally. PARAMS_JSON holds the criterion params the collection needs (`shared_mounts`,
`walk_max_depth`, `walk_max_dirs` for access; `bmc_address`, `kubeconfig`, `kubelet_host`,
`connect_timeout_s` for isolation).
"""

from __future__ import annotations

import json
import socket
import sys
from datetime import datetime, timezone
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from acceptance.security import audit_access, audit_isolation, audit_versions  # noqa: E402
from acceptance.security.host import Host  # noqa: E402
from acceptance.security.serial import probe_document  # noqa: E402


def collect(check: str, params: dict, host: Host) -> object:
    if check == "versions":
        return audit_versions.collect(host)
    if check == "access":
        return audit_access.collect(host, audit_access.params_from_contract(None, params))
    if check == "isolation":
        return audit_isolation.collect(host, audit_isolation.params_from(params))
    raise SystemExit(f"usage: probe.py versions|access|isolation [PARAMS_JSON] (got {check!r})")


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("versions", "access", "isolation"):
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    try:
        params = json.loads(argv[1]) if len(argv) > 1 else {}
    except json.JSONDecodeError as exc:
        print(f"PARAMS_JSON is not JSON: {exc}", file=sys.stderr)
        return 2
    collected_at = datetime.now(timezone.utc).isoformat()
    raw = collect(argv[0], params, Host())
    doc = probe_document(f"security.{argv[0]}", raw, collected_at, socket.gethostname())
    json.dump(doc, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
