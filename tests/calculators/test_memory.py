"""The memory settings `slakit` applies at start (calculators/memory.py), in fresh processes."""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
import sys

import pytest

# settings before numpy is imported, then again (once per process), then what numpy sees
CODE = """
import json, os
from calculators.memory import tune_memory
first = tune_memory()
import numpy
print(json.dumps([first, tune_memory(), os.environ.get("NUMPY_MADVISE_HUGEPAGE")]))
"""
LATE = """
import json, numpy
from calculators.memory import tune_memory
print(json.dumps(tune_memory()))
"""


def run(code: str, **env_values: str) -> object:
    env = {k: v for k, v in os.environ.items()
           if k not in ("SLAKIT_MEMORY_TUNING", "NUMPY_MADVISE_HUGEPAGE", "OPENBLAS_NUM_THREADS", "MIMALLOC_ALLOW_THP")}
    env.update(env_values)
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env)
    return json.loads(out.stdout)


linux_glibc = pytest.mark.skipif(not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
                                 reason="glibc's mallopt and numpy's huge-page switch are Linux-only")


@linux_glibc
def test_both_settings_take_once_before_numpy():
    first, again, numpy_env = run(CODE)
    assert first == {"malloc": True, "no_hugepages": True, "arrow_no_hugepages": True, "one_blas_thread": True} and again == first
    assert numpy_env == "0"


@linux_glibc
def test_numpy_already_imported_is_switched_through_its_own_setter():
    assert run(LATE) == {"malloc": True, "no_hugepages": True, "arrow_no_hugepages": True, "one_blas_thread": False}


@linux_glibc
def test_an_explicit_numpy_choice_is_kept():
    first, _, numpy_env = run(CODE, NUMPY_MADVISE_HUGEPAGE="1")
    assert first == {"malloc": True, "no_hugepages": False, "arrow_no_hugepages": True, "one_blas_thread": True}
    assert numpy_env == "1"


# what Arrow's allocator was told: mimalloc prints its options when verbose (pyarrow's default
# pool is mimalloc where it was built with it)
ARROW_POOL = """
from calculators.memory import tune_memory
tune_memory()
import pyarrow
print(pyarrow.default_memory_pool().backend_name)
"""


def arrow_thp_option(**env_values: str) -> str | None:
    env = {k: v for k, v in os.environ.items()
           if k not in ("SLAKIT_MEMORY_TUNING", "MIMALLOC_ALLOW_THP", "ARROW_DEFAULT_MEMORY_POOL")}
    env.update(env_values, MIMALLOC_VERBOSE="1")
    out = subprocess.run([sys.executable, "-c", ARROW_POOL], check=True, capture_output=True, text=True, env=env)
    if out.stdout.strip() != "mimalloc":
        pytest.skip(f"pyarrow's default pool here is {out.stdout.strip()}, not mimalloc")
    found = re.search(r"option 'allow_thp': (\d+)", out.stderr)
    return found.group(1) if found else None


@linux_glibc
def test_arrows_allocator_asks_for_no_huge_pages():
    if arrow_thp_option(SLAKIT_MEMORY_TUNING="off") is None:
        pytest.skip("this pyarrow's mimalloc has no allow_thp option")
    assert arrow_thp_option() == "0"
    assert arrow_thp_option(SLAKIT_MEMORY_TUNING="off") == "1"      # mimalloc's own default
    assert arrow_thp_option(MIMALLOC_ALLOW_THP="1") == "1"          # an explicit choice is kept


@linux_glibc
def test_pyarrow_already_imported_keeps_its_allocators_settings():
    first = run("import json, pyarrow\nfrom calculators.memory import tune_memory\nprint(json.dumps(tune_memory()))")
    assert first["arrow_no_hugepages"] is False


def test_can_be_turned_off():
    first, again, numpy_env = run(CODE, SLAKIT_MEMORY_TUNING="off")
    assert first == again == {"malloc": False, "no_hugepages": False, "arrow_no_hugepages": False,
                                   "one_blas_thread": False} and numpy_env is None


# 400 MB of 8 MiB arrays (under the mmap threshold the settings raise: kept on free), freed,
# then given back; the resident size after each step
RELEASE = """
import json
from calculators.memory import release_freed, tune_memory
tune_memory()
import numpy

def rss():
    return next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmRSS")) // 1024

arrays = [numpy.ones(1 << 20) for _ in range(50)]
held = rss()
del arrays
freed = rss()
released = release_freed()
print(json.dumps([held, freed, rss(), released]))
"""


