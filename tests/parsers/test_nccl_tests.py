"""nccl-tests parser on real all_reduce_perf outputs (plain, srun-labelled, mpirun-tagged, failed)."""

from __future__ import annotations

import pytest

from acceptance.parsers import ParseError, parse_nccl_tests
from acceptance.parsers.nccl_tests import split_samples
from tests.parsers.conftest import read_realdata

GIB = 1 << 30


def test_a100_single_node():
    rec = parse_nccl_tests(read_realdata("nccl_all_reduce_perf_a100_1node_gcm_fixture.txt"))
    assert rec.collective == "all_reduce_perf"
    assert rec.nccl_version == "2.16.2+cuda11.6"
    assert (rec.ranks, rec.nodes) == (8, 1)
    assert [r.size_bytes for r in rec.rows] == [32 << 20, 64 << 20, 128 << 20, 256 << 20, 512 << 20, GIB]
    assert rec.busbw_at(GIB) == 231.72
    assert rec.row_at(GIB).ip_busbw_gbps == 231.70
    assert rec.busbw_at(GIB + 1) is None  # exact sizes only, no interpolation
    assert rec.avg_busbw_gbps == 210.99 and rec.peak_busbw_gbps == 231.72
    assert rec.wrong_total == 0 and rec.out_of_bounds == 0 and rec.error is None


def test_a100_two_nodes_counts_hosts():
    rec = parse_nccl_tests(read_realdata("nccl_all_reduce_perf_a100_2node_gcm_fixture.txt"))
    assert (rec.ranks, rec.nodes) == (16, 2)
    assert rec.hosts == ("{host1}", "{host2}")
    assert rec.busbw_at(GIB) == 182.80
    assert rec.rows[-1].oop_time_us == 11013
    assert rec.avg_busbw_gbps == 150.209


def test_h100_issue290_three_runs_with_srun_labels():
    text = read_realdata("nccl_all_reduce_perf_h100_1node_and_2node_ib_nccl-tests-issue290.txt")
    single, two, ring = (parse_nccl_tests(s) for s in split_samples(text))
    assert (single.ranks, single.nodes) == (8, 1)
    assert single.busbw_at(4 * GIB) == 473.60
    assert single.row_at(4 * GIB).ip_busbw_gbps == 476.53
    assert (two.ranks, two.nodes, two.hosts) == (16, 2, ("node005", "node007"))
    assert len(two.rows) == 11
    assert two.busbw_at(8 * GIB) == 155.57
    assert two.rows[0].wrong is None  # "#wrong" is N/A when validation is off
    assert two.wrong_total is None
    assert ring.busbw_at(8 * GIB) == 89.90 and ring.avg_busbw_gbps == 85.5294


def test_p5_mpirun_tagged_lines():
    rec = parse_nccl_tests(read_realdata("nccl_all_reduce_perf_h100_p5_awsbatch.txt"))
    assert len(rec.rows) == 32
    assert rec.rows[0].size_bytes == 8
    assert rec.busbw_at(16 * GIB) == 483.05
    assert rec.peak_busbw_gbps == 483.05
    # The average includes the 8-byte rows; it is far below the fixed-size figure.
    assert rec.avg_busbw_gbps == 156.742
    assert rec.ranks is None  # no "Using devices" list in this paste
    assert rec.collective == "all_reduce_perf"  # inferred from count x type size == size


def test_efa_excerpts_elided_and_regressions():
    text = read_realdata("nccl_all_reduce_perf_h100_h200_multinode_efa_excerpts.txt")
    p5, p5en, bare, vm = (parse_nccl_tests(s) for s in split_samples(text))
    assert p5.elided is True and p5.busbw_at(2 * GIB) == 437.79 and p5.busbw_at(0) == 0.0
    assert p5en.busbw_at(16 * GIB) == 369.86
    assert bare.busbw_at(9663676416) == 320.36
    assert vm.busbw_at(9663676416) == 184.30
    assert vm.wrong_total == 0


def test_mpirun_not_enough_slots_is_a_failed_run():
    rec = parse_nccl_tests(read_realdata("nccl_mpirun_failure_not_enough_slots_gcm_fixture.txt"))
    assert rec.error == "mpirun: not enough slots available"
    assert rec.rows == () and rec.busbw_at(GIB) is None


def test_cuda_init_failure_is_a_failed_run():
    rec = parse_nccl_tests(read_realdata("nvidia_smi_default_table_8xH100_nccl-tests-issue264.txt"))
    assert rec.error == "CUDA failure: system not yet initialized"
    assert rec.rows == ()


def test_wrong_count_is_summed():
    text = (
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
        "    33554432       8388608     float     sum      -1    344.8   97.32  170.31      3    349.5   95.99  167.99      1\n"
    )
    rec = parse_nccl_tests(text)
    assert rec.rows[0].wrong == 4 and rec.wrong_total == 4


def test_text_without_table_or_failure_is_unparseable():
    with pytest.raises(ParseError):
        parse_nccl_tests("hello\nworld\n")


def test_collective_named_before_each_run_stays_with_it():
    table = (
        "# nThread 1 nGpus 8 minBytes 1048576 maxBytes 1048576 step: 2(factor) warmup iters: 5 iters: 20\n"
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
        "     1048576        {count}     float    {op}      -1    30.00   34.95   {bw}      0    30.00   34.95   {bw}      0\n"
        "# Avg bus bandwidth    : {bw}\n"
    )
    text = (
        "$ ./build/all_gather_perf -b 1M -e 1M -g 8\n# Collective test starting: all_gather_perf\n"
        + table.format(count=32768, op="none", bw="30.58")
        + "\n# Collective test starting: reduce_scatter_perf\n"
        + table.format(count=32768, op="sum", bw="30.11")
    )
    first, second = (parse_nccl_tests(s) for s in split_samples(text))
    assert (first.collective, first.busbw_at(1048576)) == ("all_gather_perf", 30.58)
    assert (second.collective, second.busbw_at(1048576)) == ("reduce_scatter_perf", 30.11)
