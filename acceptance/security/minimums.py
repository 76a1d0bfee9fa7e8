"""The minimum-version table: which release of each component fixes which advisory.

Three input shapes load into one `MinimumTable`:

1. Our JSON (`minimums.json`, shipped in the package; built by scripts/build-security-minimums):
   `{"format": "slakit-security-minimums", "version": 1, "generated": "YYYY-MM-DD",
     "source": URL, "entries": [{component, line, minimum, advisory, cves, source, published}]}`
2. The CSV the table is built from: columns `component,line,minimum,advisory,cves,source,published`
   (`cves` space-separated). A CSV has no generation date; its date is its newest `published`.
3. The public ClusterMAX JSON shape, `{"generated": ..., "components": {NAME: {...}}}`, where a
   component object has any of:
   - `minimum`: one floor for every version of the component (line "");
   - `branches`: `{LINE: FLOOR}` per software line (driver branch, runc minor line, Docker major);
   - `trains`: `{TRAIN: FLOOR}` per firmware train, same meaning as `branches`;
   - `ladder`: a list of successive fixed releases, oldest first, each `FLOOR` or
     `{version, line?, advisory?, cves?, source?, published?}`; every rung is its own entry,
     so a version below several rungs is reported with every advisory it misses, and the
     line's effective floor is its highest rung. A rung without `line` takes the line of its
     version (kernel `6.8.0-124.124` is on line `6.8.0`).
   A FLOOR is a version string or an object `{minimum|version, advisory?, cves?, source?|url?,
   published?}`; `advisory`, `cves`, `source`/`url` and `published` on the component are the
   defaults for its floors. Component names are normalised (`nvidia-driver` -> `nvidia_driver`).

Loading never reads the clock: `staleness(table, now)` judges the table's age.
"""

from __future__ import annotations

import csv
import io
import json
import re
import urllib.error
import urllib.request
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from importlib import resources
from pathlib import Path
from typing import Any

from slaschema.errors import InputError, Problem

from .versions import VersionError, component_kind, line_of, parse_version

FORMAT_NAME = "slakit-security-minimums"
FORMAT_VERSION = 1
MAX_AGE_DAYS = 90
CSV_COLUMNS = ["component", "line", "minimum", "advisory", "cves", "source", "published"]
URL_TIMEOUT_S = 10.0

_ALIASES = {
    "driver": "nvidia_driver",
    "gpu_driver": "nvidia_driver",
    "cuda": "cuda_toolkit",
    "container_toolkit": "nvidia_container_toolkit",
    "nvidia_ctk": "nvidia_container_toolkit",
    "docker": "docker_engine",
    "dcgm_exporter": "dcgm_exporter",
    "connectx": "connectx_firmware",
    "bluefield_firmware": "connectx_firmware",
    "virtio_net": "virtio_net_bluefield",
}


def normalise_component(name: str) -> str:
    key = re.sub(r"[^a-z0-9]+", "_", name.strip().lower()).strip("_")
    return _ALIASES.get(key, key)


@dataclass(frozen=True)
class MinimumEntry:
    component: str
    line: str                    # "" = applies to every line of the component
    minimum: str
    advisory: str
    cves: tuple[str, ...]
    source: str                  # advisory link
    published: date | None

    def to_json(self) -> dict[str, Any]:
        return {
            "component": self.component,
            "line": self.line,
            "minimum": self.minimum,
            "advisory": self.advisory,
            "cves": list(self.cves),
            "source": self.source,
            "published": self.published.isoformat() if self.published else None,
        }

    def links(self) -> list[str]:
        out = [self.source] if self.source else []
        out += [f"https://www.cve.org/CVERecord?id={c}" for c in self.cves]
        return out


@dataclass(frozen=True)
class MinimumTable:
    entries: tuple[MinimumEntry, ...]
    generated: date | None       # the table's own date; None when the input carries none
    source: str                  # where the table came from (URL or file)
    date_basis: str = "generated"  # "generated" or "latest_advisory" (CSV input)
    warnings: tuple[Problem, ...] = field(default=())

    @property
    def as_of(self) -> date | None:
        """The date the table's age is measured from."""
        if self.generated is not None:
            return self.generated
        dates = [e.published for e in self.entries if e.published]
        return max(dates) if dates else None

    def components(self) -> list[str]:
        return sorted({e.component for e in self.entries})

    def for_component(self, component: str) -> list[MinimumEntry]:
        return [e for e in self.entries if e.component == component]

    def lines(self, component: str) -> set[str]:
        return {e.line for e in self.entries if e.component == component and e.line}

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION,
            "generated": self.generated.isoformat() if self.generated else None,
            "source": self.source,
            "entries": [e.to_json() for e in self.entries],
        }


