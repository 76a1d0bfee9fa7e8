"""Keep freed memory in the process for the next array (glibc malloc settings).

Working through a large incident log allocates and frees arrays of tens of megabytes many
times over. By default glibc hands blocks over 128 KiB back to the kernel as soon as they
are freed (mmap/munmap, then heap trimming), so every new array faults its pages in again.
On virtual machines each page fault is expensive: in the 1M-incident benchmark the faults
cost 0.4-1.7 s of system time on top of about 2.8 s of work. With the mmap threshold at its
largest (32 MiB) and trimming off, freed memory is reused instead. The price is that the
process keeps its peak size until it exits, which suits a command-line run; the `slakit`
command sets this up at start. `SLAKIT_MALLOC_TUNING=off` leaves malloc as it is.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD_MAX = 32 << 20        # glibc's upper limit on 64-bit systems
TRIM_THRESHOLD = 2**31 - 1           # the largest int: trim only when 2 GiB are free at the top

_applied: bool | None = None


def keep_freed_memory() -> bool:
    """Apply the settings once per process; True when glibc took them."""
    global _applied
    if _applied is not None:
        return _applied
    _applied = False
    if os.environ.get("SLAKIT_MALLOC_TUNING", "").lower() == "off" or not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    _applied = mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_MAX) == 1 and mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1
    return _applied
