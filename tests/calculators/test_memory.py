"""The memory settings `slakit` applies at start (calculators/memory.py), in fresh processes."""

from __future__ import annotations

import json
import os
import platform
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
    env = {k: v for k, v in os.environ.items() if k not in ("SLAKIT_MEMORY_TUNING", "NUMPY_MADVISE_HUGEPAGE")}
    env.update(env_values)
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env)
    return json.loads(out.stdout)


linux_glibc = pytest.mark.skipif(not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
                                 reason="glibc's mallopt and numpy's huge-page switch are Linux-only")


@linux_glibc
def test_both_settings_take_once_before_numpy():
    first, again, numpy_env = run(CODE)
    assert first == {"malloc": True, "no_hugepages": True} and again == first
    assert numpy_env == "0"


@linux_glibc
def test_numpy_already_imported_is_switched_through_its_own_setter():
    assert run(LATE) == {"malloc": True, "no_hugepages": True}


@linux_glibc
def test_an_explicit_numpy_choice_is_kept():
    first, _, numpy_env = run(CODE, NUMPY_MADVISE_HUGEPAGE="1")
    assert first == {"malloc": True, "no_hugepages": False} and numpy_env == "1"


def test_can_be_turned_off():
    first, again, numpy_env = run(CODE, SLAKIT_MEMORY_TUNING="off")
    assert first == again == {"malloc": False, "no_hugepages": False} and numpy_env is None


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
