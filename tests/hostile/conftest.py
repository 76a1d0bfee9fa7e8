"""Helpers for the hostile-input tests: run the CLI, time and memory of one call."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

REPO = Path(__file__).resolve().parents[2]
SECRET = "S3CRET-TOKEN-9f2c"          # planted in files that must never be echoed


def cli(*args: str, env: dict | None = None):
    """Run `slakit ARGS` in-process; returns the click Result (stdout and stderr apart)."""
    from slakit.cli import main
    from slaschema import hostlist, safefiles, textsafe

    try:
        return CliRunner().invoke(main, [str(a) for a in args], env=env, catch_exceptions=True)
    finally:                       # the global flags are per process: reset them between tests
        hostlist.set_max_nodes(None)
        safefiles.set_max_file_bytes(None)
        textsafe.set_raw_csv(None)


def assert_coded_failure(result, code: str | None = None) -> None:
    """Exit 1, a `[code]` in the output, no traceback, no escaped exception."""
    text = result.output
    assert result.exit_code == 1, text
    assert "Traceback" not in text, text
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    if code is not None:
        assert f"[{code}]" in text or f'"code": "{code}"' in text, text


def measured(argv: list[str], timeout: float = 60) -> tuple[subprocess.CompletedProcess, float, float]:
    """Run `python -m slakit ARGV` in a child; returns (process, seconds, peak RSS in MB)."""
    # VmHWM is the peak of this process's own memory: getrusage's ru_maxrss is carried over from
    # the parent at fork, so late in a long pytest run it would report pytest's size instead.
    code = ("import runpy, sys; sys.argv = ['slakit'] + sys.argv[1:];\n"
            "def hwm():\n"
            "    for ln in open('/proc/self/status'):\n"
            "        if ln.startswith('VmHWM:'):\n"
            "            return int(ln.split()[1])\n"
            "    import resource; return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
            "import atexit; atexit.register(lambda: sys.stderr.write('\\nPEAK_KB=%d\\n' % hwm()))\n"
            "runpy.run_module('slakit', run_name='__main__')")     # (the program ends in os._exit: atexit runs)
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", code, *argv], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout)
    seconds = time.monotonic() - t0
    peak = [ln for ln in proc.stderr.splitlines() if ln.startswith("PEAK_KB=")]
    mb = int(peak[-1].split("=")[1]) / 1024 if peak else float("nan")
    return proc, seconds, mb


@pytest.fixture
def small(tmp_path):
    """Write a small valid contract with `racks` and `extra` sections into tmp_path."""
    from tests.contracts import small_contract

    def make(racks: dict[str, str] | None = None, extra: str = "", name: str = "c.yaml") -> Path:
        p = tmp_path / name
        p.write_text(small_contract("t", racks or {"r1": "n[1-4]"}, extra), encoding="utf-8")
        return p
    return make



_BASELINE: list[float] = []


def startup_seconds() -> float:
    """What `slakit --version` takes in a child here (imports, interpreter): subtracted from
    the time limits so they measure the work, not the machine's start-up."""
    if not _BASELINE:
        _BASELINE.append(min(measured(["--version"])[1] for _ in range(2)))
    return _BASELINE[0]
