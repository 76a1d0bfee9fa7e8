"""The run document is a typed model: built by keyword, frozen, its JSON one serializer of it
(dump -> parse -> equal, byte for byte), and a results.json that comes with a bundle is parsed
strictly: wrong types, unknown fields, huge lists, naive times and another version are each a
coded problem with the field path, all of them at once, and never a traceback."""

from __future__ import annotations

import json
from datetime import datetime

import pytest
from click.testing import CliRunner
from pydantic import ValidationError

from acceptance import document as rd
from acceptance.document import (
    RUN_FORMAT,
    CriterionOutcome,
    RunDocument,
    VerdictEntry,
    parse_run_document,
    read_run_document,
)
from acceptance.evidence import Bundle, dumps
from acceptance.results import Status
from slakit.cli import main
from slaschema.errors import InputError
from tests.acceptance.test_aggregate import _handover
from tests.acceptance.test_coverage import WAIVERS, contract, evaluate, failing_bundle, full_bundle, waiver_file


@pytest.fixture(scope="module")
def documents(tmp_path_factory):
    """results.json of bundles judged by `accept evaluate --write`: whole, partial, waived, Slurm."""
    out = {}
    tmp = tmp_path_factory.mktemp("full")
    c, b = contract(tmp), full_bundle(tmp)
    evaluate(c, b, "--as-of", "2027-01-20")
    out["full"] = b / "results.json"
    tmp = tmp_path_factory.mktemp("partial")
    c, b = contract(tmp), full_bundle(tmp)
    evaluate(c, b, "--nodes", "n[1-2]", "--only", "sw")
    out["partial"] = b / "results.json"
    tmp = tmp_path_factory.mktemp("waived")
    c, b = contract(tmp), failing_bundle(tmp)
    evaluate(c, b, "--waivers", str(waiver_file(tmp, WAIVERS)), "--as-of", "2027-01-20")
    out["waived"] = b / "results.json"
    tmp = tmp_path_factory.mktemp("slurm")
    c, b = _handover(tmp)
    evaluate(c, b)
    out["slurm"] = b / "results.json"
    return out


@pytest.mark.parametrize("name", ["full", "partial", "waived", "slurm"])
def test_dump_parse_is_equal_and_byte_identical(documents, name):
    path = documents[name]
    doc = read_run_document(path)
    assert doc.format == RUN_FORMAT
    written = path.read_bytes()
    assert dumps(doc.to_json(), pretty=False).encode("utf-8") == written        # JSON is one serializer of it
    again = read_run_document(path, dumps(doc.to_json()).encode("utf-8"))         # indented: same data
    assert again == doc
    assert parse_run_document(json.loads(written)) == doc


def test_the_records_are_typed_and_frozen(documents):
    doc = read_run_document(documents["waived"])
    assert doc.status is Status.WAIVED and doc.decision is not None and doc.decision.result == "accepted_with_waivers"
    assert isinstance(doc.as_of, datetime) and doc.as_of.utcoffset() is not None
    (w1, w2) = doc.waivers
    assert w1.expires.utcoffset() is not None and (w1.state, w1.verdicts_waived) == ("applied", 1)
    sw = next(c for c in doc.criteria if c.id == "sw")
    waived = [v for v in sw.verdicts if v.status is Status.WAIVED]
    assert [v.waived["reason"] for v in waived] == ["constraint_not_met"]
    assert all(isinstance(k, Status) for k in doc.counts)
    with pytest.raises(ValidationError):
        doc.status = Status.PASS                                                # frozen
    with pytest.raises(TypeError):
        VerdictEntry("sw", "n1", Status.PASS)                                   # keywords only
    slurm = read_run_document(documents["slurm"])
    node_list = slurm.criteria[0]
    assert node_list.id == "topology.node-list" and node_list.evidence_outside_scope is None
    assert "evidence_outside_scope" not in slurm.to_json()["criteria"][0]     # absent stays absent
    assert slurm.criteria[1].evidence_outside_scope == ()


