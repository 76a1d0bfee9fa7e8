"""The names the calculators share, defined once: scopes, their indices, the flag bits.

- `SCOPES`: the contract format's scopes, smallest first (`slaschema.models.SCOPES`);
  `NODE, RACK, CLUSTER, SITE` are their indices, as the engine's arrays use them.
- Flag bits of a unit-month or an incident (`F_*`), their names in documents
  (`FLAG_NAMES`, in bit order) and, for each combination of bits, the list of names
  (`FLAG_LISTS[bits & FLAG_MASK]`).
- Markers in the engine's integer columns: `NA` (a missing time), `DOWN` and `ALL_GPUS`
  (the `ga` of a piece that makes its unit down, or that takes every GPU of a node).

This module imports nothing of the calculators, so the engine, its results and the modules
the engine calls (incident figures, support figures, reports) can all name these without
importing one another.
"""

from __future__ import annotations

import numpy as np

from slaschema.models import SCOPES

NODE, RACK, CLUSTER, SITE = SCOPES.index("node"), SCOPES.index("rack"), SCOPES.index("cluster"), SCOPES.index("site")

F_NOTICE, F_CAP, F_UNKNOWN, F_OPEN = 1, 2, 4, 8
F_NOT_REPORTED, F_OUTSIDE = 16, 32          # revision 1.1 (8.2, 8.1): the incident counts nowhere
FLAG_NAMES: tuple[tuple[int, str], ...] = (
    (F_NOTICE, "notice_not_met"), (F_CAP, "exclusion_cap_exceeded"),
    (F_UNKNOWN, "unknown_category"), (F_OPEN, "open_incident"),
    (F_NOT_REPORTED, "not_reported"), (F_OUTSIDE, "outside_service"))
FLAG_MASK = 63
FLAG_LISTS: tuple[tuple[str, ...], ...] = tuple(
    tuple(name for bit, name in FLAG_NAMES if bits & bit) for bits in range(FLAG_MASK + 1))

NA = np.iinfo(np.int64).min   # missing value in integer time columns
DOWN = -1          # `ga` of a piece that makes its unit down
ALL_GPUS = -2      # `ga` of a degraded piece without gpus_affected: every GPU of the node

__all__ = ["ALL_GPUS", "CLUSTER", "DOWN", "FLAG_LISTS", "FLAG_MASK", "FLAG_NAMES", "F_CAP", "F_NOTICE", "F_NOT_REPORTED",
           "F_OPEN", "F_OUTSIDE", "F_UNKNOWN",
           "NA", "NODE", "RACK", "SCOPES", "SITE"]