@dataclass(frozen=True)
class Staleness:
    status: str                  # "pass" or "warn"
    reason: str                  # table_current | table_stale | table_undated
    as_of: date | None
    age_days: int | None
    max_age_days: int


def staleness(table: MinimumTable, now: datetime | date, max_age_days: int = MAX_AGE_DAYS) -> Staleness:
    """A table older than `max_age_days` at `now` is a warning; so is an undated one."""
    today = now.date() if isinstance(now, datetime) else now
    as_of = table.as_of
    if as_of is None:
        return Staleness("warn", "table_undated", None, None, max_age_days)
    age = (today - as_of).days
    if age > max_age_days:
        return Staleness("warn", "table_stale", as_of, age, max_age_days)
    return Staleness("pass", "table_current", as_of, age, max_age_days)


# ---------------------------------------------------------------- parsing (pure)

def _date(value: Any, where: str, problems: list[Problem], file: str) -> date | None:
    if value in (None, ""):
        return None
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    text = str(value).strip()
    try:
        if len(text) > 10:
            return datetime.fromisoformat(text.replace("Z", "+00:00")).date()
        return date.fromisoformat(text)
    except ValueError:
        problems.append(Problem("minimums_bad_date", "not a YYYY-MM-DD date", file=file, path=where,
                                value=value, fix="write the date as YYYY-MM-DD"))
        return None


def _cves(value: Any) -> tuple[str, ...]:
    if value in (None, ""):
        return ()
    items = value if isinstance(value, (list, tuple)) else re.split(r"[\s,;]+", str(value))
    return tuple(str(c).strip() for c in items if str(c).strip())


def _check_version(entry: MinimumEntry, where: str, problems: list[Problem], file: str,
                   row: int | None = None) -> None:
    kind = component_kind(entry.component)
    if kind is None:
        return
    try:
        parse_version(entry.minimum, kind.scheme)
    except VersionError as exc:
        problems.append(Problem("minimums_bad_version", str(exc), file=file, path=None if row else where,
                                row=row, column="minimum" if row else None, value=entry.minimum))


def parse_csv_table(text: str, source: str) -> MinimumTable:
    problems: list[Problem] = []
    reader = csv.DictReader(io.StringIO(text))
    header = reader.fieldnames or []
    missing = [c for c in ("component", "minimum") if c not in header]
    if missing:
        raise InputError([Problem("minimums_missing_column", f"missing column(s) {', '.join(missing)}",
                                  file=source, row=None, value=header, fix=",".join(CSV_COLUMNS))])
    entries = []
    for n, row in enumerate(reader, start=1):
        comp = normalise_component(row.get("component") or "")
        minimum = (row.get("minimum") or "").strip()
        if not comp or not minimum:
            problems.append(Problem("minimums_missing_field", "component and minimum are required",
                                    file=source, row=n, column="component" if not comp else "minimum"))
            continue
        published = None
        raw_pub = (row.get("published") or "").strip()
        if raw_pub:
            try:
                published = date.fromisoformat(raw_pub)
            except ValueError:
                problems.append(Problem("minimums_bad_date", "not a YYYY-MM-DD date", file=source, row=n,
                                        column="published", value=raw_pub))
        entry = MinimumEntry(comp, (row.get("line") or "").strip(), minimum, (row.get("advisory") or "").strip(),
                             _cves(row.get("cves")), (row.get("source") or "").strip(), published)
        _check_version(entry, "", problems, source, row=n)
        entries.append(entry)
    if problems:
        raise InputError(problems)
    return MinimumTable(tuple(entries), None, source, date_basis="latest_advisory")


def _floor(comp: str, line: str, value: Any, defaults: Mapping[str, Any], where: str,
           problems: list[Problem], file: str) -> MinimumEntry | None:
    obj: Mapping[str, Any] = value if isinstance(value, Mapping) else {"minimum": value}
    minimum = obj.get("minimum", obj.get("version"))
    if minimum in (None, ""):
        problems.append(Problem("minimums_missing_field", "a floor needs `minimum` (or `version`)",
                                file=file, path=where, value=value))
        return None
    minimum = str(minimum).strip()
    if not line and obj.get("line") not in (None, ""):
        line = str(obj["line"]).strip()
    kind = component_kind(comp)
    if not line and kind is not None and where.split(".")[-1].startswith("ladder"):
        try:
            line = line_of(comp, minimum)
        except VersionError:
            line = ""
    def pick(*keys: str) -> Any:
        for k in keys:
            if obj.get(k) not in (None, ""):
                return obj[k]
        for k in keys:
            if defaults.get(k) not in (None, ""):
                return defaults[k]
        return None
    entry = MinimumEntry(
        comp, line, minimum,
        str(pick("advisory", "bulletin", "title") or ""),
        _cves(pick("cves", "cve")),
        str(pick("source", "url", "link") or ""),
        _date(pick("published", "date"), where + ".published", problems, file),
    )
    _check_version(entry, where, problems, file)
    return entry