def test_a_document_written_before_coverage_judging_is_read_without_a_decision(documents):
    data = json.loads(documents["full"].read_text())
    for key in ("decision", "scope", "waivers", "as_of"):
        del data[key]
    data["format"] = "slakit-acceptance-run/1"
    doc = parse_run_document(data)
    assert doc.decision is None and doc.scope is None and doc.failed is False
    assert list(doc.to_json()) == ["format", "contract", "run", "status", "counts", "criteria", "aggregate"]


def _problems(data, tmp_path=None) -> list:
    with pytest.raises(InputError) as e:
        if isinstance(data, bytes):
            read_run_document("results.json", data)
        else:
            parse_run_document(data, "results.json")
    return e.value.problems


def test_wrong_types_unknown_fields_and_bad_values_are_all_reported_at_once(documents):
    data = json.loads(documents["full"].read_text())
    data["status"] = "great"
    data["criteria"][0]["verdicts"][1]["node"] = 5
    data["criteria"][1]["verdicts"][0]["measured"] = {"x": 1}
    data["run"]["nodes"] = "n1"
    data["aggregate"]["nodes"][0]["counts"]["sideways"] = 1
    data["criteria"][2]["injected"] = "<script>"
    data["contract"].pop("id")
    data["as_of"] = "2027-01-20T00:00:00"
    got = {(p.code, p.path) for p in _problems(data)}
    assert {("results_bad_value", "status"), ("results_wrong_type", "criteria[0].verdicts[1].node"),
            ("results_unknown_field", "criteria[2].injected"), ("results_wrong_type", "run.nodes"),
            ("results_bad_value", "aggregate.nodes[0].counts.sideways"),
            ("results_missing_field", "contract.id"), ("results_naive_time", "as_of")} <= got
    measured = [p for p in _problems(data) if p.path == "criteria[1].verdicts[0].measured"]
    assert [(p.code, p.message) for p in measured] == [("results_wrong_type", "Input should be a number, a text or null")]
    for p in _problems(data):
        assert p.file == "results.json" and p.fix and p.code.startswith("results_")


def test_a_value_is_shown_and_a_whole_list_is_summarised(documents):
    data = json.loads(documents["full"].read_text())
    data["criteria"][0]["status"] = "x" * 500
    data["criteria"][1]["nodes"] = {"a": [1] * 1000}
    by_path = {p.path: p for p in _problems(data)}
    assert len(str(by_path["criteria[0].status"].value)) <= 80
    assert by_path["criteria[1].nodes"].value == "an object with 1 fields"


def test_another_version_is_one_problem_naming_the_formats_read(documents):
    data = json.loads(documents["full"].read_text())
    data["format"] = "slakit-acceptance-run/9"
    data["criteria"] = "whatever the new version holds"
    (p,) = _problems(data)
    assert (p.code, p.path, p.value) == ("results_unknown_format", "format", "slakit-acceptance-run/9")
    assert "slakit-acceptance-run/2" in p.fix
    del data["format"]
    (p,) = _problems(data)
    assert p.code == "results_unknown_format"


def test_huge_lists_are_refused_by_count(documents, monkeypatch):
    data = json.loads(documents["full"].read_text())
    entry = {"id": "c", "check": "x.y", "status": "pass", "expected": "", "verdicts": []}
    data["criteria"] = [entry] * (rd.MAX_CRITERIA + 1)
    (p,) = _problems(data)
    assert (p.code, p.path, p.value) == ("results_too_many", "criteria", f"a list of {rd.MAX_CRITERIA + 1}")


