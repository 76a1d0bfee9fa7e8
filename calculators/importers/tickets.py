"""A ticket-system CSV export -> slakit's incident-log CSV, driven by a column-mapping YAML.

The map (see examples/ticket-map.yaml):

    columns:                 # our column: their column header
      id: Number
      target: Configuration item
      start: Opened
      end: Resolved
      severity: Priority
    constants:               # our column: one value for every row
      scope: node
    values:                  # our column: {their value: our value}
      severity: {P1: sev1, P2: sev2, P3: sev3, P4: sev4}
    unmapped: keep           # keep (default) or error: a value missing from a value map
    time:
      format: "%m/%d/%Y %H:%M"   # strptime format; leave out for ISO 8601
      timezone: America/Chicago   # zone of times written without an offset

Times are written out in UTC. The importer checks what it converts (times, value maps,
required values); whether targets exist and ids are unique is checked when the log is
loaded against a contract (`load_incidents`), like any other log.
"""

from __future__ import annotations

import io
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np
import pandas as pd

from calculators.incidents import has_utc_offset
from calculators.importers.common import OUTPUT_COLUMNS, ImportResult, utc_text
from calculators.log_csv import TIME_COLUMNS
from slaschema.errors import InputError, Problem
from slaschema.strict_yaml import read_yaml

REQUIRED = ("id", "scope", "target", "start")
_KEYS = ("columns", "constants", "values", "unmapped", "time")
_TIME_KEYS = ("format", "timezone")


def _format_works(fmt: str) -> bool:
    """Whether a strptime pattern is one pandas and Python both read (a sample round trip)."""
    import warnings
    from datetime import datetime

    sample = datetime(2027, 11, 23, 17, 45, 36)
    try:
        text = sample.strftime(fmt)
        datetime.strptime(text, fmt)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pd.to_datetime(pd.Series([text]), format=fmt, errors="coerce")
    except (ValueError, TypeError, OverflowError):
        return False
    return True


@dataclass(frozen=True)
class ColumnMap:
    columns: dict[str, str]                       # ours <- theirs
    constants: dict[str, str] = field(default_factory=dict)
    values: dict[str, dict[str, str]] = field(default_factory=dict)
    unmapped: str = "keep"
    time_format: str | None = None
    timezone: str | None = None
    file: str | None = None


def load_map(path: str | Path) -> ColumnMap:
    from slaschema.safefiles import check_cli_file

    p = Path(path)
    check_cli_file(p, "column map")
    if not p.is_file():
        raise InputError([Problem("file_not_found", "no such map file", file=str(path), fix="check the path")])
    return parse_map(p.read_bytes(), str(path))


