"""ib_write_bw, ibstat / sysfs and Xid parsers on real outputs."""

from __future__ import annotations

import pytest

from acceptance.parsers import ParseError, parse_ib_write_bw, parse_ibstat, parse_xid
from acceptance.parsers.ib_write_bw import split_samples as split_ib
from acceptance.parsers.ibstat import split_samples as split_ibstat
from acceptance.parsers.xid import action_for, policy_table
from tests.parsers.conftest import read_realdata


def test_ib_bw_samples():
    write, read, send, yandex = (parse_ib_write_bw(s) for s in split_ib(read_realdata("ib_write_bw_samples.txt")))
    assert write.test == "RDMA_Write BW Test"
    assert (write.device, write.link_type, write.transport_type, write.connection_type) == ("mlx5_0", "IB", "IB", "RC")
    assert write.mtu_bytes == 4096 and write.qps == 1 and write.bidirectional is False
    assert write.bw_unit == "Gb/sec"
    assert write.bw_at(65536) == 392.34 and write.bw_peak_gbps == 392.38
    assert write.rows[0].iterations == 5000 and write.rows[0].msg_rate_mpps == 0.748336
    assert read.test == "RDMA_Read BW Test" and read.bw_avg_gbps == 328.61
    # MiB/sec converted: 46557.03 MiB/s * 2^20 * 8 / 1e9
    assert send.bw_unit == "MiB/sec"
    assert send.bw_avg_gbps == pytest.approx(390.5487, abs=1e-3)
    assert yandex.device is None and yandex.bw_at(33554432) == 394.40


def test_ib_bw_bidirectional_and_failure():
    text = (
        "$ ib_write_bw -d mlx5_3 -i 1 -b --report_gbits peer\n"
        "                    RDMA_Write Bidirectional BW Test\n"
        " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
        " 65536      5000             780.10             779.95 		     1.487\n"
        "---------------------------------------------------------------------------------------\n"
    )
    rec = parse_ib_write_bw(text)
    assert rec.bidirectional is True and rec.device == "mlx5_3" and rec.port == 1 and rec.bw_at(65536) == 779.95
    failed = parse_ib_write_bw("Couldn't connect to 10.0.0.2:18515\n Unable to open file descriptor for socket connection")
    assert failed.error.startswith("Couldn't connect to 10.0.0.2") and failed.rows == ()
    with pytest.raises(ParseError):
        parse_ib_write_bw("mynode-411 | IB devices=mlx5_ib0, mlx5_ib4: Measured IB BW 390.98 Gbps\n")


def test_ibstat_dell_b300_ports_down():
    dell, roce, listing = (parse_ibstat(s) for s in split_ibstat(read_realdata("ibstat_samples.txt")))
    assert len(dell.cas) == 11 and len(dell.ports) == 11
    active = dell.active_ports()
    assert [p.ca for p in active] == ["mlx5_2", "mlx5_3", "mlx5_4", "mlx5_5"]
    assert all(p.rate_gbps == 100 and p.ca_type == "MT4129" for p in active)
    down = dell.port("mlx5_0", 1)
    assert (down.state, down.physical_state, down.rate_gbps, down.lid) == ("Down", "Disabled", 10, 65535)
    assert down.firmware == "40.46.5500" and down.port_guid == "0x7425540300353ded"
    assert roce.ports[0].link_layer == "Ethernet" and roce.ports[0].rate_gbps == 40
    assert listing.cas == tuple(f"mlx5_{i}" for i in range(8)) and listing.ports == ()


def test_sysfs_snapshot_h100():
    rec = parse_ibstat(read_realdata("ib_sysfs_snapshot_h100_gpud.txt"))
    assert rec.format == "sysfs"
    assert len(rec.ports) == 9
    p = rec.port("mlx5_0", 1)
    assert (p.state, p.physical_state, p.rate_gbps, p.width, p.speed) == ("Active", "LinkUp", 400, "4X", "NDR")
    assert p.ca_type == "MT4129" and p.firmware == "28.41.1000" and p.link_layer == "InfiniBand"
    assert p.counters["port_rcv_errors"] == 14
    assert p.counters["excessive_buffer_overrun_errors"] == 15
    assert p.counters["link_downed"] == 0 and p.counters["roce_adp_retrans"] == 3
    bond = rec.port("mlx5_bond_0", 1)
    assert bond.link_layer == "Ethernet" and bond.rate_gbps == 200 and bond.width == "2X"
    assert len(rec.active_ports()) == 9


def test_ibstat_garbage():
    with pytest.raises(ParseError):
        parse_ibstat("ibstat: command not found")


