"""Outputs of real clusters, class by class: current drivers' header, launcher prefixes,
DCGM 4 per-GPU rows, kernel-log time formats, glued topo cells, looping query output, status
lines and MIG devices. Each class on the shared real samples and on variants derived from them."""

from __future__ import annotations

import re

import pytest

from acceptance.parsers import (
    PARSE_CODES, ParseError, detect_tool, parse, parse_all, parse_dcgmi, parse_ibstat, parse_ib_write_bw,
    parse_nccl_tests, parse_nvidia_smi, parse_nvidia_smi_topo, parse_xid, resolve_tool,
)
from acceptance.parsers._prefix import detect_prefix, segments
from tests.parsers.conftest import read_realdata

KMD = "nvidia_smi_table_KMD_UMD_header_drv610_2gpu_club3090_report.txt"
H100_TABLE = "nvidia_smi_default_table_8xH100_nccl-tests-issue264.txt"
INFOROM = "nvidia_smi_table_drv470_P100_infoROM_corrupt_validator_log_nvidia-docs.txt"
LOOP = "nvidia_smi_query_gpu_csv_lms_loop_h200_vt_arc.txt"
DCGM4 = "dcgmi_diag_r2_text_dcgm4.4.2_1gpu_pass_dcgm-issue124.txt"
XID_ISO = "xid_dmesg_iso_48_63_94_peermem_gpud.txt"
IBPANIC = "ibstat_a100_azure_ibpanic_exit255_gpud.txt"
SKYPILOT = "ib_send_bw_report_gbits_ndr_skypilot_worker_prefix_nebius.txt"
TOPO = "nvidia_smi_topo_m_samples.txt"


# --------------------------------------------------------------------------- 1. driver >= 610 header

def test_kmd_umd_header_reads_both_versions():
    rec = parse_nvidia_smi(read_realdata(KMD))
    assert (rec.format, rec.gpu_count, rec.driver_version, rec.cuda_version) == ("table", 2, "610.43.02", "13.3")
    assert rec.version_labels == "KMD/CUDA UMD" and rec.nvidia_smi_version == "610.43.02"
    g0, g1 = rec.gpus
    assert (g0.name, g0.pci_bus_id, g0.memory_used_mib, g0.memory_total_mib) == (
        "NVIDIA GeForce RTX 3090", "00000000:17:00.0", 23074, 24576)
    assert (g0.power_draw_w, g0.power_limit_w, g0.temperature_c, g1.pci_bus_id) == (188, 350, 28, "00000000:65:00.0")


def _old_labels(text: str) -> str:
    return text.replace("KMD Version:", "Driver Version:").replace("CUDA UMD Version:", "CUDA Version:    ")


def _new_labels(text: str) -> str:
    return text.replace("Driver Version:", "KMD Version:").replace("CUDA Version:", "CUDA UMD Version:")


def test_both_header_forms_give_the_same_gpus():
    new = parse_nvidia_smi(read_realdata(KMD))
    old = parse_nvidia_smi(_old_labels(read_realdata(KMD)))
    assert old.gpus == new.gpus and old.driver_version == new.driver_version and old.cuda_version == new.cuda_version
    assert (old.version_labels, new.version_labels) == ("Driver/CUDA", "KMD/CUDA UMD")
    h100 = parse_nvidia_smi(read_realdata(H100_TABLE))
    h100_new = parse_nvidia_smi(_new_labels(read_realdata(H100_TABLE)))
    assert h100_new.gpus == h100.gpus and h100_new.gpu_count == 8
    assert (h100_new.driver_version, h100_new.cuda_version) == ("560.35.03", "12.6")


def test_new_labels_in_query_text_and_xml():
    q = read_realdata("nvidia_smi_q_text_h100_1gpu.txt")
    q_new = re.sub(r"^Driver Version(\s+):", r"KMD Version\1   :", q, flags=re.M)
    q_new = re.sub(r"^CUDA Version(\s+):", r"CUDA UMD Version\1:", q_new, flags=re.M)
    assert "Driver Version" not in q_new.split("GPU 0", 1)[0]
    rec = parse_nvidia_smi(q_new)
    assert (rec.driver_version, rec.cuda_version, rec.version_labels) == ("590.48.01", "13.1", "KMD/CUDA UMD")
    x = read_realdata("nvidia_smi_q_x_a100_sxm4_telegraf.xml.txt")
    x_new = x.replace("<driver_version>", "<kmd_version>").replace("</driver_version>", "</kmd_version>")
    x_new = x_new.replace("<cuda_version>", "<cuda_umd_version>").replace("</cuda_version>", "</cuda_umd_version>")
    a, b = parse_nvidia_smi(x), parse_nvidia_smi(x_new)
    assert (b.driver_version, b.cuda_version, b.version_labels) == (a.driver_version, a.cuda_version, "KMD/CUDA UMD")