def parse_map(text: str | bytes, file: str = "<map>") -> ColumnMap:
    doc = read_yaml(text, file, empty_fix="write the column map: see examples/ticket-map.yaml")
    data = doc.data
    problems: list[Problem] = []

    def bad(path: tuple, message: str, value: Any = None, fix: str | None = None, key: bool = False) -> None:
        line, col = doc.locate(path, prefer_key=key)
        problems.append(Problem("map_invalid", message, file=file, line=line, col=col,
                                path=".".join(str(x) for x in path) or "(document)", value=value, fix=fix))

    if not isinstance(data, dict):
        bad((), "a column map is a YAML mapping", type(data).__name__, "start from examples/ticket-map.yaml")
        raise InputError(problems)
    for k in data:
        if k not in _KEYS:
            bad((k,), f"unknown key {k!r}", k, f"use {', '.join(_KEYS)}", key=True)

    def str_map(key: str) -> dict[str, str]:
        m = data.get(key) or {}
        if not isinstance(m, dict):
            bad((key,), f"{key} is a mapping", type(m).__name__)
            return {}
        out = {}
        for ours, v in m.items():
            if ours not in OUTPUT_COLUMNS:
                bad((key, ours), f"{ours!r} is not an incident-log column", ours,
                    f"use one of {', '.join(OUTPUT_COLUMNS)}", key=True)
            elif v is None or isinstance(v, (dict, list)):
                bad((key, ours), "expected a single value", v if not isinstance(v, (dict, list)) else None)
            else:
                out[ours] = str(v)
        return out

    columns = str_map("columns")
    constants = str_map("constants")
    values: dict[str, dict[str, str]] = {}
    vm = data.get("values") or {}
    if not isinstance(vm, dict):
        bad(("values",), "values is a mapping of column: {their value: our value}", type(vm).__name__)
    else:
        for ours, m in vm.items():
            if ours not in OUTPUT_COLUMNS:
                bad(("values", ours), f"{ours!r} is not an incident-log column", ours, key=True)
            elif not isinstance(m, dict):
                bad(("values", ours), "a value map is {their value: our value}", None)
            else:
                values[ours] = {str(k): "" if v is None else str(v) for k, v in m.items()}
    unmapped = data.get("unmapped", "keep")
    if unmapped not in ("keep", "error"):
        bad(("unmapped",), "unmapped is keep or error", unmapped)
    tf, tz = None, None
    t = data.get("time") or {}
    if not isinstance(t, dict):
        bad(("time",), "time is a mapping with format and timezone", type(t).__name__)
    else:
        for k in t:
            if k not in _TIME_KEYS:
                bad(("time", k), f"unknown key {k!r}", k, "use format and timezone", key=True)
        tf = t.get("format")
        if tf is not None and (not isinstance(tf, str) or "%" not in tf):
            bad(("time", "format"), "format is a strptime pattern such as '%m/%d/%Y %H:%M'", tf)
            tf = None
        elif tf is not None and not _format_works(tf):
            bad(("time", "format"), "format has a directive strptime does not know (or cannot read back)", tf,
                "use %Y %m %d %H %M %S %p %b %y and literal text, e.g. '%m/%d/%Y %H:%M'")
            tf = None
        tz = t.get("timezone")
        if tz is not None:
            try:
                ZoneInfo(str(tz))
            except (ZoneInfoNotFoundError, ValueError):
                bad(("time", "timezone"), "unknown time zone", tz, "use an IANA name such as America/Chicago")
                tz = None
    for c in REQUIRED:
        if c not in columns and c not in constants:
            bad(("columns",), f"no column or constant gives {c!r}", None,
                f"add `{c}: <their column>` under columns (or a constant)")
    both = sorted(set(columns) & set(constants))
    for c in both:
        bad(("constants", c), f"{c!r} is both a mapped column and a constant", c, key=True)
    if problems:
        raise InputError(problems)
    return ColumnMap(columns, constants, values, unmapped, tf, None if tz is None else str(tz), file)