def test_xid_samples():
    rec = parse_xid(read_realdata("xid_kernel_log_samples.txt"))
    assert rec.counts == {13: 3, 31: 2, 48: 1, 63: 1, 64: 1, 79: 1, 94: 2, 109: 1, 119: 6, 145: 1, 149: 2}
    first = rec.events[0]
    assert (first.xid, first.pci, first.pid, first.process) == (119, "0000:9b:00", 2024380, "nvidia-smi")
    assert first.timestamp == "Sun Feb 23 16:24:18 2025" and first.action == "reset"
    nhc = next(e for e in rec.events if e.pci == "0002:00:00")
    assert nhc.host == "mynode-066" and nhc.uptime_s == 3606.832215
    row_remap = next(e for e in rec.events if e.xid == 63)
    # Xid catalog: 63 (GPU memory remapping event) -> IGNORE, so slakit only monitors it
    assert row_remap.pid == 1896 and row_remap.process is None and row_remap.action == "monitor"
    fell = next(e for e in rec.events if e.kind == "fell_off_bus")
    assert (fell.xid, fell.pci, fell.uptime_s, fell.action) == (79, "0000:b3:00.0", 1843.308145, "reboot")
    unknown_pid = next(e for e in rec.events if e.xid == 13)
    assert unknown_pid.pid is None and unknown_pid.process is None
    assert next(e for e in rec.events if e.xid == 145).action == "monitor"  # Nonfatal NVLink5
    assert next(e for e in rec.events if e.xid == 149).action == "reset"  # Fatal NVLink5
    # Xid catalog immediate actions: 64 RESET_GPU, 48 WORKFLOW_XID_48 (solo: RESET_GPU),
    # 94 RESTART_APP, 109 RESET_GPU, 79 RESTART_BM
    actions = {e.xid: e.action for e in rec.events}
    assert (actions[64], actions[48], actions[94], actions[109], actions[79]) == (
        "reset", "reset", "monitor", "reset", "reboot")
    assert rec.worst_action == "reboot"  # Xid 79; nothing in these samples calls for a drain


def test_xid_journalctl_and_unknown():
    log = (
        "Nov 30 06:55:49 gpu-node-17 kernel: NVRM: Xid (PCI:0000:18:00): 74, pid=771, name=python, NVLink: fatal error\n"
        "2026-11-30T06:56:02+0000 gpu-node-17 kernel: NVRM: Xid (PCI:0000:18:00): 999, something new\n"
        "-- No entries --\n"
    )
    rec = parse_xid(log)
    assert [(e.xid, e.host, e.timestamp, e.action) for e in rec.events] == [
        (74, "gpu-node-17", "Nov 30 06:55:49", "reset"),
        (999, "gpu-node-17", "2026-11-30T06:56:02+0000", "investigate"),
    ]
    assert parse_xid("[    0.000000] Linux version 6.8.0\n").events == ()
    with pytest.raises(ParseError):
        parse_xid("   \n")


def test_xid_policy_table_is_sourced():
    table = policy_table()
    assert {79, 48, 63, 64, 94, 95, 119} <= set(table)
    for row in table.values():
        assert row.action in {"drain", "reboot", "reset", "monitor", "investigate"}
        assert row.source.startswith("https://docs.nvidia.com/")
    assert action_for(154, "GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)") == "reboot"
    assert action_for(154, "GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)") == "reset"
    assert action_for(154, "GPU recovery action changed from 0x0 (None) to 0x4 (Drain and Reset)") == "drain"
    # the state it changed to counts, not the one it left
    assert action_for(154, "GPU recovery action changed from 0x2 (Node Reboot Required) to 0x0 (None)") == "monitor"
    assert action_for(154, "GPU recovery action changed from 0x2 (Node Reboot Required) to 0x1 (GPU Reset Required)") \
        == "reset"
    assert action_for(154, "GPU recovery action changed from 0x1 (GPU Reset Required) to 0x3 (Drain P2P)") == "drain"
    assert action_for(12345) == "investigate"
    catalog = "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html"
    assert all(row.source == catalog for row in table.values())
    immediate = {x: table[x].nvidia_immediate_action for x in (43, 45, 48, 61, 63, 74, 109, 145, 154)}
    assert immediate == {43: "IGNORE", 45: "WORKFLOW_XID_45", 48: "WORKFLOW_XID_48", 61: "CONTACT_SUPPORT",
                         63: "IGNORE", 74: "WORKFLOW_NVLINK_ERR", 109: "RESET_GPU",
                         145: "WORKFLOW_NVLINK5_ERR", 154: "XID_154"}
    # slakit action follows the immediate action: RESTART_APP/IGNORE -> monitor, RESET_GPU -> reset,
    # RESTART_BM -> reboot
    expected = {"RESTART_APP": "monitor", "IGNORE": "monitor", "RESET_GPU": "reset", "RESTART_BM": "reboot"}
    for row in table.values():
        if row.nvidia_immediate_action in expected:
            assert row.action == expected[row.nvidia_immediate_action], row.xid
