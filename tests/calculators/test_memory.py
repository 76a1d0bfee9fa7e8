"""The malloc settings `slakit` applies at start (calculators/memory.py), in fresh processes."""

from __future__ import annotations

import subprocess
import sys

import pytest

CODE = "from calculators.memory import keep_freed_memory as k; print(k(), k())"


def run(env_value: str | None) -> str:
    import os

    env = dict(os.environ)
    env.pop("SLAKIT_MALLOC_TUNING", None)
    if env_value is not None:
        env["SLAKIT_MALLOC_TUNING"] = env_value
    return subprocess.run([sys.executable, "-c", CODE], check=True, capture_output=True, text=True,
                          env=env).stdout.split()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt is Linux-only")
def test_glibc_takes_the_settings_once():
    import platform

    if platform.libc_ver()[0] != "glibc":
        pytest.skip("not a glibc system")
    assert run(None) == ["True", "True"]


def test_can_be_turned_off():
    assert run("off") == ["False", "False"]