def convert_tickets(text: str, cmap: ColumnMap, *, file: str | None = None,
                    skip_bad_rows: bool = False) -> ImportResult:
    """Map an export's rows to incident-log rows (strings, times in UTC)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", pd.errors.ParserWarning)
            raw = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False, na_filter=False, index_col=False)
    except (pd.errors.ParserError, pd.errors.ParserWarning, pd.errors.EmptyDataError) as e:
        raise InputError([Problem("csv_invalid", f"the export cannot be read: {str(e).strip()}", file=file)]) from None
    raw.columns = [str(c).strip() for c in raw.columns]
    missing = [(ours, theirs) for ours, theirs in cmap.columns.items() if theirs not in raw.columns]
    if missing:
        raise InputError([Problem("column_not_found", f"the map takes {ours!r} from column {theirs!r}, which the "
                                  "export does not have", file=file, column=theirs, value=theirs,
                                  fix=f"the export's columns are: {', '.join(raw.columns)}")
                          for ours, theirs in missing])
    if raw.empty:
        raise InputError([Problem("empty_log", "the export has no rows", file=file)])
    n = len(raw)
    rows = np.arange(1, n + 1)
    problems: list[Problem] = []
    bad = np.zeros(n, dtype=bool)
    out: dict[str, pd.Series] = {}
    source: dict[str, str] = {}

    def flag(mask: np.ndarray, code: str, ours: str, vals: pd.Series | None, message: str, fix=None) -> None:
        nonlocal bad
        bad |= mask
        arr = vals.to_numpy(dtype=object) if vals is not None else None
        for i in np.flatnonzero(mask):
            problems.append(Problem(code, message, file=file, row=int(rows[i]), column=source.get(ours, ours),
                                    value=(arr[i] or None) if arr is not None else None, fix=fix))

    for ours in OUTPUT_COLUMNS:
        if ours in cmap.columns:
            source[ours] = cmap.columns[ours]
            s = raw[cmap.columns[ours]].str.strip()
        elif ours in cmap.constants:
            s = pd.Series(cmap.constants[ours], index=raw.index, dtype=object)
        else:
            continue
        if ours in cmap.values:
            vmap = cmap.values[ours]
            known = s.isin(list(vmap)) | (s == "")
            if cmap.unmapped == "error":
                flag((~known).to_numpy(), "unmapped_value", ours, s, f"value has no entry in the map's values.{ours}",
                     f"add it under values.{ours} in {cmap.file or 'the map'}")
            s = s.map(lambda v: vmap.get(v, v))
        out[ours] = s.astype(object)
    for ours in REQUIRED:
        flag((out[ours] == "").to_numpy(), "missing_value", ours, None, f"{ours} is empty")
    for ours in TIME_COLUMNS:
        if ours in out:
            out[ours] = _times(out[ours], ours, cmap, flag)
    if "start" in out and "end" in out:
        st = pd.to_datetime(out["start"].where(out["start"] != ""), utc=True, format="ISO8601", errors="coerce")
        en = pd.to_datetime(out["end"].where(out["end"] != ""), utc=True, format="ISO8601", errors="coerce")
        flag((st.notna() & en.notna() & (en < st)).to_numpy(), "end_before_start", "end", raw[source["end"]]
             if "end" in source else None, "end is before start")
    problems.sort(key=lambda p: p.row or 0)
    if problems and not skip_bad_rows:
        raise InputError(problems)
    keep = ~bad
    frame = pd.DataFrame({c: out[c][keep].to_numpy() for c in OUTPUT_COLUMNS if c in out})
    return ImportResult(frame, problems, problems if skip_bad_rows else [], None)


def _times(s: pd.Series, ours: str, cmap: ColumnMap, flag) -> pd.Series:
    """Their time text -> `...Z` text; flags unparsable and zone-less times."""
    present = (s != "").to_numpy()
    result = pd.Series("", index=s.index, dtype=object)
    if not present.any():
        return result
    if cmap.time_format:
        parsed = pd.to_datetime(s.where(present), format=cmap.time_format, errors="coerce")
        if isinstance(parsed.dtype, pd.DatetimeTZDtype):
            aware_all = parsed
            naive_mask = np.zeros(len(s), dtype=bool)
        else:
            aware_all = None
            naive_mask = present & parsed.notna().to_numpy()
        invalid = present & parsed.isna().to_numpy()
    else:
        offs = np.zeros(len(s), dtype=bool)
        offs[present] = has_utc_offset(s.to_numpy(dtype=object)[present])
        aware_all = pd.to_datetime(s.where(offs), utc=True, format="ISO8601", errors="coerce")
        parsed = pd.to_datetime(s.where(present & ~offs), format="ISO8601", errors="coerce")
        naive_mask = present & ~offs & parsed.notna().to_numpy()
        invalid = (offs & aware_all.isna().to_numpy()) | (present & ~offs & parsed.isna().to_numpy())
    flag(invalid, "timestamp_invalid", ours, s, "not a time in the map's format",
         f"times must look like {cmap.time_format or 'ISO 8601 (2027-02-03T10:00:00Z)'}")
    if aware_all is not None:
        ok = aware_all.notna().to_numpy()
        result[ok] = utc_text(aware_all[ok]).to_numpy()
    if naive_mask.any():
        if cmap.timezone is None:
            flag(naive_mask, "timestamp_naive", ours, s, "time has no UTC offset and the map sets no time.timezone",
                 "add time: {timezone: ZONE} to the map")
        else:
            local = parsed[naive_mask].dt.tz_localize(cmap.timezone, ambiguous="NaT", nonexistent="NaT")
            odd = np.zeros(len(s), dtype=bool)
            odd[np.flatnonzero(naive_mask)[local.isna().to_numpy()]] = True
            flag(odd, "timestamp_invalid", ours, s,
                 f"this local time does not exist or is ambiguous in {cmap.timezone} (daylight saving change)",
                 "correct it or give it with a UTC offset")
            good = local.notna()
            result[local.index[good]] = utc_text(local[good]).to_numpy()
    return result