# --------------------------------------------------------------------------- 2. launcher prefixes

def test_skypilot_worker_prefix_is_stripped_and_kept():
    rec = parse_ib_write_bw(read_realdata(SKYPILOT))
    assert rec.test == "Send BW Test" and rec.device == "mlx5_0" and rec.bw_unit == "Gb/sec"
    assert [(r.bytes, r.iterations, r.bw_peak_gbps, r.bw_avg_gbps) for r in rec.rows] == [(65536, 1000, 361.82, 361.67)]
    assert rec.bw_avg_gbps == 361.67 and rec.complete
    assert (rec.source.kind, rec.source.label, rec.source.rank, rec.source.host) == ("ray", "worker1", 1, "192.168.0.15")


@pytest.mark.parametrize("prefix,kind,host,rank", [
    ("(task, pid=7059) ", "ray", None, None),
    ("(worker1, rank=1, pid=33870, ip=192.168.0.15) ", "ray", "192.168.0.15", 1),
    ("gpu-node-07: ", "pdsh", "gpu-node-07", None),
    ("10.1.2.3: ", "pdsh", "10.1.2.3", None),
    ("0: ", "srun", None, 0),
    ("[1,3]<stdout>:", "mpirun", None, 3),
])
def test_every_prefix_names_its_source(prefix, kind, host, rank):
    text = "".join(prefix + ln + "\n" for ln in read_realdata(KMD).splitlines())
    rec = parse_nvidia_smi(text)
    assert rec.gpus == parse_nvidia_smi(read_realdata(KMD)).gpus
    assert (rec.source.kind, rec.source.host, rec.source.rank) == (kind, host, rank)


def test_two_pdsh_hosts_give_one_record_each():
    lines = read_realdata(KMD).splitlines()
    text = "".join(f"{h}: {ln}\n" for ln in lines for h in ("node-a", "node-b"))
    records = parse_all("gpu.inventory", text)
    assert [r.source.host for r in records] == ["node-a", "node-b"]
    assert records[0].gpus == records[1].gpus == parse_nvidia_smi(read_realdata(KMD)).gpus
    # parse() reads the first host's output
    assert parse_nvidia_smi(text).source.host == "node-a"


def test_srun_labelled_nccl_run_reads_rank_zero():
    text = read_realdata("nccl_all_reduce_perf_a100_2node_gcm_fixture.txt")
    plain = parse_nccl_tests(text)
    tagged = "".join(f"{0:>2}: {ln}\n" for ln in text.splitlines()) + " 1: NCCL INFO rank 1 done\n 1: bye\n"
    rec = parse_nccl_tests(tagged)
    assert rec.rows == plain.rows and rec.hosts == plain.hosts and rec.source.rank == 0


@pytest.mark.parametrize("text", [
    "| software | Pass |\n|   | GPU0: Pass |\nGPU0: Pass\nGPU1: Pass\nGPU0: Fail\nGPU1: Pass\n",
    "  NIC0: mlx5_0\n  NIC1: mlx5_1\nNIC0: mlx5_0\nNIC1: mlx5_1\nNIC0: x\nNIC1: y\n",
    "Timestamp: 1\nDriver: 2\nState: Active\nRate: 200\nStatus: ok\n",
    "MASTER_ADDR: 10.0.0.1\nMASTER_PORT: 29500\nWORLD_SIZE: 16\nNODE_RANK: 0\n",
    "2024-11-15T05:39:15,491363+00:00 NVRM: Xid (PCI:0000:19:00): 48, x\n2024-11-15T05:39:16,0+00:00 NVRM: y\n",
    "12:00:01 one\n12:00:02 two\n12:00:03 three\n",
    "kern  :warn  : [  1.0] a\nkern  :warn  : [  2.0] b\nkern  :err   : [  3.0] c\n",
])
def test_no_false_prefixes(text):
    assert detect_prefix(text.splitlines()) is None
    assert [s.source for s in segments(text)] == [None]


