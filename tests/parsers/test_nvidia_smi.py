"""nvidia-smi parser on real captures: query CSV, -q text, -q -x XML, the default table, topo -m."""

from __future__ import annotations

import pytest

from acceptance.parsers import ParseError, parse_nvidia_smi, parse_nvidia_smi_topo
from acceptance.parsers.nvidia_smi import split_samples, split_topo_samples
from tests.parsers.conftest import read_realdata


def test_query_csv_full_h100_idle_and_load():
    text = read_realdata("nvidia_smi_query_gpu_csv_h100_1gpu.txt")
    samples = split_samples(text)
    assert len(samples) == 2  # idle and load query-gpu blocks; retired-pages blocks are not GPU rows
    idle, load = (parse_nvidia_smi(s) for s in samples)
    assert idle.format == "csv" and idle.gpu_count == 1 and idle.attached_gpus == 1
    assert idle.driver_version == "590.48.01"
    g = idle.gpus[0]
    assert g.name == "NVIDIA H100 80GB HBM3"
    assert g.pci_bus_id == "00000000:00:09.0"
    assert g.memory_total_mib == 81559
    assert g.ecc_mode is True and g.persistence_mode is True
    assert g.ecc_uncorrected_volatile == 0 and g.ecc_corrected_aggregate == 0
    assert g.retired_pages_single_bit is None  # [N/A] on H100 (row remapping instead)
    assert g.remapped_rows_pending is False and g.remapped_rows_failure is False
    assert g.remapped_rows_uncorrectable == 0
    assert g.power_limit_w == 700.0 and g.power_draw_w == 69.85
    assert g.temperature_c == 41
    assert g.clocks_sm_mhz == 345 and g.clocks_max_sm_mhz == 1980 and g.clocks_mem_mhz == 2619
    assert g.pcie_link_gen == 5 and g.pcie_link_width == 16
    assert g.mig_mode is False and g.fabric_state == "Completed"
    lg = load.gpus[0]
    assert lg.memory_used_mib == 19818 and lg.utilization_gpu_pct == 100 and lg.clocks_sm_mhz == 1980
    # The whole file parses as its first block.
    assert parse_nvidia_smi(text).gpus[0].temperature_c == 41


def test_query_csv_multi_sources_blocks():
    text = read_realdata("nvidia_smi_query_gpu_csv_multi_sources.txt")
    h100, b300 = (parse_nvidia_smi(s) for s in split_samples(text))
    # "[...]" elision in the paste: only the two rows shown are GPUs we know of.
    assert [g.pci_bus_id for g in h100.gpus] == ["00000000:04:00.0", "00000000:8B:00.0"]
    assert h100.gpus[0].vbios_version == "96.00.89.00.01"
    # Dell XE9780: 7 of 8 B300 rows present -> gpu_count 7 is what an acceptance check sees.
    assert b300.gpu_count == 7
    assert b300.driver_version == "610.57.04"
    assert {g.name for g in b300.gpus} == {"NVIDIA B300 SXM6 AC"}


def test_query_csv_noheader_nounits_needs_field_names():
    text = "NVIDIA H100 80GB HBM3, 00000000:19:00.0, 81559, Enabled\nNVIDIA H100 80GB HBM3, 00000000:3B:00.0, 81559, Disabled\n"
    with pytest.raises(ParseError):
        parse_nvidia_smi(text)
    rec = parse_nvidia_smi(text, query_fields=["name", "pci.bus_id", "memory.total", "ecc.mode.current"])
    assert rec.gpu_count == 2
    assert rec.gpus[1].ecc_mode is False and rec.gpus[0].memory_total_mib == 81559


def test_query_csv_noheader_with_command_line_in_text():
    text = (
        "$ nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader,nounits\n"
        "0, NVIDIA H200, 570.124.06\n1, NVIDIA H200, 570.124.06\n"
    )
    rec = parse_nvidia_smi(text)
    assert rec.gpu_count == 2 and rec.driver_version == "570.124.06" and rec.gpus[1].index == 1


