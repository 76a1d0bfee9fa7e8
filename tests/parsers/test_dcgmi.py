"""dcgmi diag parser on real DCGM 3/4 JSON and the DCGM 3.3.8 text table."""

from __future__ import annotations

import json

import pytest

from acceptance.parsers import ParseError, parse_dcgmi
from acceptance.parsers.dcgmi import split_samples
from tests.parsers.conftest import read_realdata


def _samples():
    return [parse_dcgmi(s) for s in split_samples(read_realdata("dcgmi_diag_json_samples.txt"))]


def test_dcgm4_fragment_from_issue_215():
    frag = _samples()[0]
    assert frag.format == "json_fragment"
    (test,) = frag.tests
    assert test.name == "diagnostic" and test.result == "pass"
    assert [g.gpu_ids for g in test.gpu_results] == [(i,) for i in range(8)]
    assert all(g.entity_group == "GPU" for g in test.gpu_results)
    assert "GPU 0 calculated at approximately 859.08 gigaflops during this test" in test.gpu_results[0].info
    assert frag.overall == "pass"


def test_dcgm3_per_gpu_json():
    rec = _samples()[1]
    assert rec.format == "json_v3" and rec.version == "1.7"
    assert rec.test("Fabric Manager").result == "pass"
    memory = rec.test("memory")
    assert memory.category == "Hardware"
    assert [g.result for g in memory.gpu_results] == ["skip", "pass", "pass", "pass"]
    assert memory.gpu_results[0].error_ids == (55,)
    assert memory.result == "pass"
    sm = rec.test("sm_stress")
    assert sm.result == "fail"
    assert [g.gpu_ids[0] for g in sm.gpu_results if g.result == "fail"] == [0, 2, 3]
    assert "Max stress level of 2128.7 did not exceed desired stress level of 3000.0 for GPU 0" in sm.warnings
    assert rec.test("targeted_power").result == "skip"
    assert rec.overall == "fail"


def test_gcm_compact_fixtures_pass_fail_warn():
    _, _, passed, failed, warned, nonfatal = _samples()
    assert passed.overall == "pass" and len(passed.tests) == 9
    assert failed.test("Persistence Mode").result == "fail"
    assert failed.test("Environment Variables").result == "warn"
    assert failed.overall == "fail"
    assert warned.overall == "warn"
    assert nonfatal.overall == "pass"


def test_dcgm4_document_with_runtime_error_and_metadata():
    doc = {
        "DCGM Diagnostic": {
            "test_categories": [{
                "category": "Deployment",
                "tests": [{
                    "name": "software",
                    "results": [{"entity_group": "GPU", "entity_group_id": 1, "entity_id": 0, "status": "Pass"},
                                {"entity_group": "GPU", "entity_group_id": 1, "entity_id": 1, "status": "Fail",
                                 "warnings": [{"warning": "Persistence mode for GPU 1 is disabled.",
                                               "error_id": 34, "error_category": 2, "error_severity": 1}]}],
                    "test_summary": {"status": "Fail"},
                }],
            }],
        },
        "metadata": {"version": "4.2.3", "Driver Version Detected": "570.124.06"},
    }
    rec = parse_dcgmi("$ dcgmi diag -r 1 -j\n" + json.dumps(doc) + "\n$ ")
    assert rec.format == "json_v4" and rec.version == "4.2.3" and rec.driver_version == "570.124.06"
    test = rec.test("Software")
    assert test.result == "fail" and test.gpu_results[1].error_ids == (34,)
    assert rec.overall == "fail"
    err = parse_dcgmi(json.dumps({"DCGM Diagnostic": {"runtime_error": "Unable to connect to host engine"}}))
    assert err.overall == "error" and err.runtime_error == "Unable to connect to host engine"


def test_text_table_fabric_manager_down():
    rec = parse_dcgmi(read_realdata("dcgmi_diag_r3_text_8xH100_FAIL_fabricmanager_nccl-tests-issue264.txt"))
    assert rec.format == "text"
    assert rec.version == "3.3.8" and rec.driver_version == "560.35.03"
    assert rec.overall == "fail"
    assert rec.test("GPU Memory").result == "fail" and rec.test("GPU Memory").category == "Hardware"
    assert rec.test("PCIe").result == "skip"
    assert rec.test("Memory Bandwidth").result == "skip" and rec.test("EUD Test").result == "skip"
    assert rec.test("Persistence Mode").result == "pass"
    assert rec.test("Persistence Mode").info[0].startswith("Persistence mode for GPU 0 is disabled. Enable persistence mode")
    warnings = rec.test("GPU Memory").warnings
    assert len(warnings) == 8
    assert "Unable to initialize CUDA library: 'system not yet initialized'" in warnings[0]
    assert [t.name for t in rec.tests][:3] == ["Denylist", "NVML Library", "CUDA Main Library"]


def test_text_table_per_gpu_results():
    text = (
        "+---------------------------+------------------------------------------------+\n"
        "| Diagnostic                | Result                                         |\n"
        "+===========================+================================================+\n"
        "+-----  Hardware  ----------+------------------------------------------------+\n"
        "| GPU Memory                | Pass - GPUs: 0, 1, 2                           |\n"
        "|                           | Fail - GPU: 3                                  |\n"
        "+---------------------------+------------------------------------------------+\n"
    )
    test = parse_dcgmi(text).test("GPU Memory")
    assert test.result == "fail"
    assert [(g.gpu_ids, g.result) for g in test.gpu_results] == [((0, 1, 2), "pass"), ((3,), "fail")]


def test_schema_text_is_not_a_result():
    with pytest.raises(ParseError):
        parse_dcgmi(read_realdata("dcgmi_diag_json_schema_dcgm4.txt"))