def test_a_file_over_the_size_limit_is_refused_before_it_is_parsed(tmp_path, monkeypatch):
    monkeypatch.setattr(rd, "MAX_BYTES", 1000)
    path = tmp_path / "results.json"
    path.write_text("[" + "0," * 2000 + "0]")
    with pytest.raises(InputError) as e:
        read_run_document(path)
    (p,) = e.value.problems
    assert p.code == "results_too_large" and p.value == path.stat().st_size


@pytest.mark.parametrize(("data", "code"), [
    (b"\xff\xfe{}", "results_invalid"),                         # not UTF-8
    (b'{"format": "slakit-acceptance-run/2", "criteria": [', "results_invalid"),   # cut off
    (b"[1, 2]", "results_invalid"),                             # not an object
    (b'{"format": "slakit-acceptance-run/2", "run": ' + b"[" * 5000 + b"]" * 5000 + b"}", "results_invalid"),
])
def test_broken_json_is_one_coded_problem(data, code):
    problems = _problems(data)
    assert problems and all(p.code.startswith("results_") for p in problems)
    assert problems[0].code == code


def test_thousands_of_problems_are_listed_up_to_a_cap(documents):
    data = json.loads(documents["full"].read_text())
    v = data["criteria"][0]["verdicts"][0]
    data["criteria"][0]["verdicts"] = [{**v, "status": "nope"} for _ in range(300)]
    problems = _problems(data)
    assert len(problems) == rd.MAX_PROBLEMS + 1
    assert problems[-1].message.startswith("250 more problems")


def test_accept_report_on_a_hostile_document_prints_every_problem_and_exits_1(documents, tmp_path):
    b = tmp_path / "b"
    data = json.loads(documents["full"].read_text())
    data["status"] = "great"
    data["criteria"][0]["evil"] = 1
    bundle = Bundle(b)
    bundle.write("results.json", json.dumps(data))
    bundle.write_manifest()
    r = CliRunner().invoke(main, ["accept", "report", str(b), "-o", str(tmp_path / "cert.pdf")])
    assert r.exit_code == 1 and "Traceback" not in r.output
    assert f"{b / 'results.json'}: status: " in r.output and "[results_bad_value]" in r.output
    assert "criteria[0].evil: unknown field 'evil'" in r.output and "[results_unknown_field]" in r.output
    assert "fix: " in r.output and "2 error(s)" in r.output
    assert not (tmp_path / "cert.pdf").exists()
    r = CliRunner().invoke(main, ["accept", "report", str(b), "--format", "json"])
    assert r.exit_code == 1
    problems = json.loads(r.stdout)["problems"]
    assert {(p["code"], p["path"]) for p in problems} == {("results_bad_value", "status"),
                                                          ("results_unknown_field", "criteria[0].evil")}


def _inconsistent(data):
    from acceptance.decision import inconsistencies

    return inconsistencies(parse_run_document(data, "results.json"), "results.json")


def test_a_document_whose_decision_its_verdicts_do_not_give_is_refused(documents, tmp_path):
    """An edited results.json (an unsigned bundle re-manifested by the other party) whose verdicts
    failed but whose decision still says ACCEPTED makes no certificate: the decision, the run's
    status and each criterion's status are checked against the verdicts they roll up."""
    data = json.loads(documents["full"].read_text())
    assert data["decision"]["headline"] == "ACCEPTED"
    for name in documents:                                        # what slakit writes is consistent
        assert _inconsistent(json.loads(documents[name].read_text())) == []
    for v in data["criteria"][1]["verdicts"]:
        v["status"], v["reason"] = "fail", "below_min"
    data["criteria"][1]["status"] = "fail"
    got = [(p.code, p.path) for p in _inconsistent(data)]
    assert got == [("results_inconsistent", "status"), ("results_inconsistent", "decision")]
    (decision,) = [p for p in _inconsistent(data) if p.path == "decision"]
    assert "'ACCEPTED'" in decision.message and "REJECTED — a criterion failed" in decision.message
    assert decision.file == "results.json" and decision.fix
    data["criteria"][1]["status"] = "pass"                       # the criterion's row says pass as well
    assert [(p.code, p.path) for p in _inconsistent(data)] == [("results_inconsistent", "criteria[1].status"),
                                                               ("results_inconsistent", "decision")]
    b = tmp_path / "b"
    bundle = Bundle(b)
    bundle.write("results.json", json.dumps(data))
    bundle.write_manifest()
    r = CliRunner().invoke(main, ["accept", "report", str(b), "-o", str(tmp_path / "cert.pdf")])
    assert r.exit_code == 1 and "Traceback" not in r.output
    assert "[results_inconsistent]" in r.output and not (tmp_path / "cert.pdf").exists()
    r = CliRunner().invoke(main, ["accept", "report", str(b), "--format", "json"])
    assert r.exit_code == 1 and {p["code"] for p in json.loads(r.stdout)["problems"]} == {"results_inconsistent"}