def parse_clustermax_json(doc: Mapping[str, Any], source: str) -> MinimumTable:
    problems: list[Problem] = []
    comps = doc.get("components")
    if not isinstance(comps, Mapping):
        raise InputError([Problem("minimums_unknown_shape", "`components` must be a mapping of component names",
                                  file=source, path="components", value=type(comps).__name__)])
    entries: list[MinimumEntry] = []
    for name, spec in comps.items():
        comp = normalise_component(str(name))
        where = f"components.{name}"
        if not isinstance(spec, Mapping):
            spec = {"minimum": spec}
        known = [k for k in ("minimum", "branches", "trains", "ladder") if k in spec]
        if not known:
            problems.append(Problem("minimums_unknown_shape",
                                    "a component needs `minimum`, `branches`, `trains` or `ladder`",
                                    file=source, path=where, value=sorted(spec)))
            continue
        if "minimum" in spec:
            e = _floor(comp, "", spec["minimum"], spec, where + ".minimum", problems, source)
            entries += [e] if e else []
        for key in ("branches", "trains"):
            if key not in spec:
                continue
            lines = spec[key]
            if not isinstance(lines, Mapping):
                problems.append(Problem("minimums_unknown_shape", f"`{key}` must map each line to its floor",
                                        file=source, path=f"{where}.{key}", value=type(lines).__name__))
                continue
            for line, floor in lines.items():
                e = _floor(comp, str(line), floor, spec, f"{where}.{key}.{line}", problems, source)
                entries += [e] if e else []
        if "ladder" in spec:
            rungs = spec["ladder"]
            if not isinstance(rungs, list):
                problems.append(Problem("minimums_unknown_shape", "`ladder` must be a list of fixed releases",
                                        file=source, path=f"{where}.ladder", value=type(rungs).__name__))
            else:
                for i, rung in enumerate(rungs):
                    e = _floor(comp, "", rung, spec, f"{where}.ladder[{i}]", problems, source)
                    entries += [e] if e else []
    generated = _date(doc.get("generated", doc.get("generated_at", doc.get("updated"))), "generated",
                      problems, source)
    if problems:
        raise InputError(problems)
    return MinimumTable(tuple(entries), generated, str(doc.get("source") or source))


def parse_slakit_json(doc: Mapping[str, Any], source: str) -> MinimumTable:
    problems: list[Problem] = []
    entries = []
    raw_entries = doc.get("entries")
    if not isinstance(raw_entries, list):
        raise InputError([Problem("minimums_unknown_shape", "`entries` must be a list", file=source,
                                  path="entries", value=type(raw_entries).__name__)])
    for i, raw in enumerate(raw_entries):
        where = f"entries[{i}]"
        if not isinstance(raw, Mapping) or not raw.get("component") or not raw.get("minimum"):
            problems.append(Problem("minimums_missing_field", "each entry needs component and minimum",
                                    file=source, path=where, value=raw))
            continue
        entry = MinimumEntry(
            normalise_component(str(raw["component"])), str(raw.get("line") or ""), str(raw["minimum"]),
            str(raw.get("advisory") or ""), _cves(raw.get("cves")), str(raw.get("source") or ""),
            _date(raw.get("published"), where + ".published", problems, source),
        )
        _check_version(entry, where, problems, source)
        entries.append(entry)
    generated = _date(doc.get("generated"), "generated", problems, source)
    if problems:
        raise InputError(problems)
    return MinimumTable(tuple(entries), generated, str(doc.get("source") or source))


