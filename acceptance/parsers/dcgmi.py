"""`dcgmi diag` output → `DcgmRecord`.

Formats (auto-detected, `format` says which):
  "json_v3"        `dcgmi diag -j` of DCGM 2/3: top key "DCGM GPU Diagnostic", results per
                   `gpu_ids`
  "json_v4"        DCGM 4: top key "DCGM Diagnostic", results per entity, `test_summary`,
                   `runtime_error`, `metadata`
  "json_fragment"  a single test object ({"name", "results", "test_summary"}) cut from a
                   DCGM 4 document
  "text"           the boxed text table of `dcgmi diag -r N` (DCGM 3.x; DCGM 4.x with a
                   `GPUn: Pass/Fail` row per GPU under each test: those are its gpu_results)

Stable JSON of `DcgmRecord.to_json()`:
  tool "dcgmi", format, version (DCGM 4: metadata.version; DCGM 3 JSON: the document's "version";
  text: the "DCGM Version" row), driver_version, overall, runtime_error,
  tests: list of
    name, category, result, gpu_results: list of {gpu_ids, entity_group, result, info,
    warnings, error_ids}, info (all info lines), warnings (all warning texts)
  source (the launcher prefix, or None)
Results are one of "pass", "fail", "warn", "skip". A test's `result` is its
`test_summary` when DCGM gives one, else the worst of its per-GPU results
(fail > warn > pass > skip). `overall` is "fail" if any test failed, else "warn" if any
warned, else "pass" if any passed, else "skip"; it is "error" when DCGM reported a
`runtime_error` and no test ran.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from acceptance.parsers._common import ParseError, Record, clean_text, iter_json_objects
from acceptance.parsers._prefix import Source, cut_last_line, prepassed, strip_prefixes

TOOL = "dcgmi"

_RANK = {"fail": 3, "warn": 2, "pass": 1, "skip": 0}


@dataclass(frozen=True)
class DcgmGpuResult(Record):
    gpu_ids: tuple[int, ...]
    entity_group: str | None
    result: str
    info: tuple[str, ...]
    warnings: tuple[str, ...]
    error_ids: tuple[int, ...]


@dataclass(frozen=True)
class DcgmTest(Record):
    name: str
    category: str | None
    result: str
    gpu_results: tuple[DcgmGpuResult, ...]
    info: tuple[str, ...]
    warnings: tuple[str, ...]


@dataclass(frozen=True)
class DcgmRecord(Record):
    tool: str
    format: str
    version: str | None
    driver_version: str | None
    overall: str
    runtime_error: str | None
    tests: tuple[DcgmTest, ...]
    source: Source | None = None

    def test(self, name: str) -> DcgmTest | None:
        """The test called `name` (case and punctuation insensitive), or None."""
        key = _key(name)
        for t in self.tests:
            if _key(t.name) == key:
                return t
        return None


def _key(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def normalise_status(raw: Any) -> str | None:
    s = str(raw or "").strip().lower()
    if s.startswith("pass"):
        return "pass"
    if s.startswith("fail") or s == "error":
        return "fail"
    if s.startswith("warn"):
        return "warn"
    if s.startswith("skip") or s in {"not run", "not_run", "notrun", "n/a"}:
        return "skip"
    return None


def worst(results: list[str]) -> str:
    return max(results, key=lambda r: _RANK[r]) if results else "skip"


def _overall(tests: list[DcgmTest], runtime_error: str | None) -> str:
    results = {t.result for t in tests}
    if runtime_error and not tests:
        return "error"
    for r in ("fail", "warn", "pass"):
        if r in results:
            return r
    return "skip"


def _strs(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list):
        out = []
        for v in value:
            if isinstance(v, dict):
                text = v.get("warning") or v.get("info") or v.get("message")
                if text:
                    out.append(str(text))
            elif v is not None:
                out.append(str(v))
        return out
    if isinstance(value, dict):
        text = value.get("warning") or value.get("info") or value.get("message")
        return [str(text)] if text else []
    return [str(value)]


def _ids(value: Any) -> tuple[int, ...]:
    if value is None:
        return ()
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,)
    if isinstance(value, list):
        return tuple(v for v in value if isinstance(v, int) and not isinstance(v, bool))
    return tuple(int(x) for x in re.findall(r"\d+", str(value)))


def _error_ids(value: Any) -> tuple[int, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(v["error_id"] for v in value if isinstance(v, dict) and isinstance(v.get("error_id"), int))


def _test_from_json(t: dict, category: str | None) -> DcgmTest | None:
    name = t.get("name") or t.get("test_name")
    results = t.get("results")
    if not isinstance(name, str) or not isinstance(results, list):
        return None
    gpu_results = []
    for r in results:
        if not isinstance(r, dict):
            continue
        status = normalise_status(r.get("status"))
        if status is None:
            continue
        ids = _ids(r.get("gpu_ids")) if "gpu_ids" in r else _ids(r.get("entity_id"))
        gpu_results.append(DcgmGpuResult(
            gpu_ids=ids,
            entity_group=r.get("entity_group") if isinstance(r.get("entity_group"), str) else ("GPU" if "gpu_ids" in r else None),
            result=status,
            info=tuple(_strs(r.get("info"))),
            warnings=tuple(_strs(r.get("warnings")) + _strs(r.get("warning"))),
            error_ids=_error_ids(r.get("warnings")),
        ))
    summary = t.get("test_summary")
    summary_status = normalise_status(summary.get("status")) if isinstance(summary, dict) else None
    result = summary_status or worst([g.result for g in gpu_results])
    info = tuple(i for g in gpu_results for i in g.info) + tuple(_strs(summary.get("info")) if isinstance(summary, dict) else ())
    warnings = tuple(w for g in gpu_results for w in g.warnings) + tuple(
        _strs(summary.get("warnings")) if isinstance(summary, dict) else ()
    )
    return DcgmTest(name=name, category=category, result=result, gpu_results=tuple(gpu_results), info=info, warnings=warnings)


def _from_json(doc: dict) -> DcgmRecord | None:
    if "DCGM Diagnostic" in doc or "DCGM GPU Diagnostic" in doc:
        v4 = "DCGM Diagnostic" in doc
        body = doc.get("DCGM Diagnostic") if v4 else doc.get("DCGM GPU Diagnostic")
        if not isinstance(body, dict):
            return None
        tests: list[DcgmTest] = []
        for cat in body.get("test_categories") or []:
            if not isinstance(cat, dict):
                continue
            for t in cat.get("tests") or []:
                if isinstance(t, dict):
                    test = _test_from_json(t, cat.get("category") if isinstance(cat.get("category"), str) else None)
                    if test is not None:
                        tests.append(test)
        meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
        runtime_error = body.get("runtime_error") if isinstance(body.get("runtime_error"), str) else None
        version = meta.get("version") or body.get("version")
        driver = meta.get("Driver Version Detected") or body.get("Driver Version Detected")
        if not tests and not runtime_error:
            return None
        return DcgmRecord(
            tool=TOOL, format="json_v4" if v4 else "json_v3",
            version=str(version) if version is not None else None,
            driver_version=str(driver) if driver is not None else None,
            overall=_overall(tests, runtime_error), runtime_error=runtime_error, tests=tuple(tests),
        )
    if "name" in doc and "results" in doc:
        test = _test_from_json(doc, None)
        if test is None or not test.gpu_results and "test_summary" not in doc:
            return None
        return DcgmRecord(tool=TOOL, format="json_fragment", version=None, driver_version=None,
                          overall=_overall([test], None), runtime_error=None, tests=(test,))
    return None


# --------------------------------------------------------------------------- text table

_TEXT_ROW = re.compile(r"^\s*\|(.*?)\|(.*)\|\s*$")
_SECTION = re.compile(r"^\s*[|+]-{2,}\s*(\w[\w ]*?)\s*-+[+|]")
_STATUS_CELL = re.compile(r"^(Pass|Fail|Skip|Warn)\b(?:\s*-\s*(.*))?$", re.I)
# DCGM 4 prints each GPU's result on its own row under the test: "|    | GPU0: Pass |".
_GPU_CELL = re.compile(r"^GPU\s?(\d+)\s*:\s*(Pass|Fail|Skip|Warn)\w*(?:\s+-\s.*)?\s*$", re.I)
# A note row naming its GPU: "| Warning: GPU1 | ... |" (DCGM 4) or "| Warning | GPU 1 ... |" (DCGM 3).
_NOTE_NAME = re.compile(r"^(Info|Warning|Warnings)\b(?:\s*[:-]\s*GPU\s?(\d+))?\s*$", re.I)
_NOTE_GPU = re.compile(r"^\s*GPU\s?(\d+)\b")


def _text_samples(text: str) -> list[str]:
    out = []
    for m in re.finditer(r"^\s*\|\s*Diagnostic\s*\|\s*Result\s*\|", text, re.M):
        end = re.compile(r"^(?!\s*[|+]).*$", re.M).search(text, m.end() + 1)
        start = text.rfind("\n", 0, m.start()) + 1
        out.append(text[start: end.start() if end else len(text)])
    return out


def _from_text(text: str) -> DcgmRecord:
    meta: dict[str, str] = {}
    tests: list[dict] = []
    section: str | None = None
    current: dict | None = None  # the row continuation lines append to
    for line in cut_last_line(text.split("\n"), text):
        sm = _SECTION.match(line)
        if sm:
            section = sm.group(1).strip()
            current = None
            continue
        m = _TEXT_ROW.match(line)
        if not m or set(m.group(2).strip()) <= set("=-+"):
            continue
        name = m.group(1).strip()
        cell = m.group(2)
        chunk = cell[1:-2] if len(cell) >= 4 else cell.strip()
        if name in {"Diagnostic"}:
            continue
        if section and section.lower() == "metadata":
            if name:
                meta[name] = cell.strip()
                current = None
            continue
        if not name:
            if current is None:
                continue
            gm = _GPU_CELL.match(cell.strip())
            if gm and tests:
                # a per-GPU result ends any note above it; it is never part of the note's text
                tests[-1]["gpus"].append((int(gm.group(1)), normalise_status(gm.group(2)) or "skip"))
                current = tests[-1]
                continue
            st = _STATUS_CELL.match(cell.strip())
            if current["kind"] == "test" and st:
                current["results"].append(cell.strip())
            else:
                current["chunks"].append(chunk)
            continue
        nm = _NOTE_NAME.match(name)
        if nm and tests:
            gpu = int(nm.group(2)) if nm.group(2) else None
            if gpu is None and (g2 := _NOTE_GPU.match(cell)):
                gpu = int(g2.group(1))
            current = {"kind": nm.group(1).lower().rstrip("s"), "chunks": [chunk], "test": tests[-1], "gpu": gpu}
            tests[-1]["notes"].append(current)
            continue
        current = {"kind": "test", "name": name, "category": section, "results": [cell.strip()], "notes": [],
                   "chunks": [], "gpus": []}
        tests.append(current)
    built: list[DcgmTest] = []
    for t in tests:
        gpu_results = []
        for res in t["results"]:
            st = _STATUS_CELL.match(res)
            if not st:
                continue
            scope = st.group(2) or ""
            ids = () if "all" in scope.lower() or not scope else tuple(int(x) for x in re.findall(r"\d+", scope))
            gpu_results.append(DcgmGpuResult(gpu_ids=ids, entity_group="GPU" if ids else None,
                                             result=normalise_status(st.group(1)) or "skip",
                                             info=(), warnings=(), error_ids=()))
        if not gpu_results:
            continue
        notes = [(n["kind"], n.get("gpu"), "".join(n["chunks"]).strip()) for n in t["notes"]]
        info = tuple(text for kind, _, text in notes if kind == "info")
        warnings = tuple(text for kind, _, text in notes if kind == "warning")
        summary = worst([g.result for g in gpu_results])
        if t["gpus"]:
            # DCGM 4: the row holds the summary, the GPUn rows the per-GPU results
            gpu_results = [DcgmGpuResult(
                gpu_ids=(gpu,), entity_group="GPU", result=res,
                info=tuple(text for kind, g, text in notes if kind == "info" and g == gpu),
                warnings=tuple(text for kind, g, text in notes if kind == "warning" and g == gpu),
                error_ids=()) for gpu, res in t["gpus"]]
        built.append(DcgmTest(name=t["name"], category=t["category"],
                              result=worst([summary] + [g.result for g in gpu_results]),
                              gpu_results=tuple(gpu_results), info=info, warnings=warnings))
    if not built:
        raise ParseError(TOOL, "dcgmi text table without test rows")
    return DcgmRecord(
        tool=TOOL, format="text", version=meta.get("DCGM Version"),
        driver_version=meta.get("Driver Version Detected"), overall=_overall(built, None),
        runtime_error=None, tests=tuple(built),
    )


# --------------------------------------------------------------------------- entry points

def split_samples(text: str) -> list[str]:
    """Each dcgmi diag output in `text`: every JSON document or fragment that parses as one,
    and every text table."""
    text = strip_prefixes(clean_text(text))
    found: list[tuple[int, str]] = []
    for pos, doc in iter_json_objects(text):
        if _from_json(doc) is not None:
            end = _json_end(text, pos)
            found.append((pos, text[pos:end]))
    for sample in _text_samples(text):
        found.append((text.find(sample), sample))
    return [s for _, s in sorted(found)]


def _json_end(text: str, pos: int) -> int:
    import json

    try:
        _, end = json.JSONDecoder().raw_decode(text, pos)
        return end
    except ValueError:
        return len(text)


@prepassed()
def parse_dcgmi(text: str) -> DcgmRecord:
    """Parse the first `dcgmi diag` result (JSON of DCGM 3 or 4, or the text table) in `text`."""
    text = clean_text(text)
    candidates: list[tuple[int, Any]] = []
    for pos, doc in iter_json_objects(text):
        rec = _from_json(doc)
        if rec is not None:
            candidates.append((pos, rec))
            break
    tables = _text_samples(text)
    if tables:
        candidates.append((text.find(tables[0]), tables[0]))
    if not candidates:
        if re.search(r"\bError\b|\bfailed\b", text, re.I) and "dcgmi" in text.lower():
            raise ParseError(TOOL, "dcgmi reported an error and printed no diagnostic result")
        raise ParseError(TOOL, "no dcgmi diag JSON document or result table found")
    candidates.sort(key=lambda c: c[0])
    first = candidates[0][1]
    return first if isinstance(first, DcgmRecord) else _from_text(first)