def test_a_document_without_a_decision_is_not_checked_it_is_never_shown_as_one(documents):
    data = json.loads(documents["full"].read_text())
    del data["decision"]
    data["status"] = "warn"                        # an older release may have ordered statuses otherwise
    assert _inconsistent(data) == []


def test_a_criterion_dropped_or_emptied_from_a_document_is_refused(documents):
    data = json.loads(documents["full"].read_text())
    emptied = json.loads(json.dumps(data))
    emptied["criteria"][1]["verdicts"] = []
    assert ("results_inconsistent", "criteria[1].verdicts") in {(p.code, p.path) for p in _inconsistent(emptied)}
    dropped = json.loads(json.dumps(data))
    del dropped["criteria"][1]
    assert ("results_inconsistent", "scope.criteria") in {(p.code, p.path) for p in _inconsistent(dropped)}


def test_a_criterion_entry_is_built_by_keyword_with_its_statuses_as_enums():
    c = CriterionOutcome(id="a", check="storage.fio", expected="read_gbps >= 20 GB/s", status=Status.FAIL,
                         verdicts=(VerdictEntry(node="n1", status=Status.FAIL, measured=3.25),))
    doc = RunDocument(format=RUN_FORMAT, contract={"id": "k"}, run={}, status=Status.FAIL, counts={Status.FAIL: 1},
                      criteria=(c,), aggregate={"overall": {"status": "fail"}, "racks": (), "nodes": ()})
    assert doc.criteria[0].verdicts[0].status is Status.FAIL
    assert parse_run_document(json.loads(dumps(doc.to_json()))) == doc
    with pytest.raises(ValidationError):
        CriterionOutcome(id="a", check="x", expected="", status="great", verdicts=())


@pytest.mark.parametrize("name", ["full", "partial", "waived", "slurm"])
def test_the_fast_text_is_the_written_text(documents, name):
    """`RunDocument.dumps` writes what the bundle writer wrote (`json.dumps` of `to_json()`)."""
    path = documents[name]
    assert read_run_document(path).dumps().encode("utf-8") == path.read_bytes()


@pytest.mark.parametrize("value", [1e-05, 2.5e-07, 0.0001, 0.00012, 1e16, 9.999e15, 1.2345678901234568e17, -3e-9,
                                   5e-324, 1e300, 0.1, 123.456, 7.0, -0.0])
def test_floats_are_spelled_as_python_spells_them(documents, value):
    data = json.loads(documents["full"].read_bytes())
    data["criteria"][0]["verdicts"][0]["measured"] = value
    doc = parse_run_document(data)
    want = json.dumps(doc.to_json(), ensure_ascii=False, default=str, separators=(",", ":")) + "\n"
    assert doc.dumps() == want
@pytest.mark.parametrize(("field", "literal"), [("measured", "NaN"), ("measured", "1e999"), ("duration_s", "-Infinity"),
                                                ("details", '{"component": [1, {"x": NaN}]}'),
                                                ("thresholds", '{"min": Infinity}')])
