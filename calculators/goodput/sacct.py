"""`sacct -P` output -> one validated column-wise table of job runs.

Ask sacct for allocations only, every run of a requeued job, all users:

    sacct -a -X -D -P --format=JobID,State,ExitCode,NodeList,NNodes,AllocTRES,Start,End,Elapsed,Reason,Comment

Columns are found by their header names (any order, case-insensitive). Required: JobID,
State, NodeList, AllocTRES, Start, End; used when present: Elapsed, Comment; others (ExitCode,
Reason, ...) are ignored. A line with more fields than the header (a `|` inside the last
column, which sacct does not escape) keeps the extra text in the last column, so put
Comment last. Step rows (JobID with a dot: `123.batch`, `123.0`) are left out.

Times are Slurm's local wall-clock times without an offset; `tz` names their zone. Start
`Unknown`/`None` means the run never started (it used nothing); End `Unknown` means it was
still running when sacct ran: it counts until Start + Elapsed (what sacct had seen), or
until `as_of` when there is no Elapsed column. GPUs per run: `gres/gpu=N` in AllocTRES (the sum of typed `gres/gpu:T=N`
entries when there is no untyped one); a run without GPUs in AllocTRES counts the GPUs
the contract gives its nodes (whole-node mapping, for clusters without gres accounting).

Requeues: with `-D` every run of a job is one row; runs of one JobID are numbered in start
order and `requeues` is the number of earlier runs.

Reason codes: sacct_missing_column, sacct_empty, sacct_short_row, sacct_time_invalid,
sacct_end_before_start, sacct_nodelist_invalid, sacct_unknown_node, sacct_tres_invalid,
file_not_found.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from calculators.slurm_client import NOT_A_TIME, TIME_FORMAT, run_client
from slaschema import hostlist
from slaschema.errors import InputError, Problem

SACCT_FIELDS = ("JobID", "State", "ExitCode", "NodeList", "NNodes", "AllocTRES", "Start", "End", "Elapsed",
                "Reason", "Comment")
SACCT_FORMAT = ",".join(SACCT_FIELDS)
SACCT_ARGV = ("sacct", "-a", "-X", "-D", "-P", f"--format={SACCT_FORMAT}")
REQUIRED = ("jobid", "state", "nodelist", "alloctres", "start", "end")
USED = frozenset(REQUIRED + ("elapsed", "comment"))      # the columns read; others are ignored
MAX_PROBLEMS = 200
_GPU = re.compile(r"(?:^|,)gres/gpu=(\d+)")
_GPU_TYPED = re.compile(r"(?:^|,)gres/gpu:[^=,]+=(\d+)")


@dataclass(frozen=True, eq=False)
class JobRuns:
    """Job runs that used the cluster, column-wise (one entry per run)."""

    job_id: np.ndarray          # object: sacct JobID
    state: np.ndarray           # object: first word of State (CANCELLED by 0 -> CANCELLED)
    comment: np.ndarray         # object
    nodelist: np.ndarray        # object: as sacct printed it
    start: np.ndarray           # int64 epoch seconds
    end: np.ndarray             # int64 epoch seconds; a running run: Start + Elapsed, or -1 without Elapsed
    running: np.ndarray         # bool: End was Unknown (still running when sacct ran)
    gpus: np.ndarray            # int64 GPUs allocated
    gpus_from_tres: np.ndarray  # bool: False where the whole-node mapping gave the GPUs
    node_code: np.ndarray       # int64: the run's distinct NodeList, an index into list_ptr
    list_ptr: np.ndarray        # CSR: nodes of NodeList c are list_nodes[list_ptr[c]:list_ptr[c+1]]
    list_nodes: np.ndarray      # int64 contract node indices
    requeues: np.ndarray        # int64 earlier runs of the same JobID
    row: np.ndarray             # int64 1-based data row in the file
    file: str | None = None
    sha256: str | None = None
    skipped: list[Problem] = field(default_factory=list)
    rows_read: int = 0          # allocation rows in the file (steps excluded)

    def __len__(self) -> int:
        return len(self.job_id)

    def nodes_of(self, i: int) -> np.ndarray:
        c = self.node_code[i]
        return self.list_nodes[self.list_ptr[c]:self.list_ptr[c + 1]]

    def node_counts(self, idx: np.ndarray) -> np.ndarray:
        c = self.node_code[idx]
        return self.list_ptr[c + 1] - self.list_ptr[c]


def read_sacct_file(path: str | Path, node_names, node_gpus, tz: str, skip_bad_rows: bool = False) -> JobRuns:
    p = Path(path)
    if not p.exists():
        raise InputError([Problem("file_not_found", "no such sacct file", file=str(path),
                                  fix="save `" + " ".join(SACCT_ARGV) + "` output to a file, or use --live")])
    from slaschema.safefiles import read_regular

    # an accounting export of a large fleet is hundreds of MB: named on the command line, it has
    # no size cap (like incident logs), but /proc, /sys, /dev, FIFOs and devices are refused
    from slaschema.safefiles import check_cli_file

    check_cli_file(str(p), "sacct file")
    data = read_regular(p, shown=str(path), what="sacct file", max_bytes=p.stat().st_size + (1 << 20))
    return parse_sacct(data, node_names, node_gpus, tz, file=str(path),
                       skip_bad_rows=skip_bad_rows, sha256=hashlib.sha256(data).hexdigest())


def _split(text: str, file: str) -> tuple[list[str], list[list[str]], list[int]]:
    lines = text.split("\n")
    header_at = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    if header_at is None:
        raise InputError([Problem("sacct_empty", "the sacct output is empty", file=file,
                                  fix="run sacct with -P and a --format list (its first line is the header)")])
    header = [h.strip().lower() for h in lines[header_at].rstrip("\r").split("|")]
    n = len(header)
    rows, numbers = [], []
    for i in range(header_at + 1, len(lines)):
        ln = lines[i]
        if not ln or ln == "\r":
            continue
        rows.append(ln.rstrip("\r").split("|", n - 1))
        numbers.append(i - header_at)
    return header, rows, numbers


def _fast_columns(data: bytes) -> tuple[list[str], dict[str, np.ndarray], np.ndarray] | None:
    """The columns by pandas' C parser when every line has exactly the header's fields (the
    usual case); None otherwise (then every line is split in Python and checked)."""
    import csv
    import io

    if b"\r" in data:
        return None
    first = data.find(b"\n")
    if first <= 0:
        return None
    header = [h.strip().lower() for h in data[:first].decode("utf-8", errors="replace").split("|")]
    if not header[0]:
        return None
    body = data[first + 1:]
    buf = np.frombuffer(body, dtype=np.uint8)
    nl = np.flatnonzero(buf == 10)
    if not len(buf):
        return header, {h: np.zeros(0, dtype=object) for h in header}, np.zeros(0, dtype=np.int64)
    ends = np.r_[nl, len(buf)] if buf[-1] != 10 else nl
    begins = np.r_[0, ends[:-1] + 1]
    pipes = np.flatnonzero(buf == 124)
    per_line = np.searchsorted(pipes, ends) - np.searchsorted(pipes, begins)
    nonempty = ends > begins
    if not np.all(per_line[nonempty] == len(header) - 1):
        return None
    numbers = np.flatnonzero(nonempty).astype(np.int64) + 1
    n = len(header)
    # each cell's byte span from the pipe positions
    P = pipes.reshape(-1, n - 1) if n > 1 else np.zeros((len(numbers), 0), dtype=np.int64)
    b0, e0 = begins[nonempty], ends[nonempty]

    def span(i: int) -> tuple[np.ndarray, np.ndarray]:
        return (b0 if i == 0 else P[:, i - 1] + 1), (e0 if i == n - 1 else P[:, i])

    def cells(i: int, rows: np.ndarray) -> np.ndarray:
        """The text of column i in `rows` only; "" elsewhere."""
        out = np.full(len(numbers), "", dtype=object)
        cs, ce = span(i)
        for k in rows.tolist():
            out[k] = body[cs[k]:ce[k]].decode("utf-8", errors="replace")
        return out

    at = {h: i for i, h in enumerate(header)}
    col: dict[str, np.ndarray] = {}
    padded = np.frombuffer(bytes(body) + bytes(32), dtype=np.uint8)
    for name in ("start", "end"):
        if name in at:
            cs, ce = span(at[name])
            col[name], col[name + "\0absent"], bad = _byte_times(padded, cs, ce)
            col[name + "\0raw"] = cells(at[name], np.flatnonzero(bad))
    # only a running run needs its Elapsed and only a non-empty Comment is read
    if "elapsed" in at and "end" in at:
        col["elapsed"] = cells(at["elapsed"], np.flatnonzero(col["end\0absent"]))
    if "comment" in at:
        cs, ce = span(at["comment"])
        col["comment"] = cells(at["comment"], np.flatnonzero(ce > cs))
    use = [at[h] for h in ("jobid", "state", "nodelist", "alloctres") if h in at]
    frame = pd.read_csv(io.BytesIO(body), sep="|", header=None, names=header, usecols=use, dtype=str,
                        na_filter=False, quoting=csv.QUOTE_NONE, engine="c", skip_blank_lines=True)
    for i in use:
        col[header[i]] = frame[header[i]].to_numpy(dtype=object)
    return header, col, numbers


_TIME_DIGITS = (0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18)
_TIME_LOW = np.frombuffer(b"0000-00-00T00:00:00", dtype=np.uint8)
_TIME_SPAN = np.asarray([9 if c == ord("0") else 0 for c in b"0000-00-00T00:00:00"], dtype=np.uint8)


def _byte_times(buf: np.ndarray, s: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cells `YYYY-MM-DDTHH:MM:SS` -> naive datetime64[s] (NaT where absent or invalid), the
    absent mask (Unknown, None, empty) and the invalid mask, from the bytes at [s, e)."""
    ln = e - s
    win = np.lib.stride_tricks.sliding_window_view(buf, 19)
    m = win[np.minimum(s, len(win) - 1)]
    first = buf[s]
    absent = (ln == 0) | ((ln == 7) & ((first == ord("U")) | (first == ord("u")))) | \
             ((ln == 4) & ((first == ord("N")) | (first == ord("n"))))
    if absent.any():
        txt = np.asarray([bytes(r[:k]).decode("ascii", "replace") for r, k in zip(m[absent], ln[absent])], dtype=object)
        absent[np.flatnonzero(absent)[~np.isin(txt, NOT_A_TIME)]] = False
    # digits where digits belong, - - T : : between them (uint8 arithmetic wraps: one
    # subtraction and one comparison test both bounds)
    shape_ok = (ln == 19) & ((m - _TIME_LOW) <= _TIME_SPAN).all(axis=1)
    d = m[:, _TIME_DIGITS].astype(np.int64) - 48
    two = d[:, 0::2] * 10 + d[:, 1::2]
    y, mo, dd, hh, mi, ss = two[:, 0] * 100 + two[:, 1], two[:, 2], two[:, 3], two[:, 4], two[:, 5], two[:, 6]
    ok = shape_ok & (y >= 1900) & (y <= 2200) & (mo >= 1) & (mo <= 12) & (dd >= 1) & (hh <= 23) & (mi <= 59) & (ss <= 59)
    months = np.where(ok, (y - 1970) * 12 + mo - 1, 0)
    month0 = (np.datetime64("1970-01", "M") + months.astype("timedelta64[M]")).astype("datetime64[D]")
    month1 = (np.datetime64("1970-01", "M") + (months + 1).astype("timedelta64[M]")).astype("datetime64[D]")
    ok &= dd <= (month1 - month0).astype(np.int64)
    secs = month0.astype("datetime64[s]").astype(np.int64) + (dd - 1) * 86400 + hh * 3600 + mi * 60 + ss
    out = np.where(ok, secs, np.iinfo(np.int64).min).astype("datetime64[s]")
    return out, absent, ~ok & ~absent


