"""fio `--output-format=json` (or `json+`, or `json,normal`) → `FioRecord`.

Text around the JSON document (fio's "note:" lines, the human-readable report of
`json,normal`, prompts, fences) is ignored. Documents pasted as comments (`// ` or `# ` before
every line) are accepted, and so is a document cut off part way: then `complete` is False and
only the fields present are filled, so a check can refuse to judge it.

Stable JSON of `FioRecord.to_json()`:
  tool "fio", fio_version, timestamp (unix seconds), complete,
  read_bw_bytes, write_bw_bytes (bytes/s, summed over jobs), read_iops, write_iops (summed),
  read_clat_p50_us, read_clat_p99_us, read_clat_p999_us,
  write_clat_p50_us, write_clat_p99_us, write_clat_p999_us
    (completion-latency percentiles in µs; with several job entries the largest, i.e. worst),
  errors (sum of the jobs' error codes), global_options {option: value as given},
  jobs: list of
    name, rw, bs, bs_bytes (bs as bytes, what was asked), numjobs, iodepth, size, runtime, ioengine, direct (as fio echoes them, with
    job options over global options), error, elapsed_s, options (all effective options),
    read / write / trim: {io_bytes, bw_bytes, iops, runtime_ms, total_ios, effective_bs_bytes
      (io_bytes / total_ios: what one I/O really moved), clat_p50_us, clat_p99_us,
      clat_p999_us, clat_mean_us, lat_mean_us} or None when the job has no such section.
  source (the launcher prefix, or None). A direction without latency samples ("N": 0, as
  with gtod_reduce=1) has no latency (None), never 0.
`FioJob.option(name)` gives one effective option.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from acceptance.parsers._common import ParseError, Record, clean_text, iter_json_objects, load_truncated_json, to_float, to_int
from acceptance.parsers._prefix import Source, prepassed, strip_prefixes

TOOL = "fio"


@dataclass(frozen=True)
class FioDirection(Record):
    io_bytes: int | None
    bw_bytes: float | None
    iops: float | None
    runtime_ms: int | None
    total_ios: int | None
    effective_bs_bytes: float | None
    clat_p50_us: float | None
    clat_p99_us: float | None
    clat_p999_us: float | None
    clat_mean_us: float | None
    lat_mean_us: float | None


@dataclass(frozen=True)
class FioJob(Record):
    name: str | None
    rw: str | None
    bs: str | None
    bs_bytes: float | None
    numjobs: int | None
    iodepth: int | None
    size: str | None
    runtime: str | None
    ioengine: str | None
    direct: str | None
    error: int
    elapsed_s: float | None
    options: dict[str, str]
    read: FioDirection | None
    write: FioDirection | None
    trim: FioDirection | None

    def option(self, name: str) -> str | None:
        return self.options.get(name)


@dataclass(frozen=True)
class FioRecord(Record):
    tool: str
    fio_version: str | None
    timestamp: int | None
    complete: bool
    read_bw_bytes: float | None
    write_bw_bytes: float | None
    read_iops: float | None
    write_iops: float | None
    read_clat_p50_us: float | None
    read_clat_p99_us: float | None
    read_clat_p999_us: float | None
    write_clat_p50_us: float | None
    write_clat_p99_us: float | None
    write_clat_p999_us: float | None
    errors: int
    global_options: dict[str, str]
    jobs: tuple[FioJob, ...]
    source: Source | None = None


def _is_fio_doc(doc: Any) -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("jobs"), list) and (
        "fio version" in doc or any(isinstance(j, dict) and "jobname" in j for j in doc["jobs"])
    )


_COMMENT = re.compile(r"^[ \t]*(?://|#)[ \t]?", re.M)


def _find_document(text: str) -> tuple[dict, bool] | None:
    for _, doc in iter_json_objects(text):
        if _is_fio_doc(doc):
            return doc, True
    uncommented = _COMMENT.sub("", text)
    if uncommented != text:
        for _, doc in iter_json_objects(uncommented):
            if _is_fio_doc(doc):
                return doc, True
    for candidate in (uncommented, text):
        m = re.search(r"\{\s*\"fio version\"", candidate)
        if not m:
            continue
        doc = load_truncated_json(candidate[m.start():])
        if _is_fio_doc(doc):
            return doc, False
    return None


def split_samples(text: str) -> list[str]:
    """Each complete fio JSON document in `text`, as text; a commented or cut-off document
    (which `parse_fio` also reads) is returned whole."""
    text = strip_prefixes(clean_text(text))
    out = []
    decoder = json.JSONDecoder()
    for pos, doc in iter_json_objects(text):
        if _is_fio_doc(doc):
            out.append(text[pos: decoder.raw_decode(text, pos)[1]])
    if not out and _find_document(text) is not None:
        out.append(text)
    return out


def _percentile(pcts: Any, want: float) -> float | None:
    if not isinstance(pcts, dict):
        return None
    for key, value in pcts.items():
        try:
            if abs(float(key) - want) < 1e-6:
                return to_float(value)
        except ValueError:
            continue
    return None


def _direction(d: Any) -> FioDirection | None:
    if not isinstance(d, dict):
        return None
    if "clat_ns" in d and isinstance(d["clat_ns"], dict):
        clat, scale = d["clat_ns"], 1000.0
    elif isinstance(d.get("clat"), dict):  # fio 2.x: microseconds
        clat, scale = d["clat"], 1.0
    else:
        clat, scale = {}, 1000.0
    lat = d.get("lat_ns") if isinstance(d.get("lat_ns"), dict) else None
    lat_scale = 1000.0
    if lat is None and isinstance(d.get("lat"), dict):
        lat, lat_scale = d["lat"], 1.0
    pcts = clat.get("percentile")

    def pct(p: float) -> float | None:
        v = _percentile(pcts, p)
        return None if v is None else v / scale

    io_bytes = to_int(d.get("io_bytes"))
    if io_bytes is None and to_int(d.get("io_kbytes")) is not None:
        io_bytes = to_int(d.get("io_kbytes")) * 1024
    total_ios = to_int(d.get("total_ios"))
    bw_bytes = to_float(d.get("bw_bytes"))
    if bw_bytes is None and to_float(d.get("bw")) is not None:
        bw_bytes = to_float(d.get("bw")) * 1024  # "bw" is KiB/s
    # gtod_reduce=1 and similar runs record no latency samples ("N": 0, every field 0): a mean of
    # 0 is no measurement (no I/O completes in 0 ns), whether or not "N" survived a cut paste
    clat_mean = to_float(clat.get("mean")) if clat.get("N") != 0 else None
    lat_mean = to_float(lat.get("mean")) if lat and lat.get("N") != 0 else None
    clat_mean = clat_mean or None
    lat_mean = lat_mean or None
    return FioDirection(
        io_bytes=io_bytes,
        bw_bytes=bw_bytes,
        iops=to_float(d.get("iops")),
        runtime_ms=to_int(d.get("runtime")),
        total_ios=total_ios,
        effective_bs_bytes=(io_bytes / total_ios) if io_bytes is not None and total_ios else None,
        clat_p50_us=pct(50.0),
        clat_p99_us=pct(99.0),
        clat_p999_us=pct(99.9),
        clat_mean_us=None if clat_mean is None else clat_mean / scale,
        lat_mean_us=None if lat_mean is None else lat_mean / lat_scale,
    )


def _options(value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        return {}
    return {str(k): str(v) for k, v in value.items() if not isinstance(v, (dict, list))}


def _job(j: dict, global_options: dict[str, str]) -> FioJob:
    opts = {**global_options, **_options(j.get("job options"))}
    return FioJob(
        name=str(j.get("jobname")) if j.get("jobname") is not None else opts.get("name"),
        rw=opts.get("rw") or opts.get("readwrite"),
        bs=opts.get("bs") or opts.get("blocksize"),
        bs_bytes=size_to_bytes(opts.get("bs") or opts.get("blocksize")),
        numjobs=to_int(opts.get("numjobs")) if opts.get("numjobs") is not None else None,
        iodepth=to_int(opts.get("iodepth")) if opts.get("iodepth") is not None else None,
        size=opts.get("size"),
        runtime=opts.get("runtime"),
        ioengine=opts.get("ioengine"),
        direct=opts.get("direct"),
        error=to_int(j.get("error")) or 0,
        elapsed_s=to_float(j.get("elapsed")),
        options=opts,
        read=_direction(j.get("read")),
        write=_direction(j.get("write")),
        trim=_direction(j.get("trim")),
    )


_UNITS = {"": 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4, "p": 1024**5}


def size_to_bytes(value: str | None) -> float | None:
    """Bytes meant by a fio size ("4k", "1M", "4096B", "1.0MB", "1MiB"); fio's default
    kb_base=1024 makes k/K/KB/KiB all 1024. None when it is not a plain size (e.g. "4k,8k")."""
    if value is None:
        return None
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgGtTpP]?)(?:i?[bB])?\s*", value)
    if not m:
        return None
    return float(m.group(1)) * _UNITS[m.group(2).lower()]


def _sum(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def _max(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return max(present) if present else None


@prepassed()
def parse_fio(text: str) -> FioRecord:
    """Parse the first fio JSON document in `text`."""
    text = clean_text(text)
    found = _find_document(text)
    if found is None:
        raise ParseError(TOOL, "no fio JSON document (an object with \"jobs\") found")
    doc, complete = found
    global_options = _options(doc.get("global options"))
    jobs = tuple(_job(j, global_options) for j in doc["jobs"] if isinstance(j, dict))
    if not jobs:
        raise ParseError(TOOL, "fio JSON document without jobs")
    reads = [j.read for j in jobs if j.read is not None]
    writes = [j.write for j in jobs if j.write is not None]
    version = doc.get("fio version")
    return FioRecord(
        tool=TOOL,
        fio_version=str(version) if version is not None else None,
        timestamp=to_int(doc.get("timestamp")),
        complete=complete,
        read_bw_bytes=_sum([d.bw_bytes for d in reads]),
        write_bw_bytes=_sum([d.bw_bytes for d in writes]),
        read_iops=_sum([d.iops for d in reads]),
        write_iops=_sum([d.iops for d in writes]),
        read_clat_p50_us=_max([d.clat_p50_us for d in reads if d.total_ios != 0]),
        read_clat_p99_us=_max([d.clat_p99_us for d in reads if d.total_ios != 0]),
        read_clat_p999_us=_max([d.clat_p999_us for d in reads if d.total_ios != 0]),
        write_clat_p50_us=_max([d.clat_p50_us for d in writes if d.total_ios != 0]),
        write_clat_p99_us=_max([d.clat_p99_us for d in writes if d.total_ios != 0]),
        write_clat_p999_us=_max([d.clat_p999_us for d in writes if d.total_ios != 0]),
        errors=sum(j.error for j in jobs),
        global_options=global_options,
        jobs=jobs,
    )
