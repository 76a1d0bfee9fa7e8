"""Memory settings for working through large incident logs (the `slakit` command applies them).

Working through a large incident log allocates and frees arrays of tens of megabytes many
times over, so the cost of giving memory back to the kernel and faulting it in again shows:
on the 2-core virtual machine we measure on, page faults took 0.4-1.7 s of system time per
1M-incident run, on top of about 2.8 s of work. These settings remove most of it:

- glibc keeps freed memory for the next array: every block comes from the heap (`M_MMAP_MAX`
  0: by default blocks over 128 KiB, and at most over 32 MiB, are mapped on their own and
  unmapped as soon as they are freed, so the next one is faulted in afresh) and heap trimming
  is off. The process then keeps its peak size until it exits, which suits a command (a
  long-running one gives the free heap back with `release_freed`). The log's 137 MB buffer
  and the JSON document's id texts were such blocks: with them in the heap the engine and the
  document reuse their pages (1M incidents: page faults 171k -> 139k (table) and 202k ->
  169k (JSON), the runs 8 % and 6 % faster in alternating pairs). An explicit
  `MALLOC_MMAP_MAX_` (or glibc's `mmap_max` tunable) is kept. (Where the heap cannot grow,
  glibc still maps memory.)
- one malloc arena for all threads (`M_ARENA_MAX` 1; glibc gives each new thread an arena of
  its own, up to eight per core): the engine's workers (months, attribution, the halves of
  the rack rules) then reuse the blocks the loader and the main thread freed instead of
  faulting in fresh ones (1M incidents: about 20 % fewer page faults). Its arrays are few
  and large, so the arena's lock is not contended. An explicit `MALLOC_ARENA_MAX` is kept.
- numpy does not ask for transparent huge pages for its arrays (`NUMPY_MADVISE_HUGEPAGE=0`,
  numpy's own switch). Where the kernel compacts memory to find huge pages on demand (the
  `madvise` setting most distributions ship), each such fault costs far more than it saves:
  runs were 0.6-0.9 s faster without.
- nor does Arrow's allocator (mimalloc 3, which pyarrow bundles and uses by default, asks for
  them on its 1 GiB arena unless `MIMALLOC_ALLOW_THP=0`): each first touch of a 2 MiB region
  of the log's parsed table then zeroes, and where the kernel finds no free huge page,
  compacts memory, in the faulting thread (1M incidents, alternating runs: system time
  1.1-1.6 s -> 0.6-0.8 s for the table). It is read once, when pyarrow's library loads, so
  it is set only while pyarrow is not yet imported; an explicit `MIMALLOC_ALLOW_THP` is kept.

Faulting memory in is still work: loading and computing a million incidents fault in about
400 MB (100,000 pages, some 0.2 s of system time). Where the command waits anyway, for the
background reading of its log (`calculators.log_prefetch.take`), `prefault_while` does that
work ahead: it allocates 8 MiB blocks from the heap and has the kernel fault each in
(`madvise(MADV_POPULATE_WRITE)`, about half the CPU of writing each page, which it does where
that advice is not known) while the reading goes on (at most about three times the log's
size), then frees them; the allocator keeps them (no trimming) for the arrays that follow. It
runs in the waiting thread (the credits benchmark: about 0.07 s sooner).

One setting is about CPU, not memory, and is applied with them: numpy's OpenBLAS starts a
thread per core when numpy is imported, and each spins for a while before it sleeps (0.1 s of
CPU per `slakit credits` run, taken from the log's parse on a 2-core machine). slakit does no
linear algebra with numpy, so `OPENBLAS_NUM_THREADS` is set to 1 where it is not set (child
processes inherit it; none of the tools slakit runs uses numpy's OpenBLAS).

`SLAKIT_MEMORY_TUNING=off` leaves all of this as it is; an explicit `NUMPY_MADVISE_HUGEPAGE`
or `MIMALLOC_ALLOW_THP` is respected.
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
from collections.abc import Callable
from typing import Any

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
M_MMAP_MAX = -4
M_ARENA_MAX = -8
MMAP_THRESHOLD_MAX = 32 << 20        # glibc's upper limit on 64-bit systems
TRIM_THRESHOLD = 2**31 - 1           # the largest int: trim only when 2 GiB are free at the top

PREFAULT_BLOCK = 8 << 20             # under the mmap threshold: from the heap, kept when freed
PAGE = 4096
MADV_POPULATE_WRITE = 23             # Linux's madvise advice: fault the pages in, writable
PREFAULT_MAX = 1 << 30               # the most faulted in ahead

_applied: dict[str, bool] | None = None


def tune_memory() -> dict[str, bool]:
    """Apply the settings once per process (call it before numpy is imported where possible).
    Returns which took effect: {"malloc": ..., "no_hugepages": ..., "arrow_no_hugepages": ...,
    "one_blas_thread": ...}."""
    global _applied
    if _applied is not None:
        return _applied
    _applied = {"malloc": False, "no_hugepages": False, "arrow_no_hugepages": False, "one_blas_thread": False}
    if os.environ.get("SLAKIT_MEMORY_TUNING", "").lower() == "off" or not sys.platform.startswith("linux"):
        return _applied
    _applied["malloc"] = _keep_freed_memory()
    _applied["no_hugepages"] = _no_hugepages()
    # mimalloc reads its options when pyarrow's library loads (pyarrow already imported keeps them)
    _applied["arrow_no_hugepages"] = ("pyarrow" not in sys.modules
                                      and os.environ.setdefault("MIMALLOC_ALLOW_THP", "0") == "0")
    # OpenBLAS reads it when numpy loads it; numpy already imported keeps its threads
    _applied["one_blas_thread"] = ("numpy" not in sys.modules
                                   and os.environ.setdefault("OPENBLAS_NUM_THREADS", "1") == "1")
    return _applied


@functools.cache
def _libc() -> ctypes.CDLL | None:
    """The C library (glibc's allocator functions), None where it cannot be loaded: glibc's
    own name first (`find_library` runs `ldconfig -p` in a child process, which forks the
    whole command: a few milliseconds once it holds a loaded log; `ctypes.util` itself is
    imported only then: it brings subprocess, shutil and tempfile, 5-10 ms of every start),
    looked up once."""
    for name in ("libc.so.6", None):
        try:
            if name is None:
                from ctypes import util

                name = util.find_library("c") or "libc.so.6"
            return ctypes.CDLL(name)
        except OSError:
            continue
    return None


def _keep_freed_memory() -> bool:
    mallopt = getattr(_libc(), "mallopt", None)
    if mallopt is None:
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    kept = mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_MAX) == 1 and mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1
    if kept and "MALLOC_MMAP_MAX_" not in os.environ and "mmap_max" not in os.environ.get("GLIBC_TUNABLES", ""):
        mallopt(M_MMAP_MAX, 0)           # every block from the heap, kept when freed
    if kept and "MALLOC_ARENA_MAX" not in os.environ:
        mallopt(M_ARENA_MAX, 1)          # (before the command starts its threads)
    return kept


def _no_hugepages() -> bool:
    wanted = os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")
    if wanted != "0":
        return False                 # the user asked for huge pages
    numpy = sys.modules.get("numpy")
    if numpy is None:
        return True                  # numpy reads the variable when it is imported
    try:                             # already imported: numpy's own setter for that variable
        numpy._core.multiarray._set_madvise_hugepage(False)
    except AttributeError:
        return False
    return True


def release_freed() -> bool:
    """Give the memory freed so far back to the kernel: glibc's free heap (`malloc_trim`, which
    also returns free pages inside the heap) and Arrow's pool. For a command done with large
    temporary arrays (the loader's, for a log) before it builds many small Python objects:
    those live in arenas of their own, outside glibc's heap, so the heap the settings above keep
    would stay resident beside them and add to the peak. Returns whether glibc released any."""
    pyarrow = sys.modules.get("pyarrow")
    if pyarrow is not None:
        _release_arrow(pyarrow)
    if not sys.platform.startswith("linux"):
        return False
    malloc_trim = getattr(_libc(), "malloc_trim", None)
    if malloc_trim is None:
        return False
    malloc_trim.argtypes = [ctypes.c_size_t]
    malloc_trim.restype = ctypes.c_int
    return malloc_trim(0) == 1


def release_arrow_beside() -> None:
    """Give the pages Arrow's pool holds free back to the kernel, on a thread of its own while
    the caller goes on: for a command done with Arrow's memory (the log's parse, once its
    columns are converted) that has work left for one core. The kernel would otherwise free
    them when the process exits, after its last output, on the critical path (`slakit credits`
    table, 1M incidents: about 180 MB, 14 ms here). Nothing without pyarrow loaded."""
    pyarrow = sys.modules.get("pyarrow")
    if pyarrow is None:
        return
    import threading

    threading.Thread(target=_release_arrow, args=(pyarrow,), name="slakit-release", daemon=True).start()


def _release_arrow(pyarrow: Any) -> None:
    """Arrow's pool gives the pages it holds free back (`release_unused`). mimalloc, Arrow's
    allocator, collects the calling thread's heap (with the abandoned ones of threads that
    ended, such as the log's reading thread), and a thread that never allocated through it
    has none: it allocates once first (a fresh thread released nothing, one that had
    allocated 182 MB)."""
    pool = pyarrow.default_memory_pool()
    pyarrow.allocate_buffer(64, memory_pool=pool)
    pool.release_unused()


def prefault_while(busy: Callable[[], bool], nbytes: int) -> int:
    """While `busy()` says True, fault in heap memory a block at a time, up to about `nbytes`
    (at most PREFAULT_MAX), then free it for the arrays that follow (see the module's text).
    Only where `tune_memory` took effect (freed memory is kept); returns the bytes faulted in."""
    if not (_applied or {}).get("malloc") or nbytes < PREFAULT_BLOCK:
        return 0
    libc = _libc()
    malloc, free = getattr(libc, "malloc", None), getattr(libc, "free", None)
    if malloc is None or free is None:
        return 0
    malloc.restype, malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
    free.restype, free.argtypes = None, [ctypes.c_void_p]
    populate = getattr(libc, "madvise", None)
    if populate is not None:
        populate.restype, populate.argtypes = ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    blocks = min(nbytes, PREFAULT_MAX) // PREFAULT_BLOCK
    got: list[int] = []
    try:
        while len(got) < blocks and busy():
            p = malloc(PREFAULT_BLOCK)
            if not p:
                break
            # the block's whole pages faulted in by the kernel in one call (Linux 5.14 and later:
            # about half the CPU of writing each page, taken from the threads the wait is for),
            # else written; ctypes calls let the other threads run
            inner = (p + PAGE - 1) // PAGE * PAGE
            if populate is None or populate(inner, (p + PREFAULT_BLOCK - inner) // PAGE * PAGE,
                                            MADV_POPULATE_WRITE) != 0:
                populate = None
                ctypes.memset(p, 0, PREFAULT_BLOCK)
            got.append(p)
    finally:
        for p in got:
            free(p)
    return len(got) * PREFAULT_BLOCK
