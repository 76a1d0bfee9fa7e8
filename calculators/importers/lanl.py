"""The public LANL HPC failure table (release LA-UR-05-7318) -> incident log + inventory.

One input row is one node failure:

    System,machine type,nodes,procstot,procsinnode,nodenum,nodenumz,node install,node prod,
    node decom,fru type,mem,cputype,memtype,num intercon,purpose,Prob Started,Prob Fixed,
    Down Time,Facilities,Hardware,Human Error,Network,Undetermined,Software,Same Event

Mapping:
- `System` -> cluster `s<System>`; every system sits in one site (`--site`, default `lanl`).
- `nodenum` -> node `s<System>-n<nodenum>` (zero-padded to the system's width). The table
  has no racks, so nodes are grouped into racks of `nodes_per_rack` consecutive numbers
  (`s<System>-r<k>`); the inventory lists every node `0 .. nodes-1` of each system, also
  those that never failed, so availability is over the whole machine.
- `Prob Started` / `Prob Fixed` (`6/21/2005 10:54`, local wall-clock time in `tz`, default
  America/Denver) -> `start` / `end` in UTC. When `Prob Fixed` is empty, `end` is
  `start + Down Time` minutes; when both are empty the incident is open.
- The cause columns (Facilities, Hardware, Human Error, Network, Undetermined, Software)
  -> `cause` as `Hardware: Memory Dimm`; `Same Event = Yes` is noted in `cause`.
- Every failure is `scope: node`, `impact: down`, `category: unplanned`; the id is
  `lanl-<row>` (the 1-based data row of the input), which keeps ids unique and traceable.

Local times that fall in a daylight-saving gap move forward to the first valid instant;
times in the repeated hour take the first (daylight) occurrence.
"""

from __future__ import annotations

import io
import warnings

import numpy as np
import pandas as pd

from calculators.importers.common import ImportResult, localize, utc_text
from slaschema.errors import InputError, Problem
from slaschema.hostlist import max_nodes

HEADER = ("System", "machine type", "nodes", "procstot", "procsinnode", "nodenum", "nodenumz", "node install",
          "node prod", "node decom", "fru type", "mem", "cputype", "memtype", "num intercon", "purpose",
          "Prob Started", "Prob Fixed", "Down Time", "Facilities", "Hardware", "Human Error", "Network",
          "Undetermined", "Software", "Same Event")
REQUIRED = ("System", "nodes", "nodenum", "Prob Started")
CAUSES = ("Facilities", "Hardware", "Human Error", "Network", "Undetermined", "Software")
TIME_FORMATS = ("%m/%d/%Y %H:%M", "%m/%d/%Y %H:%M:%S", "%m/%d/%y %H:%M")
DEFAULT_TZ = "America/Denver"


def _parse_local(s: pd.Series) -> pd.Series:
    """`6/21/2005 10:54` (a few variants) -> naive datetimes; NaT where unparsable."""
    out = pd.Series(pd.NaT, index=s.index, dtype="datetime64[ns]")
    todo = s.notna()
    for fmt in TIME_FORMATS:
        if not todo.any():
            break
        got = pd.to_datetime(s[todo], format=fmt, errors="coerce")
        ok = got.notna()
        out.loc[got.index[ok]] = got[ok].astype("datetime64[ns]")
        todo = todo & out.isna()
    return out


