"""`slakit.cli.quick_exit`: the program ends as the interpreter's own exit would (status,
threads, atexit functions, flushed output), without its tear-down."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from slakit.cli import main

REPO = Path(__file__).resolve().parents[1]


def python(code: str, *args: str, stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], cwd=REPO, stdout=stdout,
                          stderr=subprocess.PIPE, timeout=60)


def slakit(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "slakit", *args], cwd=REPO, capture_output=True, timeout=120, **kw)


@pytest.mark.parametrize("code, status, err", [
    ("None", 0, b""), ("0", 0, b""), ("3", 3, b""), ("True", 1, b""), ("256 + 7", 7, b""), ("-1", 255, b""),
    ("'no such thing'", 1, b"no such thing\n"),
])
def test_the_status_is_the_interpreters(code, status, err):
    quick = python(f"from slakit.cli import quick_exit; quick_exit({code})")
    plain = python(f"import sys; sys.exit({code})")
    assert quick.returncode == plain.returncode == status
    assert quick.stderr == plain.stderr == err


def test_threads_pools_and_atexit_functions_finish_first(tmp_path):
    got = python("""
        import atexit, sys, threading, time
        from concurrent.futures import ThreadPoolExecutor
        from pathlib import Path
        out = Path(sys.argv[1])
        def late(name):
            time.sleep(0.3)
            (out / name).write_text("done")
        threading.Thread(target=late, args=("thread",)).start()        # not a daemon: joined
        pool = ThreadPoolExecutor(1)                                     # never shut down
        pool.submit(late, "pool")
        atexit.register(lambda: (out / "atexit").write_text(str(sorted(p.name for p in out.iterdir()))))
        print("buffered", end="")                                        # flushed at the end
        sys.stderr.write("err")
        from slakit.cli import quick_exit
        quick_exit(4)
    """, str(tmp_path))
    assert got.returncode == 4
    assert got.stdout == b"buffered" and got.stderr == b"err"
    assert (tmp_path / "thread").read_text() == "done" and (tmp_path / "pool").read_text() == "done"
    # the atexit functions run after the threads, as at an interpreter's exit
    assert (tmp_path / "atexit").read_text() == "['pool', 'thread']"


@pytest.mark.parametrize("end", ["from slakit.cli import quick_exit; quick_exit(0)", "sys.exit(0)"])
def test_a_closed_output_pipe_is_status_120(end):
    got = python(f"""
        import os, sys
        r, w = os.pipe()
        os.close(r)                    # the reader went away before the output was flushed
        os.dup2(w, 1)
        sys.stdout = open(1, "w", buffering=1 << 16, closefd=False)
        sys.stdout.write("x" * 100)
        {end}
    """)
    assert got.returncode == 120
    if "quick_exit" in end:
        assert got.stderr == b""       # (the interpreter's own exit prints "Exception ignored ...")


def test_the_program_gives_the_same_output_and_status_as_in_process(tmp_path):
    """Large output through a pipe arrives whole; usage and input errors keep their status."""
    big = slakit("completion", "zsh")
    assert big.returncode == 0 and big.stdout.decode() == CliRunner().invoke(main, ["completion", "zsh"]).output
    assert slakit("--no-such-option").returncode == 2
    bad = tmp_path / "bad.yaml"
    bad.write_text("slakit: 1\ncontract: {id: x}\n")
    got = slakit("validate", str(bad))
    assert got.returncode == 1 and b"Traceback" not in got.stderr
    assert got.stdout + got.stderr == (lambda r: r.output.encode())(CliRunner().invoke(main, ["validate", str(bad)]))


CONTRACT = str(REPO / "examples" / "gb200-contract.yaml")
LOG = str(REPO / "examples" / "gb200-incidents-2027Q1.csv")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
@pytest.mark.parametrize("args", [
    ["--help"], ["--version"], ["schema"], ["show", CONTRACT],
    ["credits", CONTRACT, LOG, "--month", "2027-02", "--format", "json"],
])
def test_standard_output_on_a_full_disk_is_one_coded_line(args):
    """`> /dev/full`: exit 1 and one line naming standard output, never a traceback or an
    `unexpected_error` blaming the input (--help and --version fail outside any command)."""
    with open("/dev/full", "w") as full:
        r = subprocess.run([sys.executable, "-m", "slakit", *args], cwd=REPO, stdout=full,
                           stderr=subprocess.PIPE, timeout=120)
    err = r.stderr.decode()
    assert r.returncode == 1, err
    assert "error: standard output could not be written (No space left on device)" in err
    assert "[output_unwritable]" in err and "Traceback" not in err and "unexpected_error" not in err


@pytest.mark.parametrize("args", [
    ["credits", CONTRACT, LOG, "--month", "2027-02", "--format", "json"], ["schema"], ["show", CONTRACT],
])
def test_a_reader_that_has_gone_ends_the_command_quietly(args):
    """`| head -c 1` that has already exited: the write fails with a broken pipe; exit 1 and
    nothing on standard error (as click's own handling), not an `unexpected_error`."""
    import os

    read, write = os.pipe()
    os.close(read)
    try:
        r = subprocess.run([sys.executable, "-m", "slakit", *args], cwd=REPO, stdout=write,
                           stderr=subprocess.PIPE, timeout=120)
    finally:
        os.close(write)
    assert r.returncode == 1 and r.stderr == b"", r.stderr


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
def test_a_last_flush_into_a_full_disk_is_said_not_only_in_the_status():
    """Output still buffered at the end that a full disk refuses: status 120 as the
    interpreter's, and a line saying so (the interpreter prints the OSError; quietly would
    look like success to someone not reading the status)."""
    import os

    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}       # the output stays buffered

    def run(code: str) -> subprocess.CompletedProcess:
        with open("/dev/full", "w") as full:
            return subprocess.run([sys.executable, "-c", code], cwd=REPO, stdout=full, stderr=subprocess.PIPE,
                                  env=env, timeout=60)

    quick = run("import sys; from slakit.cli import quick_exit; sys.stdout.write('x' * 10); quick_exit(0)")
    plain = run("import sys; sys.stdout.write('x' * 10); sys.exit(0)")
    assert quick.returncode == plain.returncode == 120
    assert b"No space left on device" in plain.stderr
    assert b"standard output could not be written (No space left on device)" in quick.stderr
    assert b"[output_unwritable]" in quick.stderr and b"Traceback" not in quick.stderr


def test_a_ctrl_c_while_the_program_loads_is_aborted_without_a_traceback():
    """A Ctrl-C while `slakit.cli` and its commands are imported (`slakit.entry`) ends as one
    during a command does: `Aborted!`, exit 1."""
    got = python("""
        import sys

        class Interrupt:                      # the user's Ctrl-C, while slakit.cli is imported
            def find_spec(self, name, path=None, target=None):
                if name == "slakit.cli":
                    raise KeyboardInterrupt
                return None

        sys.meta_path.insert(0, Interrupt())
        from slakit.entry import run
        run()
    """)
    assert got.returncode == 1
    assert got.stderr == b"\nAborted!\n"


def test_the_console_script_and_python_m_start_at_the_entry():
    import tomllib

    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"slakit": "slakit.entry:run"}
    assert (REPO / "slakit" / "__main__.py").read_text().startswith("from slakit.entry import run")
    assert slakit("--version").returncode == 0