@linux_glibc
def test_release_freed_gives_the_kept_heap_back():
    held, freed, after, released = run(RELEASE)
    assert freed > held - 100, (held, freed)         # kept by the settings: still resident
    assert released and after < freed - 300, (freed, after)


# Arrow arrays made and dropped by a thread that has ended (as the log's reading thread's
# parse), then `release_arrow_beside` from the main thread: resident MB before and after it
# (its own thread joined), and whether pyarrow's pool is mimalloc
RELEASE_ARROW = """
import json, threading
from calculators import memory
memory.tune_memory()
import pyarrow as pa

def rss():
    return int(open("/proc/self/statm").read().split()[1]) * 4096 >> 20

def parse():
    arrays = [pa.array(range(8192)) for _ in range(2000)]       # 64 KiB each, 128 MB
    del arrays

t = threading.Thread(target=parse)
t.start()
t.join()
held = rss()
memory.release_arrow_beside()
for t in threading.enumerate():
    if t.name == "slakit-release":
        t.join()
print(json.dumps([held, rss(), pa.default_memory_pool().backend_name]))
"""

NO_PYARROW = """
import json, sys, threading
from calculators import memory
memory.release_arrow_beside()
print(json.dumps(["pyarrow" in sys.modules, [t.name for t in threading.enumerate()]]))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the resident size from /proc/self/statm")
def test_arrows_freed_pages_go_back_on_a_thread_of_their_own():
    held, after, backend = run(RELEASE_ARROW)
    if backend != "mimalloc":
        pytest.skip(f"pyarrow's pool is {backend} here, not mimalloc")
    assert after < held - 60, (held, after)          # most of the 128 MB the ended thread freed


def test_without_pyarrow_loaded_nothing_is_released_or_started():
    assert run(NO_PYARROW) == [False, ["MainThread"]]


# faults taken by 40 arrays of 8 MB after `prefault_while` ran (or did not) for 5 blocks a
# time, until busy() said False after 40 calls
PREFAULT = """
import json, resource, sys
from calculators import memory
memory.tune_memory()
import numpy as np
calls = [0]
def busy():
    calls[0] += 1
    return calls[0] <= 40
done = memory.prefault_while(busy, int(sys.argv[1])) if sys.argv[1] != "none" else 0
f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
arrays = [np.ones(1 << 20) for _ in range(40)]
print(json.dumps([done, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0]))
"""


def run_prefault(arg: str, **env_values: str) -> list[int]:
    env = {k: v for k, v in os.environ.items() if k not in ("SLAKIT_MEMORY_TUNING", "NUMPY_MADVISE_HUGEPAGE")}
    env.update(env_values)
    out = subprocess.run([sys.executable, "-c", PREFAULT, arg], check=True, capture_output=True, text=True, env=env)
    return json.loads(out.stdout)


@linux_glibc
def test_prefault_while_waiting_takes_the_faults_of_the_arrays_that_follow():
    from calculators.memory import PREFAULT_BLOCK

    done, faults = run_prefault(str(400 << 20))
    assert done == 40 * PREFAULT_BLOCK                 # busy() said False after 40 blocks
    _, faults_without = run_prefault("none")
    assert faults_without > 70_000                     # 320 MB of fresh pages (4 KiB each)
    assert faults < faults_without / 10


@linux_glibc
def test_prefault_stops_at_the_size_asked_and_needs_the_tuning():
    from calculators.memory import PREFAULT_BLOCK

    assert run_prefault(str(3 * PREFAULT_BLOCK + 1))[0] == 3 * PREFAULT_BLOCK
    assert run_prefault(str(400 << 20), SLAKIT_MEMORY_TUNING="off")[0] == 0


ARENAS = """
import ctypes, threading
from calculators.memory import tune_memory
tune_memory()
import numpy
def work():
    for _ in range(20):
        a = numpy.ones(1 << 17)      # 1 MiB: from the heap, under the mmap threshold
        del a
