"""The background reading of an incident log (`calculators.log_prefetch`): the log it hands
over is the one the loader would read itself, a file changed after the reading is read
again, and FIFOs, devices and missing files are left to the loader's own errors."""

from __future__ import annotations

import os
import threading
import time

import pytest

import calculators.incidents as inc
from calculators import log_prefetch
from slaschema.errors import InputError

from .test_arrow_reader import HEADER, ROWS, same


def test_prefetched_log_is_the_log_read_directly(write, lc):
    path = write("log.csv", HEADER + "\n".join(ROWS) + "\n")
    direct = inc.load_incidents(path, lc)
    log_prefetch.start(path)
    fetched = log_prefetch.take(path)
    assert fetched is not None and fetched.arrow is not None
    assert fetched.sha256 == direct.sha256
    log_prefetch.start(path)
    pre = inc.load_incidents(path, lc)
    same(pre, direct)
    assert pre.sha256 == direct.sha256
    assert log_prefetch.take(path) is None             # handed out once


def test_a_file_changed_after_the_reading_is_read_again(write, lc):
    path = write("log.csv", HEADER + ROWS[0] + "\n")
    log_prefetch.start(path)
    fetched = log_prefetch.take(path)
    assert fetched is not None
    log_prefetch.start(path)
    time.sleep(0.05)
    path.write_text(HEADER + "\n".join(ROWS[:3]) + "\n", encoding="utf-8")
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 10_000_000))
    log = inc.load_incidents(path, lc)
    assert len(log.frame) == 3
    assert log.sha256 == inc.load_incidents(path, lc).sha256


def test_json_logs_are_read_but_not_parsed_by_arrow(write, lc):
    path = write("log.jsonl", '{"id": "A1", "scope": "node", "target": "r01-n01", "start": "2027-02-03T10:00:00Z"}\n')
    log_prefetch.start(path)
    fetched = log_prefetch.take(path)
    assert fetched is not None and fetched.arrow is None
    log_prefetch.start(path)
    assert list(inc.load_incidents(path, lc).frame["id"]) == ["A1"]


def test_missing_file_leaves_the_error_to_the_loader(tmp_path, lc):
    path = tmp_path / "absent.csv"
    log_prefetch.start(path)
    with pytest.raises(InputError) as exc:
        inc.load_incidents(path, lc)
    assert exc.value.problems[0].code == "file_not_found"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_never_hangs_the_reading(tmp_path, lc):
    fifo = tmp_path / "log.csv"
    os.mkfifo(fifo)
    log_prefetch.start(fifo)
    done = threading.Event()
    got: list = []

    def take() -> None:
        got.append(log_prefetch.take(fifo))
        done.set()

    threading.Thread(target=take, daemon=True).start()
    assert done.wait(5), "the prefetch thread blocked on a FIFO"
    assert got == [None]
    with pytest.raises(InputError) as exc:
        inc.load_incidents(fifo, lc)
    assert exc.value.problems[0].code == "not_a_regular_file"


def test_proc_is_not_read_in_the_background(lc):
    log_prefetch.start("/proc/self/environ")
    assert log_prefetch.take("/proc/self/environ") is None


