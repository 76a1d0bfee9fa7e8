"""fio and iperf3 parsers: real outputs from ../shared/realdata and from runs on the development host."""

from __future__ import annotations

import pytest

from acceptance.parsers import ParseError, parse_fio, parse_iperf3
from acceptance.parsers.fio import size_to_bytes, split_samples
from tests.parsers.conftest import read_fixture, read_realdata


def test_fio_cbt_nvme_randwrite_json_then_normal():
    rec = parse_fio(read_realdata("fio_json_cbt_nvme_randwrite_fio3.42.txt"))
    assert rec.complete is True
    assert rec.fio_version == "fio-3.42-6-g219f"
    assert rec.write_bw_bytes == 13116864 and rec.write_iops == pytest.approx(3201.659668)
    assert rec.read_bw_bytes == 0
    assert rec.write_clat_p50_us == pytest.approx(2375.68)
    assert rec.write_clat_p99_us == pytest.approx(4751.36)
    assert rec.write_clat_p999_us == pytest.approx(6127.616)
    assert rec.read_clat_p99_us is None  # no reads were issued
    (job,) = rec.jobs
    # Global options flow into the job's effective options.
    assert (job.rw, job.bs, job.iodepth, job.numjobs, job.ioengine, job.direct) == ("randwrite", "4096B", 8, 1, "libaio", "1")
    assert job.name == "/dev/nvme8n6" and job.error == 0
    assert job.write.effective_bs_bytes == pytest.approx(4096, rel=0.01)
    assert rec.global_options["ramp_time"] == "10"


def test_fio_gotcha_excerpt_is_commented_and_cut_off():
    rec = parse_fio(read_realdata("fio_json_throughput_1M_numjobs8_gotcha_excerpt.txt"))
    assert rec.complete is False
    assert rec.fio_version == "fio-3.30"
    (job,) = rec.jobs
    assert (job.name, job.rw, job.bs, job.numjobs, job.iodepth, job.size, job.runtime) == (
        "write_throughput", "write", "1.0MB", 8, 64, "11GB", "10s")
    assert job.option("ioengine") == "posixaio" and job.direct == "1"
    # What was asked (1 MiB per I/O) versus what happened (about one byte per I/O).
    assert job.bs_bytes == 1048576
    assert job.write.effective_bs_bytes == pytest.approx(1.0, abs=0.01)
    assert rec.write_bw_bytes == 375197 and rec.write_iops == pytest.approx(375191.380862)
    assert rec.write_clat_p999_us == pytest.approx(32112.64)


def test_fio_local_seqwrite_two_jobs_sum():
    text = read_fixture("fio/fio_seqwrite_1M_numjobs2_json.txt")
    assert text.startswith("note:")  # fio's notes precede the JSON
    rec = parse_fio(text)
    assert rec.fio_version == "fio-3.33" and len(rec.jobs) == 2
    assert rec.write_bw_bytes == 456522884 + 427444993
    assert all(j.bs_bytes == 1048576 and j.write.effective_bs_bytes == 1048576 for j in rec.jobs)
    assert rec.errors == 0


def test_fio_local_jsonplus_and_json_normal():
    plus = parse_fio(read_fixture("fio/fio_randread_4k_jsonplus.txt"))
    assert plus.read_bw_bytes == 89649383 and plus.read_clat_p99_us == pytest.approx(87.552)
    assert plus.jobs[0].read.effective_bs_bytes == 4096
    mixed_text = read_fixture("fio/fio_randrw_16k_json_normal.txt")
    assert len(split_samples(mixed_text)) == 1
    mixed = parse_fio(mixed_text)
    assert mixed.read_iops == pytest.approx(13522.715926) and mixed.write_iops == pytest.approx(5790.813779)
    assert mixed.jobs[0].option("rwmixread") == "70"


def test_fio_job_error_and_garbage():
    rec = parse_fio('{"fio version": "fio-3.33", "jobs": [{"jobname": "x", "error": 5, "job options": {"rw": "read"}}]}')
    assert rec.errors == 5 and rec.jobs[0].read is None and rec.read_bw_bytes is None
    with pytest.raises(ParseError):
        parse_fio("fio: failed parsing bs=1X\n")


@pytest.mark.parametrize("text,expected", [("4k", 4096), ("1M", 1048576), ("4096B", 4096), ("1.0MB", 1048576),
                                            ("2g", 2 * 1024**3), ("4k,8k", None), ("", None)])
def test_fio_size_to_bytes(text, expected):
    assert size_to_bytes(text) == expected


def test_iperf3_tcp_loopback():
    rec = parse_iperf3(read_fixture("iperf3/iperf3_tcp_loopback_t2.json"))
    assert rec.protocol == "TCP" and rec.streams == 1 and rec.duration_s == 2 and rec.reverse is False
    assert rec.sender_bits_per_second == pytest.approx(31047962784.44659)
    assert rec.receiver_bits_per_second == pytest.approx(31047481130.268917)
    assert rec.retransmits == 32 and rec.error is None
    assert rec.version == "iperf 3.12" and rec.remote_host == "127.0.0.1"


def test_iperf3_parallel_reverse_and_udp():
    rev = parse_iperf3(read_fixture("iperf3/iperf3_tcp_loopback_t2_P2_reverse.json"))
    assert rev.streams == 2 and rev.reverse is True
    assert rev.receiver_bits_per_second == pytest.approx(26548858949.372574) and rev.retransmits == 40
    udp = parse_iperf3(read_fixture("iperf3/iperf3_udp_loopback_t2_100M.json"))
    assert udp.protocol == "UDP" and udp.retransmits is None
    assert udp.lost_packets == 0 and udp.lost_percent == 0
    assert udp.receiver_bits_per_second == pytest.approx(99996136.4558982)


def test_iperf3_error_document():
    rec = parse_iperf3(read_fixture("iperf3/iperf3_error_connection_refused.json"))
    assert rec.error == "unable to connect to server: Connection refused"
    assert rec.sender_bits_per_second is None and rec.receiver_bits_per_second is None
    with pytest.raises(ParseError):
        parse_iperf3("iperf3: error - unable to connect to server: Connection refused\n")