def convert_lanl(text: str, *, tz: str = DEFAULT_TZ, file: str | None = None, nodes_per_rack: int = 32,
                 gpus_per_node: int = 1, site: str = "lanl", skip_bad_rows: bool = False,
                 service_windows: bool = False) -> ImportResult:
    """Convert the LANL table's text; raises InputError listing every bad row unless
    `skip_bad_rows` (then they are left out and listed in `skipped`). `service_windows` adds
    the inventory columns `in_service_from` / `in_service_to` (contract format revision 1.1)
    from `node prod` and `node decom` (see `service_window`)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", pd.errors.ParserWarning)
            raw = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False, na_filter=False, index_col=False)
    except (pd.errors.ParserError, pd.errors.ParserWarning, pd.errors.EmptyDataError) as e:
        raise InputError([Problem("csv_invalid", f"the LANL table cannot be read: {str(e).strip()}",
                                  file=file)]) from None
    raw.columns = [str(c).strip() for c in raw.columns]
    missing = [c for c in REQUIRED if c not in raw.columns]
    if missing:
        raise InputError([Problem("missing_column", f"column {c!r} of the LANL table is missing", file=file,
                                  column=c, fix="the header must be the LA-UR-05-7318 header: " + ",".join(HEADER))
                          for c in missing])
    if raw.empty:
        raise InputError([Problem("empty_log", "the LANL table has no rows", file=file)])
    raw = raw.apply(lambda c: c.str.strip())
    n = len(raw)
    rows = np.arange(1, n + 1)
    problems: list[Problem] = []
    bad = np.zeros(n, dtype=bool)

    def flag(mask, code, column, message, fix=None):
        nonlocal bad
        mask = np.asarray(mask, dtype=bool)
        bad |= mask
        vals = raw[column].to_numpy(dtype=object) if column in raw.columns else [None] * n
        for i in np.flatnonzero(mask):
            problems.append(Problem(code, message, file=file, row=int(rows[i]), column=column,
                                    value=vals[i] or None, fix=fix))

    system = raw["System"]
    flag(~system.str.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*").to_numpy(dtype=bool), "system_invalid", "System",
         "System must be a number or a plain id")
    nodenum = pd.to_numeric(raw["nodenum"], errors="coerce")
    nn_bad = nodenum.isna() | (nodenum < 0) | (nodenum != nodenum.round())
    flag(nn_bad.to_numpy(), "nodenum_invalid", "nodenum", "nodenum must be a whole number >= 0")
    nodes = pd.to_numeric(raw["nodes"], errors="coerce")
    flag((nodes.isna() | (nodes < 1) | (nodes != nodes.round())).to_numpy(), "nodes_invalid", "nodes",
         "nodes must be a whole number >= 1")
    cap = max_nodes()
    fix = "check the value; a larger system needs `slakit --max-nodes N`"
    flag((nodes.notna() & (nodes > cap)).to_numpy(), "nodes_too_large", "nodes",
         f"more nodes than the node budget ({cap:,})", fix)
    flag((nodenum.notna() & (nodenum >= cap)).to_numpy(), "nodes_too_large", "nodenum",
         f"node number beyond the node budget ({cap:,})", fix)
    start_local = _parse_local(raw["Prob Started"].where(raw["Prob Started"] != ""))
    flag(start_local.isna().to_numpy() & (raw["Prob Started"] != "").to_numpy(), "timestamp_invalid",
         "Prob Started", "not a time like 6/21/2005 10:54")
    flag((raw["Prob Started"] == "").to_numpy(), "missing_value", "Prob Started", "Prob Started is empty")
    fixed_text = raw["Prob Fixed"] if "Prob Fixed" in raw.columns else pd.Series("", index=raw.index)
    end_local = _parse_local(fixed_text.where(fixed_text != ""))
    flag(end_local.isna().to_numpy() & (fixed_text != "").to_numpy(), "timestamp_invalid", "Prob Fixed",
         "not a time like 6/21/2005 10:54")
    down_text = raw["Down Time"] if "Down Time" in raw.columns else pd.Series("", index=raw.index)
    down = pd.to_numeric(down_text.where(down_text != ""), errors="coerce")
    flag((down.isna() | (down < 0)).to_numpy() & (down_text != "").to_numpy(), "down_time_invalid", "Down Time",
         "Down Time is minutes, a number >= 0")

    start = localize(start_local, tz)
    end = localize(end_local, tz)
    by_minutes = start + pd.to_timedelta(down.fillna(0), unit="m")
    use_minutes = end.isna() & down.notna() & (down >= 0) & start.notna()
    end = end.where(~use_minutes, by_minutes)
    flag((end.notna() & start.notna() & (end < start)).to_numpy(), "end_before_start", "Prob Fixed",
         "Prob Fixed is before Prob Started")

    if problems and not skip_bad_rows:
        raise InputError(sorted(problems, key=lambda p: (p.row or 0)))
    keep = ~bad
    skipped = sorted(problems, key=lambda p: (p.row or 0)) if skip_bad_rows else []

    sysid = system[keep]
    num = nodenum[keep].astype(np.int64)
    size = nodes[keep].astype(np.int64)
    # each system's node count: the table's `nodes`, or more if a nodenum is beyond it
    count = pd.concat([size.groupby(sysid, sort=False).max(), (num + 1).groupby(sysid, sort=False).max()],
                      axis=1).max(axis=1)
    if int(count.sum()) > cap:
        raise InputError([Problem("nodes_too_large", f"the systems have {int(count.sum()):,} nodes together; "
                                  f"the node budget is {cap:,}", file=file, fix=fix)])
    width = {s: max(1, len(str(int(c) - 1))) for s, c in count.items()}
    rack_width = {s: max(1, len(str(max(0, (int(c) - 1) // nodes_per_rack)))) for s, c in count.items()}

    def node_id(s: str, k: int) -> str:
        return f"s{s}-n{k:0{width[s]}d}"

    targets = [node_id(s, k) for s, k in zip(sysid.tolist(), num.tolist())]
    cause = _causes(raw[keep])
    incidents = pd.DataFrame({
        "id": [f"lanl-{r}" for r in rows[keep]],
        "scope": "node",
        "target": targets,
        "start": utc_text(start[keep]).to_numpy(),
        "end": utc_text(end[keep]).to_numpy(),
        "impact": "down",
        "category": "unplanned",
        "cause": cause,
    })
    inv_rows = []
    for s, c in count.items():
        for k in range(int(c)):
            inv_rows.append((node_id(s, k), f"s{s}-r{k // nodes_per_rack:0{rack_width[s]}d}", f"s{s}", site,
                             gpus_per_node))
    inventory = pd.DataFrame(inv_rows, columns=["node", "rack", "cluster", "site", "gpus"])
    if service_windows:
        windows: dict[str, tuple[str, str]] = {}
        prod = raw["node prod"][keep] if "node prod" in raw.columns else pd.Series("", index=sysid.index)
        decom = raw["node decom"][keep] if "node decom" in raw.columns else pd.Series("", index=sysid.index)
        for t, a, b in zip(targets, prod.tolist(), decom.tolist()):
            windows.setdefault(t, service_window(a, b))
        got = [windows.get(n, ("", "")) for n in inventory["node"].tolist()]
        inventory["in_service_from"] = [g[0] for g in got]
        inventory["in_service_to"] = [g[1] for g in got]
    return ImportResult(incidents.reset_index(drop=True), problems, skipped, inventory)


_MONTHS = {m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov",
                                       "dec"), start=1)}


def _month(text: str) -> tuple[int, int] | None:
    """`5-Jun` (year-month, two-digit year) -> (2005, 6); None for `current`, empty or other text."""
    import re

    m = re.fullmatch(r"(\d{1,2})-([A-Za-z]{3})", text.strip())
    if not m or m.group(2).lower() not in _MONTHS:
        return None
    yy = int(m.group(1))
    return (1900 + yy if yy >= 70 else 2000 + yy), _MONTHS[m.group(2).lower()]


def service_window(prod: str, decom: str) -> tuple[str, str]:
    """A node's service window from the table's month-level dates: from the first day of the
    production month (`node prod`), to the first day of the month after the decommission month
    (`node decom`; `current` = still in service). Values in another form give no bound."""
    a, b = _month(prod or ""), _month(decom or "")
    start = f"{a[0]:04d}-{a[1]:02d}-01" if a else ""
    if b:
        y, m = (b[0] + 1, 1) if b[1] == 12 else (b[0], b[1] + 1)
        end = f"{y:04d}-{m:02d}-01"
    else:
        end = ""
    if start and end and end <= start:
        end = ""
    return start, end


def _causes(raw: pd.DataFrame) -> list[str]:
    cols = [c for c in CAUSES if c in raw.columns]
    same = raw["Same Event"].str.lower().isin(("yes", "y", "1", "true")) if "Same Event" in raw.columns \
        else pd.Series(False, index=raw.index)
    out = []
    for rec, s in zip(raw[cols].itertuples(index=False, name=None), same.tolist()):
        parts = [c if v.lower() in ("yes", "y", "x", "1", c.lower()) else f"{c}: {v}" for c, v in zip(cols, rec) if v]
        if s:
            parts.append("same event as the previous failure")
        out.append("; ".join(parts))
    return out