def parse_table(text: str, source: str) -> MinimumTable:
    """Parse any of the three shapes; the shape is recognised from the content."""
    stripped = text.lstrip("\ufeff \t\r\n")
    if stripped.startswith("{"):
        try:
            doc = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise InputError([Problem("minimums_bad_json", f"not valid JSON: {exc.msg}", file=source,
                                      line=exc.lineno, col=exc.colno)]) from exc
        except (ValueError, RecursionError) as exc:     # an int of 4,301+ digits; nesting thousands deep
            raise InputError([Problem("minimums_bad_json", "not readable JSON: "
                                      + ("nested too deeply" if isinstance(exc, RecursionError)
                                         else "a number too long to read"), file=source,
                                      fix="pass the table as published (slakit's JSON, the CSV or ClusterMAX JSON)")
                              ]) from None
        if doc.get("format") == FORMAT_NAME or "entries" in doc:
            return parse_slakit_json(doc, source)
        return parse_clustermax_json(doc, source)
    first = stripped.splitlines()[0] if stripped else ""
    if "component" in first and "minimum" in first:
        return parse_csv_table(stripped, source)
    raise InputError([Problem("minimums_unknown_shape",
                              "expected our minimums JSON, the ClusterMAX JSON (`components`) or the CSV "
                              f"({','.join(CSV_COLUMNS)}); the contents are not shown", file=source)])


# ---------------------------------------------------------------- IO (the edge)

MAX_TABLE_BYTES = 8 * 1024 * 1024


def _loopback_http(url: str) -> bool:
    """Plain http is accepted only from this machine (a table served locally, tests)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        return parts.scheme.lower() == "http" and parts.hostname in ("127.0.0.1", "::1", "localhost")
    except ValueError:
        return False


class _HttpsOnlyRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: ANN001 - urllib's signature
        if not (newurl.lower().startswith("https://") or _loopback_http(newurl)):
            raise urllib.error.URLError("redirect to a non-https address refused")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def read_source(path_or_url: str | Path, timeout: float = URL_TIMEOUT_S) -> str:
    """The table text from a file or an https URL: at most MAX_TABLE_BYTES, within `timeout`
    seconds in all; problems never show what was read."""
    import time

    from slaschema.safefiles import read_named

    text_src = str(path_or_url)
    scheme = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*)://", text_src)
    if scheme and not (scheme.group(1).lower() == "https" or _loopback_http(text_src)):
        raise InputError([Problem("minimums_url_refused", "only https:// addresses and files are read",
                                  file=text_src, fix="use the https:// address of the table, or a local file")])
    if scheme:
        req = urllib.request.Request(text_src, headers={"Accept": "application/json, text/csv;q=0.9"})
        opener = urllib.request.build_opener(_HttpsOnlyRedirects)
        deadline = time.monotonic() + timeout
        try:
            with opener.open(req, timeout=timeout) as resp:  # noqa: S310 (https only, redirects too)
                chunks, size = [], 0
                while True:
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"no complete answer within {timeout:g} s")
                    chunk = resp.read(65536)
                    if not chunk:
                        break
                    size += len(chunk)
                    if size > MAX_TABLE_BYTES:
                        raise InputError([Problem("minimums_too_large",
                                                  f"the answer is larger than {MAX_TABLE_BYTES:,} bytes",
                                                  file=text_src, fix="check the address")])
                    chunks.append(chunk)
                return b"".join(chunks).decode("utf-8")
        except UnicodeDecodeError:
            raise InputError([Problem("minimums_unreadable", "the answer is not UTF-8 text", file=text_src)]) from None
        except (urllib.error.URLError, TimeoutError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", None) or exc
            raise InputError([Problem("minimums_unreachable", f"could not fetch the table: {str(reason)[:120]}",
                                      file=text_src)]) from None
    try:
        data = read_named(text_src, base_dir=None, from_cli=True, what="minimums table",
                          max_bytes=MAX_TABLE_BYTES)
    except InputError as exc:
        raise InputError([Problem("minimums_unreadable", f"could not read the table: {p.message} [{p.code}]",
                                  file=text_src) for p in exc.problems]) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError([Problem("minimums_unreadable", "the table is not UTF-8 text", file=text_src)]) from None


def load_minimums(path_or_url: str | Path | None = None, timeout: float = URL_TIMEOUT_S) -> MinimumTable:
    """Load a table from a file or http(s) URL; None loads the table shipped in the package."""
    if path_or_url is None:
        text = resources.files("acceptance.security").joinpath("minimums.json").read_text(encoding="utf-8")
        return parse_table(text, "acceptance/security/minimums.json")
    return parse_table(read_source(path_or_url, timeout), str(path_or_url))


def entries_for(table: MinimumTable, component: str, line: str) -> list[MinimumEntry]:
    """Entries that apply to `line` of `component`: its own floors and the component-wide ones."""
    return [e for e in table.for_component(component) if e.line in ("", line)]


def table_from_entries(entries: Iterable[MinimumEntry], generated: date | None, source: str) -> MinimumTable:
    return MinimumTable(tuple(entries), generated, source)