def test_indented_output_reads_the_same():
    text = read_realdata(INFOROM)  # the docs indent the whole capture by 8 spaces
    rec = parse_nvidia_smi(text)
    assert (rec.gpu_count, rec.driver_version, rec.cuda_version) == (1, "470.82.01", "11.4")
    g = rec.gpus[0]
    assert (g.name, g.pci_bus_id, g.persistence_mode, g.ecc_uncorrected_volatile) == (
        "Tesla P100-PCIE...", "00000000:0B:00.0", True, 0)
    assert (g.temperature_c, g.power_draw_w, g.power_limit_w, g.memory_total_mib) == (42, 29, 250, 16280)
    q = read_realdata("nvidia_smi_q_text_h100_1gpu.txt")
    indented = "".join("    " + ln + "\n" for ln in q.splitlines())
    assert parse_nvidia_smi(indented).gpus == parse_nvidia_smi(q).gpus


# --------------------------------------------------------------------------- 3. DCGM 4 per-GPU rows

def test_dcgm4_text_keeps_per_gpu_results():
    rec = parse_dcgmi(read_realdata(DCGM4))
    assert (rec.version, rec.driver_version, rec.overall) == ("4.4.2", "580.105.08", "pass")
    assert [(t.category, t.name, t.result) for t in rec.tests] == [
        ("Deployment", "software", "pass"), ("Hardware", "memory", "pass"), ("Integration", "pcie", "pass")]
    for t in rec.tests:
        assert [(g.gpu_ids, g.result, g.entity_group) for g in t.gpu_results] == [((0,), "pass", "GPU")]
        assert t.warnings == () and t.info == ()


def _row(name: str, result: str) -> str:
    """A row of the dcgmi text box: 27-wide name cell, result wrapped at 45 characters (as DCGM does)."""
    return f"| {name:<26}| {result:<45}  |\n"


def _dcgm4_failing() -> str:
    """The real DCGM 4 table grown to two GPUs, GPU1 failing memory with a wrapped warning."""
    text = read_realdata(DCGM4)
    out = []
    for ln in text.splitlines(keepends=True):
        out.append(ln)
        if "GPU0: Pass" in ln:
            out.append(ln.replace("GPU0", "GPU1"))
    text = "".join(out)
    memory = text.index("| memory")
    block_end = text.index("+-----  Integration")
    lines = text[memory:block_end].splitlines(keepends=True)
    assert lines[0] == _row("memory", "Pass")
    warning = "GPU 1 Error using CUDA API cudaMalloc: out of memory"
    block = (_row("memory", "Fail") + _row("Warning", warning[:45]) + _row("", warning[45:])
             + "".join(lines[1:]).replace("GPU1: Pass", "GPU1: Fail"))
    return text[:memory] + block + text[block_end:]


def test_dcgm4_failing_gpu_is_named_and_never_glued_into_the_warning():
    rec = parse_dcgmi(_dcgm4_failing())
    mem = rec.test("memory")
    assert rec.overall == "fail" and mem.result == "fail"
    assert [(g.gpu_ids, g.result) for g in mem.gpu_results] == [((0,), "pass"), ((1,), "fail")]
    assert mem.warnings == ("GPU 1 Error using CUDA API cudaMalloc: out of memory",)
    assert not any(re.search(r"GPU\d: (Pass|Fail)", w) for t in rec.tests for w in t.warnings)
    assert mem.gpu_results[1].warnings == mem.warnings  # the warning names GPU 1


def test_dcgm3_text_unchanged():
    rec = parse_dcgmi(read_realdata("dcgmi_diag_r2_text_dcgm3.3.3_8xA100_p4de_pass_awsome.txt"))
    assert rec.version == "3.3.3" and rec.overall == "pass" and len(rec.tests) == 11
    assert rec.test("PCIe").gpu_results[0].gpu_ids == () and rec.test("GPU Memory").result == "pass"


# --------------------------------------------------------------------------- 4. kernel-log formats

def _xid_lines() -> list[tuple[str, str]]:
    """(ISO time stamp, message) of the NVRM lines of the real dmesg --time-format iso log."""
    out = []
    for ln in read_realdata(XID_ISO).splitlines():
        m = re.match(r"^(\S+) (NVRM: .*)$", ln)
        if m:
            out.append((m.group(1), m.group(2)))
    return out