def test_a_reading_that_fails_leaves_the_file_to_the_loader_without_a_thread_traceback(write, lc, monkeypatch):
    """A file the reading cannot hold (MemoryError for a huge sparse file) or any other
    failure of the read ends the thread quietly: no "Exception in thread" traceback, and the
    loader reads the file itself (`slaschema.entry` starts readings before the command line is
    checked, so a usage error must not print one either)."""
    path = write("log.csv", HEADER + ROWS[0] + "\n")
    seen: list = []
    monkeypatch.setattr(threading, "excepthook", lambda args: seen.append(args.exc_type))

    def fail(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(log_prefetch, "_read_regular", fail)
    log_prefetch.start(path)
    assert log_prefetch.take(path) is None
    assert seen == []
    assert len(inc.load_incidents(path, lc).frame) == 1


def test_a_tilde_in_a_logs_name_is_a_folder_of_that_name(tmp_path, lc, monkeypatch):
    """The loader opens the name as written, so its check is of the name as written: a folder
    named `~` holding a link into /proc is refused, not checked as the home folder's file."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "~").mkdir()
    (tmp_path / "~" / "log.csv").symlink_to("/proc/self/status")
    log_prefetch.start("~/log.csv")
    assert log_prefetch.take("~/log.csv") is None
    with pytest.raises(InputError) as exc:
        inc.load_incidents("~/log.csv", lc)
    assert exc.value.problems[0].code == "path_forbidden"


def test_columns_converted_in_parallel_give_the_same_log(tmp_path, lc, monkeypatch):
    """Above 50,000 rows the Arrow columns are converted in threads (`_ArrowSource.prepare`):
    the log is the one converted column by column, problems included."""
    nodes = [f"r{r:02d}-n{n:02d}" for r in range(1, 3) for n in range(1, 4)]
    lines = [HEADER.rstrip("\n")]
    for i in range(60_000):
        day, sec = 1 + i % 27, i % 86_000
        start = f"2027-02-{day:02d}T{sec // 3600:02d}:{sec // 60 % 60:02d}:{sec % 60:02d}Z"
        end = "" if i % 997 == 0 else f"2027-02-{day:02d}T23:59:59Z"
        impact = "degraded" if i % 5 == 0 else ""
        gpus = "1" if impact else ""
        lines.append(f"P{i},node,{nodes[i % len(nodes)]},{start},{end},{impact},{gpus},,,,,")
    lines.append("P1,node,r01-n01,2027-02-03T10:00:00Z,2027-02-03T09:00:00Z,,,,,,,")   # duplicate id, end < start
    path = tmp_path / "big.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as parallel:
        inc.load_incidents(path, lc)
    ok = tmp_path / "ok.csv"
    ok.write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")
    fast = inc.load_incidents(ok, lc)
    log_prefetch.start(ok)                  # converted in the background reading's threads
    fetched = log_prefetch.take(ok)
    assert fetched is not None and ("text", "id") in fetched.converted and ("times", "start") in fetched.converted
    log_prefetch.start(ok)
    same(fast, inc.load_incidents(ok, lc))
    monkeypatch.setattr(inc._ArrowSource, "prepare", lambda self, *a: None)
    with pytest.raises(InputError) as serial:
        inc.load_incidents(path, lc)
    assert [p.to_json() for p in parallel.value.problems] == [p.to_json() for p in serial.value.problems]
    assert {p.code for p in serial.value.problems} >= {"duplicate_id", "end_before_start"}
    same(fast, inc.load_incidents(ok, lc))


@pytest.mark.parametrize("spelling", ["./log.csv", "sub/../log.csv", "sub//../log.csv"])
def test_the_path_as_the_command_line_spells_it_is_the_one_taken(write, lc, monkeypatch, spelling):
    """`slakit credits C ./log.csv`: the reading started for the name as given is the one the
    loader takes (the loader's Path("./log.csv") is "log.csv", and the reading was wasted)."""
    path = write("log.csv", HEADER + "\n".join(ROWS) + "\n")
    (path.parent / "sub").mkdir()
    monkeypatch.chdir(path.parent)
    direct = inc.load_incidents(path, lc)
    log_prefetch.start(spelling)
    same(inc.load_incidents(spelling, lc), direct)
    assert log_prefetch.take(spelling) is None          # the loader took it


def test_a_command_that_stops_early_does_not_wait_for_the_parse(write, monkeypatch):
    """A bad contract ends the command before the log is needed: the exit waits for the read
    under way, not for the hash and the Arrow parse after it (a 1 GiB log kept `slakit credits
    bad.yaml LOG` 3.5 s and 2.2 GB instead of 0.8 s and 130 MB)."""
    path = write("log.csv", HEADER + "\n".join(ROWS) + "\n")
    real_read = log_prefetch._read_regular
    parsed = []

    def slow_read(name, stop=None):
        time.sleep(0.3)
        return real_read(name, stop)

    monkeypatch.setattr(log_prefetch, "_read_regular", slow_read)
    monkeypatch.setattr("calculators.log_csv_parse.read_csv_arrow", lambda data, *a, **k: parsed.append(1))
    monkeypatch.setattr("calculators.log_csv_plain.read_plain", lambda data: parsed.append(2))
    log_prefetch.start(path)
    log_prefetch._finish()                  # what the interpreter's exit runs
    assert parsed == []
    assert log_prefetch.take(path) is None


def _many_rows(n: int) -> str:
    return HEADER + "".join(f"R{i},node,r01-n0{1 + i % 6},2027-02-03T10:00:00Z,2027-02-03T11:00:00Z,,,,,,,\n"
                            for i in range(n))


def test_a_cancelled_reading_stops_between_chunks_and_parses_nothing(write, monkeypatch):
    """Past the first EAGER bytes the reading waits for the loader; a command that ends before
    asking (cancel) stops it there: nothing more is read, hashed or parsed."""
    path = write("log.csv", _many_rows(60_000))                   # about 4 MB
    monkeypatch.setattr(log_prefetch, "CHUNK", 1 << 16)
    monkeypatch.setattr(log_prefetch, "EAGER", 1 << 20)
    parsed = []
    monkeypatch.setattr("calculators.log_csv_parse.read_csv_arrow", lambda data, *a, **k: parsed.append(len(data)))
    monkeypatch.setattr("calculators.log_csv_plain.read_plain", lambda data: parsed.append(len(data)))
    log_prefetch.start(path)
    job = log_prefetch._jobs[log_prefetch._key(path)]
    time.sleep(0.3)
    assert job.thread.is_alive() and not job.out                  # waiting at EAGER, not reading on
    t0 = time.monotonic()
    log_prefetch.cancel()
    job.thread.join(5)
    assert not job.thread.is_alive() and time.monotonic() - t0 < 2
    assert parsed == [] and job.out == []
    assert log_prefetch.take(path) is None
    log_prefetch._finish()


def test_the_file_is_read_while_pyarrow_is_imported_and_parsed_after(write, monkeypatch):
    """The reading thread reads the file at once; a CSV with a quote character is parsed once
    the thread that started it has imported pyarrow's CSV reader (`parser`) and its columns
    converted once the rest is imported (`imported`); a cancel while it waits stops it without
    a parse."""
    text = '"id"' + HEADER[2:] + "\n".join(ROWS) + "\n"          # (a quoted header cell)
    path = write("log.csv", text)
    size = len(text)
    read, parsed = threading.Event(), []
    real_read = log_prefetch._read_regular

    def reading(*a, **k):
        got = real_read(*a, **k)
        read.set()
        return got

    monkeypatch.setattr(log_prefetch, "_read_regular", reading)
    monkeypatch.setattr("calculators.log_csv_parse.read_csv_arrow",
                        lambda data, *a, **k: parsed.append(len(data)) or (None, {}, []))
    converted = []
    monkeypatch.setattr("calculators.log_csv.convert_columns", lambda *a, **k: converted.append(1) or {})
    for cancelled in (False, True):
        read.clear()
        parsed.clear()
        converted.clear()
        job = log_prefetch._Job()                   # as `start` makes it, before its imports are done
        job.thread = threading.Thread(target=log_prefetch._work, args=(log_prefetch._key(path), job), daemon=True)
        job.thread.start()
        assert read.wait(5)
        time.sleep(0.2)
        assert job.thread.is_alive() and parsed == []        # read, waiting for the parser
        if cancelled:
            job.cancel()
        else:
            job.parser.set()
            time.sleep(0.2)
            assert parsed == [size] and converted == [] and job.thread.is_alive()
            job.imported.set()
        job.thread.join(5)
        assert not job.thread.is_alive()
        assert (parsed, converted) == (([], []) if cancelled else ([size], [1]))


def test_a_log_of_plain_cells_is_split_once_the_conversions_are_imported(write, monkeypatch):
    """A CSV without a quote character is split into its columns in one pass (`read_plain`),
    which needs the conversions' module: the thread waits for `imported`, not for `parser`, and
    Arrow does not parse a log the pass read; a cancel while it waits stops it without either."""
    path = write("log.csv", HEADER + "\n".join(ROWS) + "\n")
    read, split, parsed = threading.Event(), [], []
    real_read = log_prefetch._read_regular

    def reading(*a, **k):
        got = real_read(*a, **k)
        read.set()
        return got

    from calculators import log_csv_plain

    real_plain = log_csv_plain.read_plain
    monkeypatch.setattr(log_prefetch, "_read_regular", reading)
    monkeypatch.setattr(log_csv_plain, "read_plain", lambda data: split.append(len(data)) or real_plain(data))
    monkeypatch.setattr("calculators.log_csv_parse.read_csv_arrow", lambda data, *a, **k: parsed.append(1))
    for cancelled in (False, True):
        read.clear()
        split.clear()
        job = log_prefetch._Job()
        job.thread = threading.Thread(target=log_prefetch._work, args=(log_prefetch._key(path), job), daemon=True)
        job.thread.start()
        assert read.wait(5)
        job.parser.set()
        time.sleep(0.2)
        assert job.thread.is_alive() and split == []          # waiting for the conversions' module
        if cancelled:
            job.cancel()
        else:
            job.imported.set()
        job.thread.join(5)
        assert not job.thread.is_alive() and parsed == []
        if cancelled:
            assert split == [] and job.out == []
        else:
            assert split == [path.stat().st_size] and job.out[0].rows == len(ROWS)
            assert ("times", "start") in job.out[0].converted and ("text", "target") in job.out[0].converted


def test_the_loader_gets_the_whole_log_past_the_eager_part(write, lc, monkeypatch):
    path = write("log.csv", _many_rows(60_000))
    monkeypatch.setattr(log_prefetch, "CHUNK", 1 << 16)
    monkeypatch.setattr(log_prefetch, "EAGER", 1 << 20)
    direct = inc.load_incidents(path, lc)
    log_prefetch.start(path)
    fetched = log_prefetch.take(path)
    assert fetched is not None and bytes(fetched.data) == path.read_bytes()
    assert fetched.sha256 == direct.sha256 and fetched.arrow[0].num_rows == 60_000
    log_prefetch.start(path)
    same(inc.load_incidents(path, lc), direct)


def test_a_command_that_fails_on_its_contract_cancels_the_reading(write, tmp_path, monkeypatch):
    from tests.hostile.conftest import cli

    path = write("log.csv", _many_rows(60_000))
    bad = tmp_path / "bad.yaml"
    bad.write_text("slakit: 1\ncontract: {id: x\n", encoding="utf-8")
    monkeypatch.setattr(log_prefetch, "EAGER", 1 << 20)
    monkeypatch.setattr(log_prefetch, "CHUNK", 1 << 16)
    parsed = []
    monkeypatch.setattr("calculators.log_csv_parse.read_csv_arrow", lambda data, *a, **k: parsed.append(len(data)))
    r = cli("credits", bad, path, "--month", "2027-02")
    assert r.exit_code == 1, r.output
    assert log_prefetch._jobs == {}                               # cancelled when the command ended
    threads = list(log_prefetch._cancelled)
    assert threads
    for t in threads:
        t.join(5)
        assert not t.is_alive()
    assert parsed == []
    log_prefetch._finish()


@pytest.mark.parametrize("text", [
    _many_rows(3000),
    _many_rows(3000).replace("\n", "\r\n"),
    "\ufeff" + _many_rows(3000),
    _many_rows(1500) + "\n\n\n" + _many_rows(1500).split("\n", 1)[1] + "\n\n",
])
def test_the_parse_in_pieces_is_the_parse_in_one(text):
    from calculators.log_csv import read_csv_arrow

    data = text.encode("utf-8")
    whole = read_csv_arrow(data)
    pieces = read_csv_arrow(data, stop=lambda: False, piece_size=4096)
    assert whole is not None and pieces is not None
    assert pieces[0].equals(whole[0]) and pieces[1:] == whole[1:]
    assert read_csv_arrow(data, stop=lambda: True, piece_size=4096) is None     # stopped before a piece


def test_a_ragged_row_in_a_later_piece_is_still_refused():
    from calculators.log_csv import read_csv_arrow

    data = (_many_rows(3000) + "R9,node\n" + _many_rows(10).split("\n", 1)[1]).encode()
    assert read_csv_arrow(data) is None
    assert read_csv_arrow(data, stop=lambda: False, piece_size=4096) is None


def _table(n: int):
    import pyarrow as pa

    starts = [f"2027-02-01T00:00:{i % 60:02d}Z" for i in range(n)]
    return pa.table({"id": [f"X{i}" for i in range(n)], "scope": ["node"] * n, "start": starts}), \
        {"id": "id", "scope": "scope", "start": "start"}


def test_column_conversion_stops_between_columns_and_leaves_no_thread():
    from calculators.log_csv import convert_columns

    table, names = _table(60_000)
    every = convert_columns(table, names, ("id", "scope"), ("start",))
    assert set(every) == {("text", "id"), ("text", "scope"), ("times", "start")}
    asked = []

    def stop() -> bool:                     # says stop once each thread took a column
        asked.append(1)
        return len(asked) > 2

    some = convert_columns(table, names, ("id", "scope"), ("start",), stop=stop)
    assert 0 < len(some) < 3 and set(some) < set(every)
    assert not [t for t in threading.enumerate() if t.name == "slakit-columns"]


def test_a_failing_column_conversion_is_raised_in_the_caller(monkeypatch):
    import calculators.log_csv as log_csv

    table, names = _table(60_000)

    def boom(col):
        raise RuntimeError("conversion failed")

    monkeypatch.setattr(log_csv, "fast_times", boom)
    with pytest.raises(RuntimeError, match="conversion failed"):
        log_csv.convert_columns(table, names, ("id",), ("start",))


def test_an_exit_without_teardown_does_not_wait_for_a_cancelled_reading(monkeypatch):
    class Stuck:
        def is_alive(self) -> bool:
            return True

        def join(self, timeout=None):
            raise AssertionError("the exit waited for the reading")

    monkeypatch.setattr(log_prefetch, "_cancelled", [Stuck()])
    monkeypatch.setattr(log_prefetch, "_join_at_exit", True)
    with pytest.raises(AssertionError, match="waited"):
        log_prefetch._finish()                 # the interpreter's own exit waits for it
    monkeypatch.setattr(log_prefetch, "_cancelled", [Stuck()])
    log_prefetch.exit_without_teardown()       # what slakit.cli.quick_exit says before os._exit
    log_prefetch._finish()
    assert not log_prefetch._join_at_exit


@pytest.mark.parametrize("change", ["grows", "shrinks"])
def test_a_file_that_changes_size_while_read_is_read_as_it_is_then(tmp_path, monkeypatch, change):
    """The bytes go straight into a buffer of the size the file had when opened: a file that
    grows while read has its further bytes appended, one that shrinks is cut to what was read;
    the identity taken at the open then differs from the file's, so the loader reads it again."""
    path = tmp_path / "log.csv"
    path.write_bytes(b"a" * 4096)
    monkeypatch.setattr(log_prefetch, "CHUNK", 1024)
    real_open = os.fdopen
    later = b"b" * 9000 if change == "grows" else b"a" * 2048

    def fdopen(fd, *args, **kwargs):
        f = real_open(fd, *args, **kwargs)
        real_readinto = f.readinto
        calls = []

        class Reader:
            def __enter__(self):
                return self

            def __exit__(self, *exc):
                f.close()

            def readinto(self, view):
                if not calls:         # the file is rewritten after its size was taken
                    calls.append(1)
                    with open(path, "r+b") as w:
                        w.write(later)
                        w.truncate(len(later))
                return real_readinto(view)

            def read(self, size):
                return f.read(size)

        return Reader()

    monkeypatch.setattr(log_prefetch.os, "fdopen", fdopen)
    data, ident = log_prefetch._read_regular(str(path))
    assert bytes(data) == later
    assert ident[2] == 4096


def test_the_digest_is_the_files_sha256_whether_its_thread_ran_or_not(write, lc):
    import hashlib

    data = bytearray(b"id,scope\n" + b"x" * 100_000)
    want = hashlib.sha256(data).hexdigest()
    started = log_prefetch.Digest(data).start()
    assert started.hexdigest() == want and started.hexdigest() == want
    assert started._data is None                     # the buffer is let go once hashed
    assert log_prefetch.Digest(data).hexdigest() == want       # never started: hashed when asked
    path = write("log.csv", HEADER + "\n".join(ROWS) + "\n")
    log_prefetch.start(path)
    log = inc.load_incidents(path, lc)                 # the prefetched log: its digest under way
    assert log.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert log.with_frame(log.frame).sha256 == log.sha256


@pytest.mark.parametrize("prefetched", [True, False])
def test_a_log_read_without_its_sha256_is_never_hashed(write, lc, monkeypatch, prefetched):
    path = write("log.csv", HEADER + "\n".join(ROWS) + "\n")
    started = []
    real_start = log_prefetch.Digest.start
    monkeypatch.setattr(log_prefetch.Digest, "start", lambda self: started.append(self) or real_start(self))
    monkeypatch.setattr(inc.hashlib, "sha256", lambda *a: pytest.fail("the log was hashed"))
    if prefetched:
        log_prefetch.start(path)
    log = inc.load_incidents(path, lc, sha256=False)
    assert log.sha256 is None and not started
    same(log, inc.load_incidents(path, lc, sha256=False))
    monkeypatch.undo()
    if prefetched:
        log_prefetch.start(path)
    assert inc.load_incidents(path, lc).sha256 is not None           # asked for by default
    assert started == [] and (not prefetched or log_prefetch.take(path) is None)


def test_the_credits_table_and_csv_leave_the_log_unhashed_and_the_json_shows_it(tmp_path, monkeypatch):
    import hashlib
    import json

    from click.testing import CliRunner

    from slakit.cli import main

    examples = os.path.join(os.path.dirname(__file__), "..", "..", "examples")
    contract, path = os.path.join(examples, "gb200-contract.yaml"), os.path.join(examples, "gb200-incidents-2027Q1.csv")
    asked = []
    real = inc.load_incidents
    monkeypatch.setattr(inc, "load_incidents", lambda *a, **k: asked.append(k.get("sha256", True)) or real(*a, **k))
    for fmt in ("table", "csv", "json"):
        out = tmp_path / f"out.{fmt}"
        r = CliRunner().invoke(main, ["credits", contract, str(path), "--month", "2027-02", "--format", fmt,
                                      "-o", str(out), "--no-progress"])
        assert r.exit_code == 0, r.output
    assert asked == [False, False, True]
    doc = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    with open(path, "rb") as f:
        assert doc["incidents_sha256"] == hashlib.sha256(f.read()).hexdigest()


def test_a_log_larger_than_memory_is_a_coded_problem(write, lc, monkeypatch):
    path = write("log.csv", HEADER + ROWS[0] + "\n")
    monkeypatch.setattr(log_prefetch, "_read_regular", lambda *a, **k: None)      # (the reading gave up)

    def no_memory(self):
        raise MemoryError

    monkeypatch.setattr(type(path), "read_bytes", no_memory)
    with pytest.raises(InputError) as exc:
        inc.load_incidents(path, lc)
    (p,) = exc.value.problems
    assert p.code == "log_too_large" and p.file == str(path) and "split the log" in p.fix