def test_a_number_that_is_not_finite_is_refused(documents, field, literal):
    """NaN, Infinity and 1e999 are not JSON: the reader took them, and `accept report --format
    json` then wrote NaN and Infinity into its JSON."""
    doc = json.loads(documents["full"].read_text(encoding="utf-8"))
    where = doc["criteria"][0]["verdicts"][0] if field in ("measured", "details") else doc["criteria"][0]
    where[field] = "@@"
    bad = json.dumps(doc).replace('"@@"', literal, 1)
    with pytest.raises(InputError) as exc:
        read_run_document("results.json", bad.encode("utf-8"))
    problems = exc.value.problems
    assert [p.code for p in problems] == ["results_not_finite"], [p.to_json() for p in problems]
    assert problems[0].path.startswith("criteria[0].") and f".{field}" in problems[0].path, problems[0].path


def test_a_key_given_twice_is_refused(documents):
    """`"status": "fail", "status": "pass"`: the reader kept the last value silently, while
    another reader of the same signed bundle may keep the first."""
    doc = json.loads(documents["full"].read_text(encoding="utf-8"))
    text = json.dumps(doc).replace('"status": ', '"status": "fail", "status": ', 1)
    with pytest.raises(InputError) as exc:
        read_run_document("results.json", text.encode("utf-8"))
    assert [(p.code, p.value) for p in exc.value.problems] == [("results_duplicate_key", "status")]


def test_the_list_limits_are_those_of_the_records():
    """Every bounded list of the records is counted before parsing, with the same limit."""
    import types
    from typing import Union, get_args, get_origin

    from pydantic import BaseModel

    from acceptance.json_scan import ANY

    def bounded(model, prefix):
        for name, field in model.model_fields.items():
            for m in field.metadata:
                if getattr(m, "max_length", None) is not None:
                    yield (*prefix, name), m.max_length
            union = get_origin(field.annotation) in (Union, types.UnionType)
            for t in get_args(field.annotation) if union else (field.annotation,):
                if isinstance(t, type) and issubclass(t, BaseModel):
                    yield from bounded(t, (*prefix, name))
                if get_origin(t) is tuple and get_args(t) and isinstance(get_args(t)[0], type) \
                        and issubclass(get_args(t)[0], BaseModel):
                    yield from bounded(get_args(t)[0], (*prefix, name, ANY))

    assert dict(bounded(RunDocument, ())) == rd._list_limits()


def test_a_list_over_its_limit_is_refused_before_the_document_is_validated(documents, monkeypatch):
    """The counts are taken from the text: validation (seconds and gigabytes for a document of
    hundreds of MB) never starts, and the problem reads as pydantic's own."""
    data = json.loads(documents["full"].read_text())
    data["status"] = "great"                                      # a problem validation would find
    for i, c in enumerate(data["criteria"]):
        c["verdicts"] = c["verdicts"] * 4
    monkeypatch.setattr(rd, "MAX_VERDICTS", len(data["criteria"][1]["verdicts"]) - 1)
    monkeypatch.setattr(rd, "MAX_NODES", 1)

    def not_called(*args, **kwargs):
        raise AssertionError("validated a document over the limits")

    monkeypatch.setattr(RunDocument, "model_validate_json", not_called)
    problems = _problems(json.dumps(data, indent=1).encode("utf-8"))
    got = [(p.code, p.path, p.value) for p in problems]
    n = len(data["criteria"][1]["verdicts"])
    assert ("results_too_many", "criteria[1].verdicts", f"a list of {n}") in got
    assert ("results_too_many", "run.nodes", "a list of 4") in got
    assert ("results_too_many", "aggregate.nodes", "a list of 4") in got
    assert all(code == "results_too_many" for code, _, _ in got)
    verdicts = next(p for p in problems if p.path == "criteria[1].verdicts")
    assert verdicts.message == f"Tuple should have at most {n - 1} items after validation, not {n}"
    assert verdicts.file == "results.json" and verdicts.fix