def test_dmesg_iso_events_keep_their_time():
    rec = parse_xid(read_realdata(XID_ISO))
    assert [e.xid for e in rec.events] == [48, 63, 94] + [94] * 8
    first = rec.events[0]
    assert first.timestamp == "2024-11-15T12:02:03,470068+00:00" and first.time_iso == "2024-11-15T12:02:03.470068+00:00"
    assert all(e.timestamp and e.time_iso and e.time_iso.startswith("2024-11-15T12:02:03") for e in rec.events)
    assert first.pci == "0000:19:00" and first.pid is None and first.process is None
    assert rec.events[3].pid == 1248209 and rec.events[3].process == "python3.10"


MONTHS = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()


def _fmt(iso: str, style: str) -> str:
    date, time = iso.split("T")
    y, mo, d = date.split("-")
    hms, frac = time[:8], time[9:15]
    mon = MONTHS[int(mo) - 1]
    return {
        "decode_iso": f"kern  :warn  : {iso} ",
        "decode_uptime": f"kern  :warn  : [{int(hms[:2]) * 3600 + int(hms[3:5]) * 60 + int(hms[6:]):>5}.{frac}] ",
        "short_iso": f"{date}T{hms}+0000 gpu-node-3 kernel: ",
        "short_iso_precise": f"{date}T{hms}.{frac}+00:00 gpu-node-3 kernel: ",
        "short_precise": f"{mon} {d} {hms}.{frac} gpu-node-3 kernel: ",
        "syslog": f"{mon} {int(d):>2} {hms} gpu-node-3 kernel: ",
        "syslog_year": f"{y} {mon} {int(d):>2} {hms} gpu-node-3 kernel: ",
        "ctime": f"[Fri {mon} {int(d):>2} {hms} {y}] ",
    }[style]


@pytest.mark.parametrize("style", ["decode_iso", "decode_uptime", "short_iso", "short_iso_precise", "short_precise",
                                   "syslog", "syslog_year", "ctime"])
def test_every_kernel_log_format_keeps_the_time(style):
    lines = _xid_lines()
    text = "".join(_fmt(iso, style) + msg + "\n" for iso, msg in lines)
    rec = parse_xid(text)
    assert [e.xid for e in rec.events] == [48, 63, 94] + [94] * 8
    for e, (iso, _) in zip(rec.events, lines):
        if style == "decode_uptime":
            assert e.uptime_s is not None and e.timestamp is None
        else:
            assert e.timestamp and e.timestamp in _fmt(iso, style)
        if style.startswith("short") or style.startswith("syslog"):
            assert e.host == "gpu-node-3"
        if style in ("decode_iso", "short_iso", "short_iso_precise"):
            assert e.time_iso and e.time_iso.startswith(iso[:19])
        else:
            assert e.time_iso is None  # local time without a zone: not turned into an instant


def test_xid_from_several_pdsh_hosts_keeps_each_host():
    lines = [msg for _, msg in _xid_lines()]
    text = "".join(f"{h}: [ 12.{i:03d}] {ln}\n" for i, ln in enumerate(lines) for h in ("n1", "n2"))
    rec = parse_xid(text)
    assert len(rec.events) == 2 * len(lines)
    assert {e.host for e in rec.events} == {"n1", "n2"} and all(e.uptime_s for e in rec.events)


# --------------------------------------------------------------------------- 5. glued topo cells

def _nic_matrix() -> str:
    text = read_realdata(TOPO)
    start = text.index("       GPU0    GPU1    GPU2    GPU3    GPU4    GPU5    GPU6    GPU7    NIC2")
    return text[start: text.index("NIC Legend", start)]


def test_glued_link_cells_are_split():
    plain = parse_nvidia_smi_topo(_nic_matrix())
    glued = re.sub(r"(PXB|PIX|NODE|SYS)\s+(?=(?:PXB|PIX|NODE|SYS|X)\b)", r"\1", _nic_matrix())
    assert "SYSSYS" in glued and "PXBNODE" in glued
    rec = parse_nvidia_smi_topo(glued)
    assert rec.matrix == plain.matrix and rec.cpu_affinity == plain.cpu_affinity and rec.nics == plain.nics
    assert rec.link("GPU0", "NIC2") == "PXB" and rec.link("GPU4", "NIC5") == "NODE"


