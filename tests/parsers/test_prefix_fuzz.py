"""Fuzz every parser with launcher prefixes, indentation and truncation of real outputs.

The property: the same values as the plain output, or a refusal with a clear code, and never a
silently different value. Prefixes and indentation must give exactly the plain record (its
`source` aside); a cut output gives a record whose every value is the plain one, missing
(None, fewer list items), or a prefix of the plain text, except the aggregates a shorter
output legitimately changes (counts, sums, maxima, completeness flags).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acceptance.parsers import PARSE_CODES, ParseError, parse, parse_all
from tests.parsers.conftest import REALDATA

# (parser, real sample): at least one per parser and format variant.
SAMPLES = [
    ("nvidia-smi", "nvidia_smi_default_table_8xH100_nccl-tests-issue264.txt"),
    ("nvidia-smi", "nvidia_smi_table_KMD_UMD_header_drv610_2gpu_club3090_report.txt"),
    ("nvidia-smi", "nvidia_smi_table_drv470_P100_infoROM_corrupt_validator_log_nvidia-docs.txt"),
    ("nvidia-smi", "nvidia_smi_q_text_h100_1gpu.txt"),
    ("nvidia-smi", "nvidia_smi_q_x_a100_sxm4_telegraf.xml.txt"),
    ("nvidia-smi", "nvidia_smi_query_gpu_csv_h100_1gpu.txt"),
    ("nvidia-smi", "nvidia_smi_query_gpu_csv_lms_loop_h200_vt_arc.txt"),
    ("nvidia-smi-topo", "nvidia_smi_topo_m_samples.txt"),
    ("dcgmi", "dcgmi_diag_r3_text_8xH100_FAIL_fabricmanager_nccl-tests-issue264.txt"),
    ("dcgmi", "dcgmi_diag_r2_text_dcgm4.4.2_1gpu_pass_dcgm-issue124.txt"),
    ("dcgmi", "dcgmi_diag_json_samples.txt"),
    ("nccl-tests", "nccl_all_reduce_perf_2node_16gpu_cx8_v2.18.3_mpirun_mca_warning.txt"),
    ("nccl-tests", "nccl_all_reduce_perf_a100_2node_gcm_fixture.txt"),
    ("nccl-tests", "nccl_mpirun_failure_not_enough_slots_gcm_fixture.txt"),
    ("ib_write_bw", "ib_write_bw_samples.txt"),
    ("ib_write_bw", "ib_send_bw_report_gbits_ndr_skypilot_worker_prefix_nebius.txt"),
    ("ibstat", "ibstat_a100_azure_ibpanic_exit255_gpud.txt"),
    ("ibstat", "ib_sysfs_snapshot_h100_gpud.txt"),
    ("xid", "xid_kernel_log_samples.txt"),
    ("xid", "xid_dmesg_iso_48_63_94_peermem_gpud.txt"),
    ("fio", "fio_json_cbt_nvme_randwrite_fio3.42.txt"),
    ("fio", "fio_json_fio3.20_gtod_reduce_2jobs_kubestr.txt"),
]

# (prefix put before every line, kind, host, rank) as the launchers print them.
PREFIXES = [
    ("(task, pid=7059) ", "ray", None, None),
    ("(worker1, rank=1, pid=33870, ip=192.168.0.15) ", "ray", "192.168.0.15", 1),
    ("(head, rank=0, pid=2210, ip=10.0.4.7) ", "ray", "10.0.4.7", 0),
    ("gpu-node-07: ", "pdsh", "gpu-node-07", None),
    ("10.1.2.3: ", "pdsh", "10.1.2.3", None),
    ("0: ", "srun", None, 0),
    ("  7: ", "srun", None, 7),
    ("[1,0]<stdout>:", "mpirun", None, 0),
    ("[1,12]<stderr>:", "mpirun", None, 12),
]
INDENTS = ["  ", "    ", "        ", "\t"]

# Values a shorter output legitimately changes.
AGGREGATES = {
    "gpu_count", "lines_scanned", "counts", "xids", "worst_action", "peak_busbw_gbps", "avg_busbw_gbps",
    "wrong_total", "elided", "complete", "ranks", "nodes", "hosts", "gpu_models", "overall", "sample_count",
    "samples", "bw_avg_gbps", "bw_peak_gbps", "read_bw_bytes", "write_bw_bytes", "read_iops", "write_iops",
    "read_clat_p50_us", "read_clat_p99_us", "read_clat_p999_us", "write_clat_p50_us", "write_clat_p99_us",
    "write_clat_p999_us", "result", "collective",
    "errors",  # fio: a sum over jobs; elsewhere the notices a cut listing adds (a port without its state)
}


def _text(name: str) -> str:
    path = REALDATA / name
    if not path.is_file():
        pytest.skip(f"real tool output {name} not available: {REALDATA} is absent")
    return path.read_text(encoding="utf-8")


def _norm(doc):
    """The record without what prefixes change: its source and input line numbers."""
    if isinstance(doc, dict):
        return {k: _norm(v) for k, v in doc.items() if k not in {"source", "line", "lines_scanned"}}
    if isinstance(doc, list):
        return [_norm(v) for v in doc]
    return doc


def _prefixed(text: str, prefix: str) -> str:
    return "".join(prefix + ln + "\n" for ln in text.split("\n")[:-1]) if text.endswith("\n") else \
        "".join(prefix + ln + "\n" for ln in text.split("\n"))


def _plain(tool: str, name: str) -> dict:
    return parse(tool, _text(name)).to_json()


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sample=st.sampled_from(SAMPLES), style=st.sampled_from(PREFIXES + [(i, "indent", None, None) for i in INDENTS]),
       crlf=st.booleans(), indent_too=st.sampled_from(["", "  ", "\t"]), trim=st.booleans())
def test_prefixes_and_indentation_give_the_same_values(sample, style, crlf, indent_too, trim):
    tool, name = sample
    prefix, kind, host, rank = style
    if kind == "indent":
        indent_too = ""
    text = _prefixed(_text(name), indent_too + prefix)  # a docs page indents the launcher's lines
    if trim:  # log collectors trim trailing blanks: an empty line keeps only "node-01:"
        text = "".join(ln.rstrip() + "\n" for ln in text.splitlines())
    if crlf:
        text = text.replace("\n", "\r\n")
    rec = parse(tool, text).to_json()
    plain = _plain(tool, name)
    if tool == "xid" and host:  # events without a host of their own take the prefix's host
        plain = {**plain, "events": [{**e, "host": e["host"] or host} for e in plain["events"]]}
    assert _norm(rec) == _norm(plain)
    if kind == "indent":
        assert rec.get("source") == plain.get("source")
        return
    assert rec["source"] is not None
    inner = plain.get("source") or {}  # a sample captured through a launcher already: the prefixes nest
    want = (kind, host or inner.get("host"), rank if rank is not None else inner.get("rank"))
    assert (rec["source"]["kind"], rec["source"]["host"], rec["source"]["rank"]) == want


@pytest.mark.parametrize("tool,name", SAMPLES)
@pytest.mark.parametrize("prefix", [p for p in PREFIXES if p[1] in ("pdsh", "ray")][:3])
def test_two_interleaved_sources_give_a_record_each(tool, name, prefix):
    text = _text(name)
    lines = text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")
    a, b = prefix[0], prefix[0].replace("1", "2").replace("gpu-node-07", "gpu-node-08").replace("task", "task2")
    if a == b:
        b = "(other, pid=1) "
    mixed = "".join(f"{a}{ln}\n{b}{ln}\n" for ln in lines)
    plain = [_norm(r.to_json()) for r in parse_all(tool, text)]
    records = parse_all(tool, mixed)
    if tool == "xid":  # one log of every host's events
        assert len(records) == 2 and all(_norm(r.to_json()) == plain[0] for r in records)
        return
    assert [_norm(r.to_json()) for r in records] == plain + plain
    assert len({(r.source.label, r.source.host) for r in records}) == 2


def _mismatches(part, full, path="") -> list[str]:
    """Where `part` (parsed from a cut output) says something `full` does not."""
    if part is None:
        return []
    if isinstance(part, dict) and isinstance(full, dict):
        out = []
        for k, v in part.items():
            if k in AGGREGATES or k in {"source", "line"}:
                continue
            if k == "error" and full.get(k) is None:
                continue  # the cut output says it failed: a clear signal, not a wrong value
            if k not in full:
                out.append(f"{path}.{k}: not in the full record")
                continue
            out += _mismatches(v, full[k], f"{path}.{k}")
        return out
    if isinstance(part, list) and isinstance(full, list):
        if len(part) > len(full):
            return [f"{path}: {len(part)} items, the full output has {len(full)}"]
        out = []
        for i, (p, f) in enumerate(zip(part, full)):
            last = i == len(part) - 1
            if last and isinstance(p, str) and f.startswith(p):
                continue
            out += _mismatches(p, f, f"{path}[{i}]")
        return out
    if isinstance(part, str) and isinstance(full, str) and full.startswith(part):
        return []
    if part == full:
        return []
    return [f"{path}: {part!r} where the full output has {full!r}"]


def _last_xid_event_is_cut(part: dict) -> dict:
    """The last Xid line of a cut log is read (a missed Xid would claim a clean log); only its
    number, PCI address and time are compared, its message may be cut anywhere."""
    if part.get("tool") == "xid" and part["events"]:
        last = dict(part["events"][-1])
        for k in ("pid", "process", "message", "action", "kind"):
            last[k] = None
        part = {**part, "events": part["events"][:-1] + [last]}
    return part


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sample=st.sampled_from(SAMPLES), data=st.data(), prefix=st.sampled_from(["", PREFIXES[1][0], "    "]))
def test_truncation_gives_the_same_values_or_a_clear_code(sample, data, prefix):
    tool, name = sample
    text = _prefixed(_text(name), prefix) if prefix else _text(name)
    full = parse(tool, text).to_json()
    cut = data.draw(st.integers(min_value=0, max_value=len(text)))
    try:
        part = parse(tool, text[:cut]).to_json()
    except ParseError as exc:
        assert exc.problems[0].code in PARSE_CODES and exc.problems[0].message
        return
    problems = _mismatches(_last_xid_event_is_cut(part), full)
    assert not problems, f"cut at {cut}: {problems[:5]}"
