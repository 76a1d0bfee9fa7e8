"""Training-log goodput: the productive-time fraction of one job from its step lines.

A log profile is two named regexes applied to each line: `step` (group `step`, the step
or iteration number) and `time` (group `time`, the line's timestamp, read with
`time_format`). A line is a step line when both match. Built in:

- `megatron`: Megatron-LM's ` [2024-04-06 02:59:36] iteration       43/     100 | ...`;
- `torchtitan`: torchtitan's `[titan] 2025-06-16 22:30:50,322 - root - INFO - step: 200 ...`
  (with or without a `[rank0]:` prefix).

More profiles come from a YAML file:

    profiles:
      mytrainer:
        step: 'global_step=(?P<step>\\d+)'
        time: '^(?P<time>\\S+)'
        time_format: '%Y-%m-%dT%H:%M:%S'     # leave out for ISO 8601

From the step lines (repeated lines of one step, as every rank prints them, count once):
- span: first to last step line;
- step time: the median time per step between consecutive lines;
- stalls: a gap longer than `stall_factor` x the step time x the steps it advanced counts
  its excess over the expected time as stalled;
- restarts: a line whose step is not beyond the highest step seen so far is a restart
  (resumed from a checkpoint); the time until training passes that highest step again is
  redone work, not productive;
- productive = span - stalls - redone work. The fraction is productive / the job's elapsed
  time in sacct when the job is found there (time before the first step - start-up,
  loading - is then not productive either), else productive / span.

Reason codes: profile_invalid, profile_unknown, trainlog_no_steps, trainlog_time_invalid.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from statistics import median
from typing import Any
from zoneinfo import ZoneInfo

from slaschema.errors import InputError, Problem

DEFAULT_STALL_FACTOR = 3.0


@dataclass(frozen=True)
class LogProfile:
    name: str
    step: re.Pattern
    time: re.Pattern
    time_format: str | None       # None: ISO 8601


BUILTIN = {
    "megatron": LogProfile("megatron", re.compile(r"\]\s+iteration\s+(?P<step>\d+)\s*/"),
                           re.compile(r"^\s*\[(?P<time>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\]"), "%Y-%m-%d %H:%M:%S"),
    "torchtitan": LogProfile("torchtitan", re.compile(r"\s-\s+INFO\s+-\s+step:\s*(?P<step>\d+)\s"),
                             re.compile(r"\[titan\]\s+(?P<time>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\s"),
                             "%Y-%m-%d %H:%M:%S,%f"),
}


def load_profiles(path: str | Path | None) -> dict[str, LogProfile]:
    """The built-in profiles plus those in the YAML file `path`."""
    out = dict(BUILTIN)
    if path is None:
        return out
    from slaschema.strict_yaml import read_yaml

    p = Path(path)
    if not p.exists():
        raise InputError([Problem("file_not_found", "no such profiles file", file=str(path), fix="check the path")])
    from slaschema.safefiles import read_regular

    doc = read_yaml(read_regular(p, shown=str(path), what="profiles file"), str(path),
                    empty_fix="write the training-log profiles (see docs/goodput.md)")
    problems: list[Problem] = []

    def bad(where: tuple, msg: str, value: Any = None, fix: str | None = None) -> None:
        line, col = doc.locate(where)
        problems.append(Problem("profile_invalid", msg, file=str(path), line=line, col=col,
                                path=".".join(map(str, where)) or "(document)", value=value, fix=fix))

    data = doc.data
    if not isinstance(data, dict) or not isinstance(data.get("profiles"), dict):
        bad((), "a profiles file is a mapping with `profiles: {name: {step, time, time_format}}`", None,
            "see docs/goodput.md")
        raise InputError(problems)
    for name, spec in data["profiles"].items():
        if not isinstance(spec, dict):
            bad(("profiles", name), "a profile is a mapping with step, time and time_format")
            continue
        for k in spec:
            if k not in ("step", "time", "time_format"):
                bad(("profiles", name, k), f"unknown key {k!r}", k, "use step, time, time_format")
        pats = {}
        for key, group in (("step", "step"), ("time", "time")):
            text = spec.get(key)
            if not isinstance(text, str):
                bad(("profiles", name, key), f"{key} is a regex with a (?P<{group}>...) group", text)
                continue
            try:
                pat = re.compile(text)
            except re.error as e:
                bad(("profiles", name, key), f"not a regular expression: {e}", text)
                continue
            if group not in pat.groupindex:
                bad(("profiles", name, key), f"the regex has no named group {group!r}", text,
                    f"write (?P<{group}>...) around the {group}")
                continue
            pats[key] = pat
        tf = spec.get("time_format")
        if tf is not None and not isinstance(tf, str):
            bad(("profiles", name, "time_format"), "time_format is a strptime format", tf)
        if len(pats) == 2:
            out[str(name)] = LogProfile(str(name), pats["step"], pats["time"], tf if isinstance(tf, str) else None)
    if problems:
        raise InputError(problems)
    return out


def step_points(text: str, profile: LogProfile, tz: str = "UTC", file: str = "<log>") -> list[tuple[int, float]]:
    """(step, epoch seconds) of every step line, in file order."""
    zone = ZoneInfo(tz)
    out: list[tuple[int, float]] = []
    problems: list[Problem] = []
    for no, line in enumerate(text.splitlines(), 1):
        ms = profile.step.search(line)
        if not ms:
            continue
        mt = profile.time.search(line)
        if not mt:
            continue
        raw = mt.group("time")
        try:
            t = (datetime.strptime(raw, profile.time_format) if profile.time_format
                 else datetime.fromisoformat(raw.replace("Z", "+00:00")))
        except ValueError:
            if len(problems) < 50:
                problems.append(Problem("trainlog_time_invalid", f"the time does not match {profile.time_format!r}",
                                        file=file, line=no, value=raw, fix="fix the profile's time_format"))
            continue
        if t.tzinfo is None:
            t = t.replace(tzinfo=zone)
        out.append((int(ms.group("step")), t.astimezone(timezone.utc).timestamp()))
    if problems:
        raise InputError(problems)
    return out


@dataclass(frozen=True)
class JobProductivity:
    job_id: str
    profile: str
    file: str
    step_lines: int
    first_step: int
    last_step: int
    first_time: float
    last_time: float
    step_seconds: float | None      # median seconds per step
    stall_seconds: float
    restart_seconds: float          # redone work after restarts
    restarts: int
    job_seconds: int | None = None  # the job's elapsed time in sacct, when found
    gpus: int | None = None

    @property
    def span_seconds(self) -> float:
        return self.last_time - self.first_time

    @property
    def productive_seconds(self) -> float:
        return max(0.0, self.span_seconds - self.stall_seconds - self.restart_seconds)

    @property
    def fraction(self) -> float | None:
        base = self.job_seconds if self.job_seconds else self.span_seconds
        return None if not base else min(1.0, self.productive_seconds / base)

    def to_json(self, include_jobs: bool = False) -> dict[str, Any]:
        out = {"profile": self.profile, "step_lines": self.step_lines, "first_step": self.first_step,
               "last_step": self.last_step, "span_seconds": round(self.span_seconds, 3),
               "step_seconds": None if self.step_seconds is None else round(self.step_seconds, 3),
               "stall_seconds": round(self.stall_seconds, 3), "restart_seconds": round(self.restart_seconds, 3),
               "restarts": self.restarts, "productive_seconds": round(self.productive_seconds, 3),
               "job_seconds": self.job_seconds,
               "productive_fraction": None if self.fraction is None else round(self.fraction, 4)}
        if self.gpus and self.job_seconds and self.fraction is not None:
            out["productive_gpu_hours"] = round(self.gpus * self.job_seconds * self.fraction / 3600, 2)
        if include_jobs:
            out = {"job_id": self.job_id, "file": self.file, **out}
        return out

    def summary_line(self, include_jobs: bool = False) -> str:
        who = f"job {self.job_id}" if include_jobs else "a job"
        frac = "—" if self.fraction is None else f"{100 * self.fraction:.1f}%"
        base = "of its sacct elapsed time" if self.job_seconds else "of its first-to-last step span"
        return (f"Training log ({self.profile}) of {who}: steps {self.first_step}–{self.last_step}, productive {frac} "
                f"{base} (stalls {self.stall_seconds:.0f} s, redone after {self.restarts} restart(s) "
                f"{self.restart_seconds:.0f} s).")


def productivity(job_id: str, points: list[tuple[int, float]], profile: str = "", file: str = "",
                 stall_factor: float = DEFAULT_STALL_FACTOR) -> JobProductivity:
    pts: list[tuple[int, float]] = []
    for s, t in points:
        if pts and pts[-1][0] == s:
            continue                # the same step printed by several ranks
        pts.append((s, t))
    if not pts:
        raise InputError([Problem("trainlog_no_steps", f"no step lines match the {profile} profile", file=file,
                                  fix="pick the profile that matches the log (JOBID=FILE:PROFILE) or add one "
                                      "with --profiles")])
    per_step = [(t1 - t0) / (s1 - s0) for (s0, t0), (s1, t1) in zip(pts, pts[1:]) if s1 > s0 and t1 >= t0]
    m = median(per_step) if per_step else None
    stall = redo = 0.0
    restarts = 0
    high = pts[0][0]
    for (s0, t0), (s1, t1) in zip(pts, pts[1:]):
        dt = max(0.0, t1 - t0)
        if s1 <= high:
            restarts += s1 < s0     # the step number went back: resumed from a checkpoint
            redo += dt
            continue
        fresh = dt
        if s0 < high:               # this gap passes the highest step: only the part beyond it is new
            fresh = dt * (s1 - high) / (s1 - s0)
            redo += dt - fresh
        if m is not None:
            expected = m * (s1 - max(s0, high))
            if fresh > stall_factor * expected:
                stall += fresh - expected
        high = s1
    return JobProductivity(job_id=job_id, profile=profile, file=file, step_lines=len(pts), first_step=pts[0][0],
                           last_step=pts[-1][0], first_time=pts[0][1], last_time=pts[-1][1], step_seconds=m,
                           stall_seconds=stall, restart_seconds=redo, restarts=restarts)


def detect_profile(text: str, profiles: dict[str, LogProfile]) -> str | None:
    head = text[:200_000]
    best, hits = None, 0
    for name, prof in profiles.items():
        n = sum(1 for ln in head.splitlines() if prof.step.search(ln) and prof.time.search(ln))
        if n > hits:
            best, hits = name, n
    return best


def productivity_from_file(job_id: str, path: str, profiles: dict[str, LogProfile], profile: str | None = None,
                           tz: str = "UTC", stall_factor: float = DEFAULT_STALL_FACTOR) -> JobProductivity:
    from slaschema.safefiles import read_regular

    text = read_regular(path, what=f"training log of job {job_id}").decode("utf-8", errors="replace")
    if profile is None:
        profile = detect_profile(text, profiles)
        if profile is None:
            raise InputError([Problem("trainlog_no_steps", "no line matches a known profile "
                                      f"({', '.join(profiles)})", file=path,
                                      fix="add a profile with --profiles and name it: JOBID=FILE:PROFILE")])
    if profile not in profiles:
        raise InputError([Problem("profile_unknown", f"no profile {profile!r}", file=path, value=profile,
                                  fix=f"use one of {', '.join(profiles)}")])
    return productivity(job_id, step_points(text, profiles[profile], tz, path), profile, path, stall_factor)


def with_job(p: JobProductivity, job_seconds: int | None, gpus: int | None) -> JobProductivity:
    return replace(p, job_seconds=job_seconds, gpus=gpus)