def test_cells_that_do_not_line_up_are_refused():
    bad = _nic_matrix().replace("PXB     NODE    SYS     SYS     0-23", "PXB     NODE    SYS0-23", 1)
    with pytest.raises(ParseError) as exc:
        parse_nvidia_smi_topo(bad)
    problem = exc.value.problems[0]
    assert problem.code == "topo_matrix_misaligned" and "GPU0" in problem.message and problem.code in PARSE_CODES
    dropped = _nic_matrix().replace("NV18    PXB     NODE    SYS     SYS", "PXB     NODE    SYS     SYS", 1)
    with pytest.raises(ParseError):
        parse_nvidia_smi_topo(dropped)


# --------------------------------------------------------------------------- 6. looping query output

def test_looping_query_gives_samples_of_n_gpus():
    rec = parse_nvidia_smi(read_realdata(LOOP))
    assert rec.gpu_count == 2 and rec.sample_count == 7 and len(rec.samples) == 7
    assert [g.pci_bus_id for g in rec.gpus] == ["00000000:5D:00.0", "00000000:9B:00.0"]
    assert all([g.pci_bus_id for g in s] == [g.pci_bus_id for g in rec.gpus] for s in rec.samples)
    assert [g.temperature_c for g in rec.gpus] == [56, 60] and rec.gpus[0].utilization_gpu_pct == 6
    assert [g.temperature_c for g in rec.samples[-1]] == [56, 60] and rec.samples[1][0].memory_used_mib == 20755
    assert rec.timestamp == "2026/02/12 15:30:35.110"


def test_single_query_is_one_sample():
    rec = parse_nvidia_smi(read_realdata("nvidia_smi_query_gpu_csv_multi_sources.txt"))
    assert rec.sample_count == 1 and rec.samples == ()


# --------------------------------------------------------------------------- 7. status lines

def test_inforom_warning_is_surfaced():
    rec = parse_nvidia_smi(read_realdata(INFOROM))
    assert [(w.code, w.device) for w in rec.warnings] == [("inforom_corrupted", "0000:0B:00.0")]
    assert rec.errors == ()


def test_no_devices_is_a_record_with_zero_gpus():
    rec = parse_nvidia_smi("$ nvidia-smi\nNo devices were found\n")
    assert (rec.format, rec.gpu_count, rec.gpus) == ("status", 0, ())
    assert [e.code for e in rec.errors] == ["no_devices"]
    with pytest.raises(ParseError):
        parse_nvidia_smi("nothing here\n")


def test_err_fields_device_handle_and_fallen_off_the_bus():
    table = read_realdata(H100_TABLE)
    err = table.replace("| N/A   38C    P0             70W /  700W |", "| ERR!  ERR!   ERR!         ERR! / ERR!  |", 1)
    rec = parse_nvidia_smi(err)
    (e,) = rec.errors
    assert e.code == "field_error" and e.device == "00000000:19:00.0" and "temperature" in e.message
    assert rec.gpus[0].temperature_c is None and rec.gpus[1].temperature_c == parse_nvidia_smi(table).gpus[1].temperature_c
    lost = ("Unable to determine the device handle for GPU0000:3B:00.0: Unknown Error\n" + table)
    assert [(x.code, x.device) for x in parse_nvidia_smi(lost).errors] == [("device_handle_unavailable", "0000:3B:00.0")]
    bus = "Unable to determine the device handle for gpu 0000:9B:00.0: GPU has fallen off the bus.\n" + table
    assert [x.code for x in parse_nvidia_smi(bus).errors] == ["gpu_fell_off_bus"]


def test_ibpanic_marks_the_listing_incomplete():
    rec = parse_ibstat(read_realdata(IBPANIC))
    assert rec.cas == tuple(f"mlx5_{i}" for i in range(8)) and len(rec.active_ports()) == 8
    assert not rec.complete
    assert [(e.code, e.device) for e in rec.errors] == [("listing_incomplete", "mlx5_8")]
    assert parse_ibstat(read_realdata("ibstat_samples.txt")).complete


# --------------------------------------------------------------------------- 8. MIG devices