def _factor_map(values: np.ndarray, fn) -> np.ndarray:
    """`fn` of each value, computed once per distinct value."""
    codes, uniques = pd.factorize(pd.Series(values, dtype=object), use_na_sentinel=False)
    return np.asarray([fn(u) for u in uniques.tolist()], dtype=object)[codes] if len(values) else \
        np.zeros(0, dtype=object)


def parse_sacct(text: str | bytes, node_names, node_gpus, tz: str, file: str = "<sacct>", skip_bad_rows: bool = False,
                sha256: str | None = None) -> JobRuns:
    problems: list[Problem] = []
    fast = _fast_columns(text if isinstance(text, bytes) else text.encode("utf-8"))
    if fast is not None:
        header, col, row_no = fast
        bad = np.zeros(len(row_no), dtype=bool)
    else:
        header, rows, numbers = _split(text.decode("utf-8", errors="replace") if isinstance(text, bytes) else text,
                                       file)
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        names = {c.lower(): c for c in SACCT_FIELDS}
        raise InputError([Problem("sacct_missing_column", f"the sacct output has no {names[c]} column", file=file,
                                  line=1, value="|".join(header),
                                  fix=f"run sacct with --format={SACCT_FORMAT}") for c in missing])
    n = len(header)
    if fast is None:
        bad = np.zeros(len(rows), dtype=bool)
        for k, r in enumerate(rows):
            if len(r) < n:
                bad[k] = True
                if len(problems) < MAX_PROBLEMS:
                    problems.append(Problem("sacct_short_row", f"{len(r)} fields where the header has {n}",
                                            file=file, row=numbers[k], value="|".join(r)[:80],
                                            fix="save sacct -P output unchanged (one job per line)"))
                r.extend([""] * (n - len(r)))
        cols = list(zip(*rows)) if rows else [()] * n
        col = {h: np.asarray(cols[j], dtype=object) for j, h in enumerate(header)}
        row_no = np.asarray(numbers, dtype=np.int64)
    job_id = col["jobid"]
    keep = ~pd.Series(job_id, dtype=object).str.contains(".", regex=False).to_numpy(dtype=bool)
    if not keep.all():
        job_id, row_no, bad = job_id[keep], row_no[keep], bad[keep]
        col = {h: v[keep] for h, v in col.items()}
    rows_read = len(job_id)

    def times(name: str) -> tuple[np.ndarray, np.ndarray]:
        if col[name].dtype.kind == "M":          # parsed from the bytes (fast path)
            ts = pd.Series(col[name])
            absent = col[name + "\0absent"]
            raw = pd.Series(col[name + "\0raw"], dtype=object)
            invalid = ts.isna().to_numpy() & ~absent
        else:
            raw = pd.Series(col[name], dtype=object)
            absent = raw.isin(NOT_A_TIME).to_numpy()
            ts = pd.to_datetime(raw, format=TIME_FORMAT, errors="coerce")
            invalid = ts.isna().to_numpy() & ~absent
        for k in np.flatnonzero(invalid)[:MAX_PROBLEMS]:
            problems.append(Problem("sacct_time_invalid", f"{name} is not a sacct time", file=file,
                                    row=int(row_no[k]), column=name.capitalize(), value=str(raw.iat[k]),
                                    fix="sacct prints YYYY-MM-DDTHH:MM:SS; do not set SLURM_TIME_FORMAT"))
        if tz.upper() != "UTC":
            from calculators.importers.common import localize

            ts = localize(ts, tz)
        else:
            ts = ts.dt.tz_localize("UTC")
        epoch = np.full(len(ts), -1, dtype=np.int64)
        ok = ts.notna().to_numpy()
        if ok.any():
            epoch[ok] = ((ts[ok] - pd.Timestamp(0, tz="UTC")) // pd.Timedelta(seconds=1)).to_numpy(dtype=np.int64)
        return epoch, absent | invalid, invalid

    start, no_start, bad_start = times("start")
    end, no_end, bad_end = times("end")
    bad |= bad_start | bad_end
    backwards = ~no_start & ~no_end & (end < start)
    for k in np.flatnonzero(backwards)[:MAX_PROBLEMS]:
        value = col["end"][k]
        if isinstance(value, np.datetime64):
            value = np.datetime_as_string(value, unit="s")
        problems.append(Problem("sacct_end_before_start", "End is before Start", file=file, row=int(row_no[k]),
                                column="End", value=str(value), fix="check the row: Slurm never writes this"))
    bad |= backwards
    started = ~no_start
    # GPUs from AllocTRES
    gpu_of = _factor_map(col["alloctres"], _tres_gpus)
    from_tres = np.asarray([g is not None for g in gpu_of], dtype=bool) if len(gpu_of) else np.zeros(0, dtype=bool)
    gpus_arr = np.where(from_tres, gpu_of, 0).astype(np.int64) if len(gpu_of) else np.zeros(0, dtype=np.int64)
    # nodes: each distinct NodeList expanded once
    index = {name: i for i, name in enumerate(node_names)}
    codes, uniques = pd.factorize(pd.Series(col["nodelist"], dtype=object), use_na_sentinel=False)
    u_nodes: list[np.ndarray] = []
    u_bad: list[tuple[str, str] | None] = []
    for expr in uniques.tolist():
        expr = str(expr).strip()
        if expr.lower() in ("none assigned", "", "none"):
            u_nodes.append(np.zeros(0, dtype=np.int64))
            u_bad.append(None)
            continue
        try:
            names = _expand(expr)
        except hostlist.HostlistError as e:
            u_nodes.append(np.zeros(0, dtype=np.int64))
            u_bad.append(("sacct_nodelist_invalid", str(e)))
            continue
        idx = [index.get(nm, -1) for nm in names]
        unknown = [nm for nm, i in zip(names, idx) if i < 0]
        if unknown:
            u_nodes.append(np.zeros(0, dtype=np.int64))
            u_bad.append(("sacct_unknown_node", f"{hostlist.compress(unknown)} not in the contract's topology"))
            continue
        u_nodes.append(np.asarray(idx, dtype=np.int64))
        u_bad.append(None)
    u_badmask = np.asarray([b is not None for b in u_bad], dtype=bool)
    row_badnode = u_badmask[codes] & started if len(codes) else np.zeros(0, dtype=bool)
    for k in np.flatnonzero(row_badnode)[:MAX_PROBLEMS]:
        code, msg = u_bad[codes[k]]
        problems.append(Problem(code, msg, file=file, row=int(row_no[k]), column="NodeList",
                                value=str(col["nodelist"][k]),
                                fix="give the contract's topology these nodes, or leave other clusters' jobs out "
                                    "(sacct -M CLUSTER -r PARTITION)"))
    bad |= row_badnode
    if problems and not skip_bad_rows:
        raise InputError(sorted(problems, key=lambda p: (p.row or 0, p.column or "")))
    use = started & ~bad
    sel = np.flatnonzero(use)
    codes_sel = codes[sel]
    # node lists are kept once per distinct NodeList (CSR), each run pointing at its own
    u_len = np.asarray([len(a) for a in u_nodes], dtype=np.int64)
    u_ptr = np.zeros(len(u_nodes) + 1, dtype=np.int64)
    np.cumsum(u_len, out=u_ptr[1:])
    flat = np.concatenate(u_nodes) if len(u_nodes) and u_len.sum() else np.zeros(0, dtype=np.int64)
    # whole-node GPUs of each distinct node list: the contract's GPUs of its nodes
    ng = np.asarray(node_gpus, dtype=np.int64)
    per = np.concatenate([[0], np.cumsum(ng[flat])]) if len(flat) else np.zeros(1, dtype=np.int64)
    gpu_of_u = per[u_ptr[1:]] - per[u_ptr[:-1]]
    whole = gpu_of_u[codes_sel] if len(sel) else np.zeros(0, dtype=np.int64)
    g = gpus_arr[sel]
    ft = from_tres[sel]
    g = np.where(ft, g, whole)
    jid = job_id[sel]
    st = start[sel]
    # requeues: earlier runs of the same JobID, in start order
    jcodes = pd.factorize(pd.Series(jid, dtype=object))[0]
    order = np.lexsort((st, jcodes))
    sorted_codes = jcodes[order]
    first = np.r_[True, sorted_codes[1:] != sorted_codes[:-1]] if len(order) else np.zeros(0, dtype=bool)
    grp_start = np.maximum.accumulate(np.where(first, np.arange(len(order)), 0)) if len(order) else order
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order)) - grp_start
    state = _factor_map(col["state"][sel], lambda v: str(v).split(" ", 1)[0].strip().upper())

    def opt(name: str) -> np.ndarray:
        v = col.get(name)
        return v[sel] if v is not None else np.full(len(sel), "", dtype=object)

    # a run still going when sacct ran: its Elapsed then says how long it had run
    end_sel = np.where(no_end[sel], -1, end[sel])
    if "elapsed" in col:
        for k in np.flatnonzero(end_sel < 0).tolist():
            e = _elapsed(str(col["elapsed"][sel[k]]))
            if e is not None:
                end_sel[k] = st[k] + e
    skipped = problems if skip_bad_rows else []
    return JobRuns(job_id=jid, state=state, comment=opt("comment"),
                   nodelist=col["nodelist"][sel], start=st, end=end_sel, gpus=g,
                   running=no_end[sel], gpus_from_tres=ft, node_code=codes_sel.astype(np.int64), list_ptr=u_ptr,
                   list_nodes=flat, requeues=rank, row=row_no[sel],
                   file=file, sha256=sha256, skipped=skipped, rows_read=rows_read)