def test_q_text_h100():
    text = read_realdata("nvidia_smi_q_text_h100_1gpu.txt")
    samples = split_samples(text)
    assert len(samples) == 2
    rec = parse_nvidia_smi(samples[0])
    assert rec.format == "query"
    assert (rec.driver_version, rec.cuda_version, rec.attached_gpus, rec.gpu_count) == ("590.48.01", "13.1", 1, 1)
    g = rec.gpus[0]
    assert g.uuid == "GPU-00000000-0000-0000-0000-000000000000"
    assert g.pci_bus_id == "00000000:00:09.0"
    assert g.ecc_mode is True and g.ecc_uncorrected_aggregate == 0
    assert g.remapped_rows_pending is False and g.remapped_rows_failure is False
    assert g.power_limit_w == 700.0 and g.power_max_limit_w == 700.0
    assert g.clocks_max_graphics_mhz == 1980 and g.pcie_link_width == 16
    load = parse_nvidia_smi(samples[1]).gpus[0]
    assert load.temperature_c == 59 and load.memory_used_mib == 19818


def test_q_x_xml_a100_mig():
    text = read_realdata("nvidia_smi_q_x_a100_sxm4_telegraf.xml.txt")
    rec = parse_nvidia_smi(text)
    assert rec.format == "xml"
    assert rec.driver_version == "535.54.03" and rec.cuda_version == "12.2"
    assert rec.attached_gpus == 4 and rec.gpu_count == 1  # the capture keeps one <gpu> element
    g = rec.gpus[0]
    assert g.name == "NVIDIA A100-SXM4-80GB"
    assert g.uuid == "GPU-513536b6-7d19-9063-b049-1e69664bb298"
    assert g.memory_total_mib == 81920
    assert g.mig_mode is True and g.persistence_mode is False and g.ecc_mode is True
    assert g.ecc_uncorrected_volatile == 0
    assert g.remapped_rows_pending is None  # <remapped_rows>N/A</remapped_rows>
    assert g.power_limit_w == 500.0 and g.clocks_max_sm_mhz == 1410 and g.temperature_c == 27
    assert g.pcie_link_gen == 4 and g.pcie_link_width == 16


def test_xml_with_entities_is_refused():
    evil = (
        '<?xml version="1.0"?><!DOCTYPE nvidia_smi_log [<!ENTITY a "aaaaaaaaaa">]>'
        "<nvidia_smi_log><driver_version>&a;</driver_version></nvidia_smi_log>"
    )
    with pytest.raises(ParseError) as exc:
        parse_nvidia_smi(evil)
    assert exc.value.problems[0].code == "unparseable_output"


def test_default_table_8x_h100():
    text = read_realdata("nvidia_smi_default_table_8xH100_nccl-tests-issue264.txt")
    rec = parse_nvidia_smi(text)
    assert rec.format == "table"
    assert rec.gpu_count == 8
    assert (rec.driver_version, rec.cuda_version) == ("560.35.03", "12.6")
    assert [g.index for g in rec.gpus] == list(range(8))
    assert rec.gpus[7].pci_bus_id == "00000000:DB:00.0"
    assert all(g.persistence_mode is False for g in rec.gpus)
    assert rec.gpus[1].temperature_c == 35 and rec.gpus[1].power_draw_w == 73 and rec.gpus[1].power_limit_w == 700
    assert all(g.memory_total_mib == 81559 and g.ecc_uncorrected_volatile == 0 for g in rec.gpus)


@pytest.mark.parametrize("name,model,mem", [
    ("nvidia_smi_table_topo_nvlink_h100_1gpu.txt", "NVIDIA H100 80GB HBM3", 81559),
    ("nvidia_smi_table_topo_nvlink_h200_1gpu.txt", "NVIDIA H200", 143771),
])
def test_default_table_idle_and_load(name, model, mem):
    text = read_realdata(name)
    samples = split_samples(text)
    assert len(samples) == 2
    idle, load = (parse_nvidia_smi(s) for s in samples)
    assert idle.gpus[0].name == model and idle.gpus[0].memory_total_mib == mem
    assert idle.driver_version == "590.48.01" and idle.cuda_version == "13.1"
    assert idle.gpus[0].utilization_gpu_pct == 0 and load.gpus[0].utilization_gpu_pct == 100
    assert load.gpus[0].persistence_mode is True