def test_mig_devices_from_xml():
    rec = parse_nvidia_smi(read_realdata("nvidia_smi_q_x_a100_sxm4_telegraf.xml.txt"))
    assert rec.gpus[0].mig_mode is True
    assert [(m.gpu, m.gpu_instance_id, m.compute_instance_id, m.mig_device) for m in rec.mig_devices][:3] == [
        (0, 3, 0, 0), (0, 4, 0, 1), (0, 5, 0, 2)]
    first = rec.mig_devices[0]
    assert (first.memory_total_mib, first.memory_used_mib, first.bar1_total_mib, first.sm_count) == (19968, 12, 32767, 14)


def test_mig_devices_from_the_table():
    # The 2-GPU table with the "MIG devices:" box nvidia-smi prints between the GPUs and the processes.
    table = read_realdata(KMD)
    box = (
        "+-----------------------------------------------------------------------------------------+\n"
        "| MIG devices:                                                                            |\n"
        "+------------------+----------------------------------+-----------+-----------------------+\n"
        "| GPU  GI  CI  MIG |                     Memory-Usage |        Vol|        Shared         |\n"
        "|      ID  ID  Dev |                       BAR1-Usage | SM     Unc| CE ENC  DEC  OFA  JPG |\n"
        "|                  |                                  |        ECC|                       |\n"
        "|==================+==================================+===========+=======================|\n"
        "|  0    1   0   0  |            4416MiB / 40192MiB    | 42      0 |  3   0    2    0    0 |\n"
        "|                  |                 2MiB / 32767MiB  |           |                       |\n"
        "+------------------+----------------------------------+-----------+-----------------------+\n"
        "|  0    2   0   1  |              13MiB / 19968MiB    | 28      0 |  2   0    1    0    0 |\n"
        "|                  |                 0MiB / 16383MiB  |           |                       |\n"
        "+------------------+----------------------------------+-----------+-----------------------+\n\n"
    )
    with_mig = table.replace("+-----------------------------------------------------------------------------------------+\n| Processes:", box + "+-----------------------------------------------------------------------------------------+\n| Processes:")
    assert "MIG devices" in with_mig
    rec = parse_nvidia_smi(with_mig)
    assert rec.gpu_count == 2
    assert [(m.gpu, m.gpu_instance_id, m.compute_instance_id, m.mig_device, m.memory_used_mib, m.memory_total_mib,
             m.bar1_total_mib, m.sm_count) for m in rec.mig_devices] == [
        (0, 1, 0, 0, 4416, 40192, 32767, 42), (0, 2, 0, 1, 13, 19968, 16383, 28)]
    assert parse_nvidia_smi(table).mig_devices == ()


# --------------------------------------------------------------------------- tool detection and names

@pytest.mark.parametrize("name,tool", [
    (KMD, "nvidia-smi"), (INFOROM, "nvidia-smi"), (LOOP, "nvidia-smi"), (DCGM4, "dcgmi"), (XID_ISO, "xid"),
    (IBPANIC, "ibstat"), (SKYPILOT, "ib_write_bw"), (TOPO, "nvidia-smi-topo"),
    ("nccl_all_reduce_perf_2node_16gpu_cx8_v2.18.3_mpirun_mca_warning.txt", "nccl-tests"),
    ("fio_json_fio3.20_gtod_reduce_2jobs_kubestr.txt", "fio"),
    ("ib_sysfs_snapshot_h100_gpud.txt", "ibstat"),
    ("dcgmi_diag_json_samples.txt", "dcgmi"),
])
def test_tool_is_detected(name, tool):
    assert detect_tool(read_realdata(name)) == tool


def test_check_names_and_old_names_resolve():
    assert resolve_tool("gpu.dcgm") == resolve_tool("dcgmi") == "dcgmi"
    assert resolve_tool("network.nccl") == resolve_tool("nccl-tests") == resolve_tool("nccl_tests") == "nccl-tests"
    assert resolve_tool("gpu.inventory") == "nvidia-smi" and resolve_tool("storage.fio") == "fio"
    assert resolve_tool("network.ib", read_realdata(SKYPILOT)) == "ib_write_bw"
    assert resolve_tool("network.ib", read_realdata(IBPANIC)) == "ibstat"
    assert parse("gpu.dcgm", read_realdata(DCGM4)).version == "4.4.2"
    with pytest.raises(ValueError):
        resolve_tool("gpu.nothing")