_ONE_RANGE = re.compile(r"^([A-Za-z0-9._-]*)\[(\d+)-(\d+)\]([A-Za-z0-9._-]*)\Z")


def _expand(expr: str) -> list[str]:
    """`slaschema.hostlist.expand`, with short cuts for the two shapes most node lists have:
    one name, and one name with one bracketed range (`c1-r001-n[03-06]`)."""
    if "[" not in expr and "," not in expr:
        return [expr]
    m = _ONE_RANGE.match(expr)
    if m:
        pre, lo_s, hi_s, post = m.groups()
        lo, hi = int(lo_s), int(hi_s)
        if lo <= hi and hi - lo < 100_000:
            width = len(lo_s) if lo_s.startswith("0") or len(lo_s) == len(hi_s) else 0
            return [f"{pre}{str(i).zfill(width)}{post}" for i in range(lo, hi + 1)]
    return hostlist.expand(expr)


MAX_JOB_GPUS = 10_000_000      # more GPUs than any job holds: the count is not believed


def _tres_gpus(tres: str) -> int | None:
    """GPUs in one AllocTRES string: gres/gpu=N, else the sum of gres/gpu:TYPE=N, else None
    (also for a count over MAX_JOB_GPUS, which no sacct writes)."""
    m = _GPU.search(str(tres))
    if m:
        n = int(m.group(1)[:12])
    else:
        typed = _GPU_TYPED.findall(str(tres))
        if not typed:
            return None
        n = sum(int(x[:12]) for x in typed)
    return n if n <= MAX_JOB_GPUS else None


_ELAPSED = re.compile(r"^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)\Z")


def _elapsed(text: str) -> int | None:
    """sacct Elapsed `[D-][HH:]MM:SS` -> seconds."""
    m = _ELAPSED.match(text.strip())
    if not m:
        return None
    d, h, mi, s = (int(x) if x else 0 for x in m.groups())
    return ((d * 24 + h) * 60 + mi) * 60 + s


def sacct_live(start: str, end: str, env: dict[str, str] | None = None) -> str:
    """Run sacct for [start, end) (Slurm time strings) and return its output."""
    return run_client([*SACCT_ARGV, f"--starttime={start}", f"--endtime={end}"], code="sacct_failed",
                      timeout_s=600, env=env)


def describe(runs: JobRuns) -> dict[str, Any]:
    return {"file": runs.file, "sha256": runs.sha256, "rows": runs.rows_read, "runs_used": len(runs),
            "skipped_rows": len({p.row for p in runs.skipped})}
