"""Shared pieces of the importers: output columns, UTC formatting and atomic CSV writes."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from slaschema.errors import Problem
from slaschema.fileio import write_atomic

# Column order of the incident-log CSV the importers write.
OUTPUT_COLUMNS = ("id", "scope", "target", "start", "end", "impact", "gpus_affected", "category", "notice_at",
                  "severity", "detected_at", "reported_at", "responded_at", "resolved_at", "cause", "ticket")


@dataclass(frozen=True)
class ImportResult:
    """An imported log as strings in slakit's columns, plus what was dropped and why."""

    incidents: pd.DataFrame
    problems: list[Problem] = field(default_factory=list)   # every bad input row
    skipped: list[Problem] = field(default_factory=list)    # problems of rows left out
    inventory: pd.DataFrame | None = None
    warnings: list[Problem] = field(default_factory=list)


def utc_text(ts: pd.Series) -> pd.Series:
    """Aware timestamps -> `YYYY-MM-DDTHH:MM:SSZ` (empty where missing)."""
    out = ts.dt.tz_convert("UTC").dt.strftime("%Y-%m-%dT%H:%M:%SZ")
    return out.astype(object).where(ts.notna().to_numpy(), "")


def localize(naive: pd.Series, tz: str) -> pd.Series:
    """Local wall-clock times -> aware. Nonexistent times (spring forward) move forward to
    the first valid instant; ambiguous ones (fall back) take the first occurrence (DST)."""
    return naive.dt.tz_localize(tz, ambiguous=np.ones(len(naive), dtype=bool), nonexistent="shift_forward")


def to_csv_text(frame: pd.DataFrame) -> str:
    cols = [c for c in OUTPUT_COLUMNS if c in frame.columns]
    from slaschema.textsafe import csv_frame

    return csv_frame(frame[cols]).to_csv(index=False, lineterminator="\n")


def write_csv(frame: pd.DataFrame, path: str | Path) -> None:
    write_atomic(path, to_csv_text(frame))