def test_fio_without_latency_samples_reports_no_latency():
    rec = parse("storage.fio", read_realdata("fio_json_fio3.20_gtod_reduce_2jobs_kubestr.txt"))
    assert rec.fio_version == "fio-3.20" and [j.name for j in rec.jobs] == ["read_iops", "write_iops"]
    assert rec.read_iops == pytest.approx(982.05078) and rec.jobs[0].read.total_ios == 15046
    # gtod_reduce=1: fio recorded no latency ("N": 0); a mean of 0 us would be a made-up value
    assert rec.jobs[0].read.clat_mean_us is None and rec.jobs[0].read.lat_mean_us is None
    assert rec.read_clat_p99_us is None


def test_mig_devices_from_query_text():
    # The -q text of the real A100 XML capture's first two MIG devices, in nvidia-smi's -q layout.
    q = read_realdata("nvidia_smi_q_text_h100_1gpu.txt")
    mig = "".join(
        "        MIG Device\n"
        f"            Index                             : {i}\n"
        f"            GPU Instance ID                   : {gi}\n"
        "            Compute Instance ID               : 0\n"
        "            Device Attributes\n"
        "                Shared\n"
        "                    Multiprocessor count      : 14\n"
        "            ECC Errors\n"
        "                Volatile\n"
        "                    SRAM Uncorrectable        : 0\n"
        "            FB Memory Usage\n"
        "                Total                         : 19968 MiB\n"
        "                Reserved                      : 0 MiB\n"
        f"                Used                          : {used} MiB\n"
        "                Free                          : 19955 MiB\n"
        "            BAR1 Memory Usage\n"
        "                Total                         : 32767 MiB\n"
        "                Used                          : 0 MiB\n"
        "                Free                          : 32767 MiB\n"
        for i, gi, used in ((0, 3, 12), (1, 4, 13)))
    pos = q.index("    MIG Mode\n")
    with_mig = q[:pos] + "    MIG Devices\n" + mig + q[pos:]
    rec = parse_nvidia_smi(with_mig)
    plain = parse_nvidia_smi(q)
    assert rec.gpus == plain.gpus and plain.mig_devices == ()
    assert [(m.gpu, m.gpu_instance_id, m.compute_instance_id, m.mig_device, m.memory_used_mib, m.memory_total_mib,
             m.bar1_total_mib, m.sm_count, m.ecc_uncorrected) for m in rec.mig_devices] == [
        (0, 3, 0, 0, 12, 19968, 32767, 14, 0), (0, 4, 0, 1, 13, 19968, 32767, 14, 0)]


def test_journalctl_full_unix_and_dmesg_reltime_keep_the_time():
    lines = _xid_lines()[:3]
    full = "".join(f"Fri {iso[:10]} {iso[11:19]} UTC gpu-node-3 kernel: {msg}\n" for iso, msg in lines)
    rec = parse_xid(full)
    assert [e.time_iso for e in rec.events] == ["2024-11-15T12:02:03+00:00"] * 3 and rec.events[0].host == "gpu-node-3"
    unix = "".join(f"1731672123.{470068 + i} gpu-node-3 kernel: {msg}\n" for i, (_, msg) in enumerate(lines))
    assert parse_xid(unix).events[0].time_iso == "2024-11-15T12:02:03.470068+00:00"
    rel = "".join(f"[Nov15 12:02] {msg}\n" for _, msg in lines)
    assert [e.timestamp for e in parse_xid(rel).events] == ["Nov15 12:02"] * 3


def test_ibpanic_before_any_ca_is_an_empty_incomplete_listing():
    rec = parse_ibstat("ibwarn: [1400444] umad_init: can't read ABI version\n"
                       "ibpanic: [1400444] main: can't init UMAD library: No such file or directory\n")
    assert (rec.cas, rec.ports, rec.complete) == ((), (), False)
    assert [e.code for e in rec.errors] == ["listing_incomplete"]


def test_looping_query_that_repeats_its_header():
    lines = read_realdata(LOOP).splitlines()
    header = lines[2]
    looped = lines[:3]
    for i, ln in enumerate(lines[3:]):
        if i and i % 2 == 0:
            looped.append(header)
        looped.append(ln)
    rec = parse_nvidia_smi("\n".join(looped) + "\n")
    assert rec.gpu_count == 2 and rec.sample_count == 7 and all(g.name == "NVIDIA H200" for g in rec.gpus)
    assert rec.samples == parse_nvidia_smi(read_realdata(LOOP)).samples
