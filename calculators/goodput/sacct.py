"""`sacct -P` output -> one validated column-wise table of job runs.

Ask sacct for allocations only, every run of a requeued job, all users:

    sacct -a -X -D -P --format=JobID,State,ExitCode,NodeList,NNodes,AllocTRES,Start,End,Elapsed,Reason,Comment

Columns are found by their header names (any order, case-insensitive). Required: JobID,
State, NodeList, AllocTRES, Start, End; optional: ExitCode, Elapsed, Reason, Comment and
any others (ignored). A line with more fields than the header (a `|` inside the last
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

from slaschema import hostlist
from slaschema.errors import InputError, Problem

SACCT_FIELDS = ("JobID", "State", "ExitCode", "NodeList", "NNodes", "AllocTRES", "Start", "End", "Elapsed",
                "Reason", "Comment")
SACCT_FORMAT = ",".join(SACCT_FIELDS)
SACCT_ARGV = ("sacct", "-a", "-X", "-D", "-P", f"--format={SACCT_FORMAT}")
REQUIRED = ("jobid", "state", "nodelist", "alloctres", "start", "end")
NOT_A_TIME = frozenset({"unknown", "none", ""})
MAX_PROBLEMS = 200
_GPU = re.compile(r"(?:^|,)gres/gpu=(\d+)")
_GPU_TYPED = re.compile(r"(?:^|,)gres/gpu:[^=,]+=(\d+)")


@dataclass(frozen=True, eq=False)
class JobRuns:
    """Job runs that used the cluster, column-wise (one entry per run)."""

    job_id: np.ndarray          # object: sacct JobID
    state: np.ndarray           # object: first word of State (CANCELLED by 0 -> CANCELLED)
    exit_code: np.ndarray       # object
    reason: np.ndarray          # object
    comment: np.ndarray         # object
    nodelist: np.ndarray        # object: as sacct printed it
    start: np.ndarray           # int64 epoch seconds
    end: np.ndarray             # int64 epoch seconds; a running run: Start + Elapsed, or -1 without Elapsed
    running: np.ndarray         # bool: End was Unknown (still running when sacct ran)
    gpus: np.ndarray            # int64 GPUs allocated
    gpus_from_tres: np.ndarray  # bool: False where the whole-node mapping gave the GPUs
    node_ptr: np.ndarray        # CSR into node_idx: nodes of run i are node_idx[node_ptr[i]:node_ptr[i+1]]
    node_idx: np.ndarray        # int64 contract node index
    requeues: np.ndarray        # int64 earlier runs of the same JobID
    row: np.ndarray             # int64 1-based data row in the file
    file: str | None = None
    sha256: str | None = None
    skipped: list[Problem] = field(default_factory=list)
    rows_read: int = 0          # allocation rows in the file (steps excluded)

    def __len__(self) -> int:
        return len(self.job_id)

    def nodes_of(self, i: int) -> np.ndarray:
        return self.node_idx[self.node_ptr[i]:self.node_ptr[i + 1]]


def read_sacct_file(path: str | Path, node_names, node_gpus, tz: str, skip_bad_rows: bool = False) -> JobRuns:
    p = Path(path)
    if not p.is_file():
        raise InputError([Problem("file_not_found", "no such sacct file", file=str(path),
                                  fix="save `" + " ".join(SACCT_ARGV) + "` output to a file, or use --live")])
    data = p.read_bytes()
    return parse_sacct(data.decode("utf-8", errors="replace"), node_names, node_gpus, tz, file=str(path),
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


def parse_sacct(text: str, node_names, node_gpus, tz: str, file: str = "<sacct>", skip_bad_rows: bool = False,
                sha256: str | None = None) -> JobRuns:
    header, rows, numbers = _split(text, file)
    problems: list[Problem] = []
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        names = {c.lower(): c for c in SACCT_FIELDS}
        raise InputError([Problem("sacct_missing_column", f"the sacct output has no {names[c]} column", file=file,
                                  line=1, value="|".join(header),
                                  fix=f"run sacct with --format={SACCT_FORMAT}") for c in missing])
    n = len(header)
    bad = np.zeros(len(rows), dtype=bool)
    for k, r in enumerate(rows):
        if len(r) < n:
            bad[k] = True
            if len(problems) < MAX_PROBLEMS:
                problems.append(Problem("sacct_short_row", f"{len(r)} fields where the header has {n}", file=file,
                                        row=numbers[k], value="|".join(r)[:80],
                                        fix="save sacct -P output unchanged (one job per line)"))
            r.extend([""] * (n - len(r)))
    cols = list(zip(*rows)) if rows else [()] * n
    col = {h: np.asarray(cols[j], dtype=object) for j, h in enumerate(header)}
    row_no = np.asarray(numbers, dtype=np.int64)
    job_id = col["jobid"]
    alloc = np.fromiter(("." not in j for j in job_id), dtype=bool, count=len(job_id))
    keep = alloc
    job_id, row_no, bad = job_id[keep], row_no[keep], bad[keep]
    col = {h: v[keep] for h, v in col.items()}
    rows_read = len(job_id)

    def times(name: str) -> tuple[np.ndarray, np.ndarray]:
        raw = pd.Series(col[name], dtype=object).str.strip()
        absent = raw.str.lower().isin(NOT_A_TIME).to_numpy()
        ts = pd.to_datetime(raw.where(~absent), format="%Y-%m-%dT%H:%M:%S", errors="coerce")
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
        problems.append(Problem("sacct_end_before_start", "End is before Start", file=file, row=int(row_no[k]),
                                column="End", value=str(col["end"][k]), fix="check the row: Slurm never writes this"))
    bad |= backwards
    started = ~no_start
    # GPUs from AllocTRES
    tres = pd.Series(col["alloctres"], dtype=object)
    untyped = tres.str.extract(_GPU, expand=False)
    gpus = pd.to_numeric(untyped, errors="coerce")
    no_untyped = gpus.isna().to_numpy()
    if no_untyped.any() and tres[no_untyped].str.contains("gres/gpu:", regex=False).any():
        typed = tres[no_untyped].str.extractall(_GPU_TYPED)[0].astype(np.int64).groupby(level=0).sum()
        gpus.loc[typed.index] = typed
    from_tres = gpus.notna().to_numpy()
    gpus_arr = gpus.fillna(0).to_numpy(dtype=np.int64)
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
            names = hostlist.expand(expr)
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
    u_len = np.asarray([len(a) for a in u_nodes], dtype=np.int64)
    lens = u_len[codes_sel] if len(sel) else np.zeros(0, dtype=np.int64)
    node_ptr = np.zeros(len(sel) + 1, dtype=np.int64)
    np.cumsum(lens, out=node_ptr[1:])
    if len(u_nodes) and len(sel):
        u_ptr = np.zeros(len(u_nodes) + 1, dtype=np.int64)
        np.cumsum(u_len, out=u_ptr[1:])
        flat = np.concatenate(u_nodes) if u_len.sum() else np.zeros(0, dtype=np.int64)
        # gather each row's node block: offsets into flat
        starts = np.repeat(u_ptr[codes_sel] - node_ptr[:-1], lens)
        node_idx = flat[np.arange(node_ptr[-1], dtype=np.int64) + starts]
        # whole-node GPUs of each distinct node list: the contract's GPUs of its nodes
        ng = np.asarray(node_gpus, dtype=np.int64)
        per = np.concatenate([[0], np.cumsum(ng[flat])]) if len(flat) else np.zeros(1, dtype=np.int64)
        gpu_of_u = per[u_ptr[1:]] - per[u_ptr[:-1]]
        whole = gpu_of_u[codes_sel]
    else:
        node_idx = np.zeros(0, dtype=np.int64)
        whole = np.zeros(len(sel), dtype=np.int64)
    g = gpus_arr[sel]
    ft = from_tres[sel]
    g = np.where(ft, g, whole)
    jid = job_id[sel]
    st = start[sel]
    # requeues: earlier runs of the same JobID, in start order
    order = np.lexsort((st, pd.factorize(pd.Series(jid, dtype=object))[0]))
    jcodes = pd.factorize(pd.Series(jid, dtype=object))[0]
    sorted_codes = jcodes[order]
    first = np.r_[True, sorted_codes[1:] != sorted_codes[:-1]] if len(order) else np.zeros(0, dtype=bool)
    grp_start = np.maximum.accumulate(np.where(first, np.arange(len(order)), 0)) if len(order) else order
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order)) - grp_start
    state = np.asarray([s.split(" ", 1)[0].strip().upper() for s in col["state"][sel]], dtype=object)

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
    return JobRuns(job_id=jid, state=state, exit_code=opt("exitcode"), reason=opt("reason"), comment=opt("comment"),
                   nodelist=col["nodelist"][sel], start=st, end=end_sel, gpus=g,
                   running=no_end[sel], gpus_from_tres=ft, node_ptr=node_ptr, node_idx=node_idx, requeues=rank, row=row_no[sel],
                   file=file, sha256=sha256, skipped=skipped, rows_read=rows_read)


_ELAPSED = re.compile(r"^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)$")


def _elapsed(text: str) -> int | None:
    """sacct Elapsed `[D-][HH:]MM:SS` -> seconds."""
    m = _ELAPSED.match(text.strip())
    if not m:
        return None
    d, h, mi, s = (int(x) if x else 0 for x in m.groups())
    return ((d * 24 + h) * 60 + mi) * 60 + s


def sacct_live(start: str, end: str, env: dict[str, str] | None = None) -> str:
    """Run sacct for [start, end) (Slurm time strings) and return its output."""
    import subprocess

    argv = [*SACCT_ARGV, f"--starttime={start}", f"--endtime={end}"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=600, env=env)
    if proc.returncode != 0:
        raise InputError([Problem("sacct_failed", f"sacct failed (exit {proc.returncode}): {proc.stderr.strip()}",
                                  file=" ".join(argv), fix="check that slurmdbd is reachable (sacctmgr show cluster)")])
    return proc.stdout


def describe(runs: JobRuns) -> dict[str, Any]:
    return {"file": runs.file, "sha256": runs.sha256, "rows": runs.rows_read, "runs_used": len(runs),
            "skipped_rows": len({p.row for p in runs.skipped})}