def test_a_list_of_empty_places_is_malformed_json_not_a_long_list(documents):
    """`"criteria": [,,,…]` of 10,001 commas holds no 10,002 criteria: it is not JSON, and it
    is refused as such, with where the parser stopped, not as a list over its limit."""
    data = json.loads(documents["full"].read_text())
    data["criteria"] = []
    text = json.dumps(data, indent=1).replace('"criteria": []', '"criteria": [' + "," * (rd.MAX_CRITERIA + 1) + "]")
    line = text[:text.index('"criteria": [')].count("\n") + 1
    column = text.index('"criteria": [') - text.rindex("\n", 0, text.index('"criteria": [')) + len('"criteria": [')
    problems = _problems(text.encode("utf-8"))
    assert [(p.code, p.path, p.value) for p in problems] == [("results_invalid", None, None)]
    assert problems[0].message == f"not a readable JSON document: Invalid JSON: expected value at line {line} " \
                                  f"column {column}"
    text = text.replace("," * (rd.MAX_CRITERIA + 1), "{}," * rd.MAX_CRITERIA + "{},")     # a trailing comma
    problems = _problems(text.encode("utf-8"))
    assert [p.code for p in problems] == ["results_invalid"] and "trailing comma" in problems[0].message


def test_the_count_before_parsing_says_what_validation_says(documents):
    data = json.loads(documents["full"].read_text())
    entry = {"id": "c", "check": "x.y", "status": "pass", "expected": "", "verdicts": []}
    data["criteria"] = [entry] * (rd.MAX_CRITERIA + 1)
    text = json.dumps(data).encode("utf-8")
    with pytest.raises(ValidationError) as exc:
        RunDocument.model_validate_json(text, strict=True, context={"read": True})
    assert [p.to_json() for p in rd._problems(exc.value, "r.json")] == \
        [p.to_json() for p in rd._over_the_limits(text, "r.json")]


def test_a_document_within_the_limits_still_has_every_problem_reported(documents):
    data = json.loads(documents["full"].read_text())
    data["status"] = "great"
    data["criteria"][0]["evil"] = 1
    assert {p.code for p in _problems(json.dumps(data).encode("utf-8"))} == {"results_bad_value",
                                                                             "results_unknown_field"}


def test_a_byte_that_is_not_utf8_is_named_by_its_offset_in_any_chunk(monkeypatch):
    monkeypatch.setattr(rd, "_UTF8_CHUNK", 4)
    for data in ("{\"a\": \"é€\"}".encode("utf-8") + b"\xff",    # a stray byte after a character split by chunks
                 b"{\"a\": \"\xe2\x82\"}",                        # a character cut short
                 b"\xe2\x82"):                                     # ... at the end
        with pytest.raises(UnicodeDecodeError) as whole:
            data.decode("utf-8")
        (p,) = _problems(data)
        assert (p.code, p.message) == ("results_invalid", f"not UTF-8 text (byte {whole.value.start})")


def test_accept_report_refuses_a_document_over_a_limit_with_its_code(documents, tmp_path, monkeypatch):
    b = tmp_path / "b"
    data = json.loads(documents["full"].read_text())
    bundle = Bundle(b)
    bundle.write("results.json", json.dumps(data))
    bundle.write_manifest()
    monkeypatch.setattr(rd, "MAX_CRITERIA", len(data["criteria"]) - 1)
    r = CliRunner().invoke(main, ["accept", "report", str(b), "--format", "json"])
    assert r.exit_code == 1 and "Traceback" not in r.output
    n = len(data["criteria"])
    assert [(p["code"], p["path"], p["value"]) for p in json.loads(r.stdout)["problems"]] == [
        ("results_too_many", "criteria", f"a list of {n}"), ("results_too_many", "scope.criteria", f"a list of {n}")]