def test_topo_matrix_samples():
    text = read_realdata("nvidia_smi_topo_m_samples.txt")
    samples = [parse_nvidia_smi_topo(s) for s in split_topo_samples(text)]
    assert len(samples) == 5
    h100 = samples[0]
    assert h100.gpus == tuple(f"GPU{i}" for i in range(8))
    assert h100.link("GPU0", "GPU7") == "NV18" and h100.link("GPU3", "GPU3") == "X"
    assert h100.cpu_affinity["GPU4"] == "52-103" and h100.numa_affinity["GPU4"] == "1"
    bare = samples[2]
    assert bare.nics == ("NIC2", "NIC3", "NIC4", "NIC5")
    assert bare.link("GPU1", "NIC2") == "PIX" and bare.nic_names["NIC5"] == "mlx5_5"
    vm = samples[3]
    assert vm.link("GPU0", "NIC3") == "PXB" and vm.cpu_affinity["GPU4"] == "24-47"
    b300 = samples[4]
    assert len(b300.gpus) == 7  # GPU7 missing on the Dell XE9780 bring-up


def test_topo_single_gpu_with_ansi_header():
    rec = parse_nvidia_smi_topo(read_realdata("nvidia_smi_table_topo_nvlink_h100_1gpu.txt"))
    assert rec.gpus == ("GPU0",) and rec.cpu_affinity["GPU0"] == "0-19"


def test_garbage_is_unparseable():
    with pytest.raises(ParseError) as exc:
        parse_nvidia_smi("bash: nvidia-smi: command not found\n")
    assert exc.value.problems[0].code == "unparseable_output"


# Format variants not covered by the real captures above; the snippets follow the element and
# column layout nvidia-smi prints (r535+ XML remapped_rows children, the r470-era table).

def test_xml_remapped_rows_children_and_split_sram_counters():
    xml = """<?xml version="1.0" ?>
<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">
<nvidia_smi_log>
  <driver_version>570.124.06</driver_version><cuda_version>12.8</cuda_version><attached_gpus>1</attached_gpus>
  <gpu id="00000000:18:00.0">
    <product_name>NVIDIA H100 80GB HBM3</product_name>
    <ecc_mode><current_ecc>Enabled</current_ecc><pending_ecc>Enabled</pending_ecc></ecc_mode>
    <ecc_errors>
      <volatile><sram_correctable>2</sram_correctable><sram_uncorrectable_parity>1</sram_uncorrectable_parity>
        <sram_uncorrectable_secded>0</sram_uncorrectable_secded><dram_correctable>5</dram_correctable>
        <dram_uncorrectable>3</dram_uncorrectable></volatile>
      <aggregate><sram_correctable>2</sram_correctable><sram_uncorrectable_parity>1</sram_uncorrectable_parity>
        <sram_uncorrectable_secded>0</sram_uncorrectable_secded><dram_correctable>5</dram_correctable>
        <dram_uncorrectable>3</dram_uncorrectable><sram_threshold_exceeded>No</sram_threshold_exceeded></aggregate>
    </ecc_errors>
    <remapped_rows><remapped_row_corr>0</remapped_row_corr><remapped_row_unc>2</remapped_row_unc>
      <remapped_row_pending>Yes</remapped_row_pending><remapped_row_failure>No</remapped_row_failure></remapped_rows>
  </gpu>
</nvidia_smi_log>"""
    g = parse_nvidia_smi(xml).gpus[0]
    assert g.pci_bus_id == "00000000:18:00.0"
    assert (g.ecc_corrected_volatile, g.ecc_uncorrected_volatile, g.ecc_uncorrected_aggregate) == (7, 4, 4)
    assert (g.remapped_rows_uncorrectable, g.remapped_rows_pending, g.remapped_rows_failure) == (2, True, False)


def test_r470_table_layout():
    table = """+-----------------------------------------------------------------------------+
| NVIDIA-SMI 470.82.01    Driver Version: 470.82.01    CUDA Version: 11.4     |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|                               |                      |               MIG M. |
|===============================+======================+======================|
|   0  NVIDIA A100-SXM...  On   | 00000000:07:00.0 Off |                    0 |
| N/A   30C    P0    60W / 400W |      0MiB / 81251MiB |      0%      Default |
|                               |                      |             Disabled |
+-------------------------------+----------------------+----------------------+
"""
    rec = parse_nvidia_smi(table)
    g = rec.gpus[0]
    assert rec.driver_version == "470.82.01" and rec.gpu_count == 1
    assert (g.name, g.persistence_mode, g.power_limit_w, g.memory_total_mib, g.mig_mode) == (
        "NVIDIA A100-SXM...", True, 400, 81251, False)