threads = [threading.Thread(target=work) for _ in range(4)]
for t in threads: t.start()
for t in threads: t.join()
ctypes.CDLL("libc.so.6").malloc_stats()
"""


@linux_glibc
@pytest.mark.parametrize(("env_values", "one"), [({}, True), ({"MALLOC_ARENA_MAX": "8"}, False),
                                                 ({"SLAKIT_MEMORY_TUNING": "off"}, False)])
def test_threads_share_one_malloc_arena_unless_told_otherwise(env_values, one):
    # glibc's malloc_stats prints one "Arena N:" block per arena on stderr
    env = {k: v for k, v in os.environ.items() if k not in ("SLAKIT_MEMORY_TUNING", "MALLOC_ARENA_MAX")}
    env.update(env_values)
    out = subprocess.run([sys.executable, "-c", ARENAS], check=True, capture_output=True, text=True, env=env)
    arenas = [line for line in out.stderr.splitlines() if line.startswith("Arena ")]
    assert (len(arenas) == 1) is one, out.stderr


BLAS = """
import json, os, threading
from calculators.memory import tune_memory
tune_memory()
import numpy
print(json.dumps([os.environ.get("OPENBLAS_NUM_THREADS"), threading.active_count(),
                  len(os.listdir("/proc/self/task"))]))
"""


@linux_glibc
@pytest.mark.parametrize(("env_values", "want"), [({}, "1"), ({"OPENBLAS_NUM_THREADS": "3"}, "3")])
def test_numpy_starts_no_blas_threads_unless_told_to(env_values, want):
    env = {k: v for k, v in os.environ.items() if k not in ("SLAKIT_MEMORY_TUNING", "OPENBLAS_NUM_THREADS")}
    env.update(env_values)
    out = subprocess.run([sys.executable, "-c", BLAS], check=True, capture_output=True, text=True, env=env)
    value, python_threads, os_threads = json.loads(out.stdout)
    assert value == want
    blas_threads = os_threads - python_threads       # threads numpy's OpenBLAS started
    # (OpenBLAS starts up to one thread per core beside the caller's: on one core, none)
    assert blas_threads == 0 if want == "1" else blas_threads == min(int(want), os.cpu_count() or 1) - 1


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator settings are Linux's")
def test_the_c_library_is_found_by_its_lookup_where_glibcs_own_name_fails(monkeypatch):
    """`_libc` tries `libc.so.6`, then `ctypes.util.find_library("c")` (imported only then)."""
    import ctypes

    from calculators import memory

    real = ctypes.CDLL
    tried: list[str | None] = []

    def cdll(name, *args, **kwargs):
        tried.append(name)
        if len(tried) == 1:                # glibc's own name: as where it is not installed so
            raise OSError("not found")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(ctypes, "CDLL", cdll)
    memory._libc.cache_clear()
    try:
        found = memory._libc()
    finally:
        memory._libc.cache_clear()
    from ctypes import util

    assert tried == ["libc.so.6", util.find_library("c") or "libc.so.6"]
    assert found is not None and hasattr(found, "mallopt")


def test_starting_the_memory_settings_does_not_import_ctypes_util():
    code = "import sys\nfrom calculators.memory import tune_memory\ntune_memory()\nprint('ctypes.util' in sys.modules)\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == ("False" if sys.platform.startswith("linux") else out.stdout.strip())


# a 64 MiB array (past the largest mmap threshold) filled, freed, and another filled: the
# page faults of the second
BIG_AGAIN = """
import resource
from calculators.memory import tune_memory
tune_memory()
import numpy
a = numpy.empty(8 << 20)
a.fill(1)
del a
f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
b = numpy.empty(8 << 20)
b.fill(2)
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
                    reason="glibc's allocator settings")
@pytest.mark.parametrize(("env", "reused"), [({}, True), ({"MALLOC_MMAP_MAX_": "65536"}, False),
                                             ({"SLAKIT_MEMORY_TUNING": "off"}, False)])
def test_a_block_past_the_mmap_threshold_comes_from_the_heap_and_is_reused(env, reused):
    try:
        thp = open("/sys/kernel/mm/transparent_hugepage/enabled").read()
    except OSError:
        thp = ""
    if "[always]" in thp and not reused:
        pytest.skip("transparent huge pages for every mapping: a fresh 64 MiB block is a few faults too")
    base = {k: v for k, v in os.environ.items() if k not in ("MALLOC_MMAP_MAX_", "SLAKIT_MEMORY_TUNING")}
    # (no transparent huge pages for numpy's arrays in any case: a huge page is one fault)
    out = subprocess.run([sys.executable, "-c", BIG_AGAIN], capture_output=True, text=True, check=True, timeout=60,
                         env={**base, "NUMPY_MADVISE_HUGEPAGE": "0", **env})
    faults = int(out.stdout)
    pages = (64 << 20) // 4096
    assert (faults < pages // 4) is reused, faults
