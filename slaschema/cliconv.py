"""Conventions every `slakit` command shares, in one place.

- `output_option` / `output_format` / `write_output`: `-o/--output FILE`, written atomically
  (temp file + rename), and refused (usage error, exit 2, `[output_extension]`) when the file's
  extension belongs to another format than the one written, or (`[output_unwritable]`, exit 1)
  when it could not be written, as the option is read (`check_writable`); a name of a well-known
  binary or office format (`.docx`, `.zip`, ...) is refused for every format (`refuse_binary_name`).
- `contract_argument`: the contract as the first positional argument; an older `--contract FILE`
  option can stay as a deprecated alias that prints one notice line on stderr (`deprecated_alias`
  the same for any renamed option, e.g. `--tz` of `--assume-tz`).
- `Progress`: progress with an ETA on stderr (never stdout) for long work.
- `DURATION`: an option's duration with a unit, as contracts write them (90s, 5m, 1h, PT5M).

The period options (`--month`, `--quarter`, `--period`) live in `calculators.period_option`,
beside the period arithmetic they check against.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Union

import click

from slaschema.textsafe import shown_name

# what a command writes: text, bytes, bytes pieces in order, or a function handing its
# pieces to the `write` it is given
OutputData = Union[str, bytes, "list[bytes | memoryview]", Callable[[Callable[..., None]], None]]

# Format -> the file extensions that hold it (first: the one to suggest).
FORMAT_EXTENSIONS: dict[str, tuple[str, ...]] = {
    "table": (".txt", ".text"),
    "json": (".json",),
    "csv": (".csv",),
    "pdf": (".pdf",),
    "md": (".md", ".markdown"),
    "html": (".html", ".htm"),
    "junit": (".xml",),
    "yaml": (".yaml", ".yml"),
    "png": (".png",),
}
_FORMAT_OF = {ext: fmt for fmt, exts in FORMAT_EXTENSIONS.items() for ext in exts}

# Extensions of well-known binary and office formats. No slakit format is written into such a
# file (the one slakit writes itself, .png, is a format above and checked as one): a text table,
# which may otherwise go to any name no format uses (.log, .out), is refused there too.
BINARY_EXTENSIONS: dict[str, str] = {
    ".docx": "a Word document", ".doc": "a Word document", ".xlsx": "an Excel workbook",
    ".xls": "an Excel workbook", ".pptx": "a PowerPoint presentation", ".ppt": "a PowerPoint presentation",
    ".odt": "an OpenDocument text", ".ods": "an OpenDocument spreadsheet",
    ".odp": "an OpenDocument presentation", ".rtf": "a Rich Text document", ".zip": "a zip archive",
    ".gz": "a gzip file", ".tar": "a tar archive", ".png": "a PNG image", ".jpg": "a JPEG image",
    ".jpeg": "a JPEG image", ".gif": "a GIF image", ".svg": "an SVG image", ".epub": "an EPUB book",
}

OUTPUT_HELP = "Write to FILE (atomically) instead of stdout; its extension must match the format."


def output_option(*, required: bool = False, dest: str = "output", help: str | None = None, default=None,
                  show_default: bool = False, fixed: str | None = None):
    """The `-o/--output FILE` option of every command that writes a file. `fixed`: the one
    format the command writes (`csv`), checked against the extension as the option is read."""
    def check(ctx, param, value):
        if fixed is not None and value is not None:
            output_format(value, fixed, (fixed,))
        check_writable(value)
        mark_output(ctx, param)
        return value

    # a default only where there is one: an explicit default=None is a value given to click
    # 8.3 and later, which then never finds a required -o missing
    given = {} if default is None else {"default": default}
    return click.option("-o", "--output", dest, type=click.Path(dir_okay=False), required=required,
                        show_default=show_default, metavar="FILE", help=help or OUTPUT_HELP,
                        callback=check, **given)


def extra_output(fmt: str):
    """The click callback of an extra file of one format a command writes beside its `-o`
    (`review --json-out`, `claim letter --ledger`, `import lanl --inventory-out`): refused as
    the option is read when its extension belongs to another format (`[output_extension]`,
    exit 2) or it could not be written (`[output_unwritable]`), as `-o` is."""
    def check(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
        if value is None or value == "-":
            return value
        suffix = _suffix(value)
        known = _FORMAT_OF.get(suffix)
        option = max(param.opts, key=len) if param.opts else param.name
        if suffix and known is not None and known != fmt:
            raise click.UsageError(f"{option} {value}: a {suffix} file does not hold {fmt}; name it "
                                   f"*{FORMAT_EXTENSIONS[fmt][0]} [output_extension]")
        refuse_binary_name(option, value, fmt)
        check_writable(value)
        mark_output(ctx, param)
        return value

    return check


def mark_output(ctx: click.Context | None, param: click.Parameter) -> None:
    """Note `param` as a file the command writes (`refuse_output_is_input`)."""
    if ctx is not None and param.name:
        ctx.meta.setdefault("slakit.outputs", set()).add(param.name)


def refuse_output_is_input(ctx: click.Context) -> None:
    """A usage error (`[output_is_input]`, exit 2) when a file the command writes (`-o`,
    `--json-out`, ...) is one of the files it reads (`credits C LOG -o LOG`): the atomic
    write would replace the input with the output; or when two of its outputs name one file
    (the second would replace the first). Checked once every option is read."""
    import os

    outputs = ctx.meta.get("slakit.outputs") or ()
    written = [(p, ctx.params.get(p.name)) for p in ctx.command.params if p.name in outputs]
    written = [(p, v) for p, v in written if isinstance(v, str) and v != "-"]
    seen: dict[str, click.Parameter] = {}
    for param, out in written:      # two outputs in one file (import lanl -o X --inventory-out X)
        real = os.path.realpath(out)
        if real in seen and (os.path.isfile(real) or not os.path.exists(real)):     # /dev/null twice is fine
            first = seen[real]
            raise click.UsageError(f"{max(param.opts, key=len)} {shown_name(out)}: is also "
                                   f"{max(first.opts, key=len)}; each output needs a file of its own; "
                                   "name another file [output_is_input]")
        seen[real] = param
    written = [(p, v) for p, v in written if os.path.isfile(v)]
    if not written:
        return
    for param in ctx.command.params:
        if param.name in outputs or not isinstance(param.type, click.Path):
            continue
        value = ctx.params.get(param.name)
        for read in (value if isinstance(value, (list, tuple)) else (value,)):
            if not isinstance(read, str) or not os.path.isfile(read):
                continue
            for out_param, out in written:
                try:
                    same = os.path.samefile(read, out)
                except OSError:
                    continue
                if same:
                    option = max(out_param.opts, key=len) if out_param.opts else out_param.name
                    what = (param.human_readable_name if isinstance(param, click.Argument)
                            else max(param.opts, key=len))
                    raise click.UsageError(f"{option} {shown_name(out)}: is also the {what} the command reads "
                                           f"({shown_name(read)}); writing it would replace the input; "
                                           "name another file [output_is_input]")


def _suffix(output: str) -> str:
    return Path(output).suffix.lower()


def refuse_binary_name(option: str, output: str, fmt: str | None) -> None:
    """A usage error (`[output_extension]`, exit 2) when `output` names a file of a well-known
    binary or office format (`BINARY_EXTENSIONS`: `x.docx`, `x.csv.gz`) that no slakit format
    is: `fmt` would be written into it as it is (a .docx holding a plain-text table)."""
    suffix = _suffix(output)
    what = BINARY_EXTENSIONS.get(suffix)
    if what is None or suffix in _FORMAT_OF:
        return
    want = FORMAT_EXTENSIONS.get(fmt or "", ("",))[0]
    hint = f"name it *{want}" if want else "give another name"
    raise click.UsageError(f"{option} {output}: a {suffix} file is {what}, which does not hold "
                           f"{'a text table' if fmt == 'table' else fmt}; "
                           f"{hint} [output_extension]")


def output_format(output: str | None, fmt: str | None, formats: tuple[str, ...] | list[str], *,
                  explicit: bool = True, default: str | None = None) -> str | None:
    """The format to write to `output`, checked against the file's extension.

    `explicit`: the user named `fmt` (`--format`); otherwise the extension chooses among
    `formats` and `default` is used for stdout. A usage error (exit 2) when the extension
    belongs to another format, or, with the format inferred, to none this command writes.
    A name without an extension (or `-`, stdout) takes the format as given.
    """
    chosen = _output_format(output, fmt, formats, explicit=explicit, default=default)
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.meta[_WRITTEN_FORMAT] = chosen
    return chosen


_WRITTEN_FORMAT = "slakit.written_format"


def written_format() -> str | None:
    """The format the running command chose with `output_format` (None before or without)."""
    ctx = click.get_current_context(silent=True)
    return ctx.meta.get(_WRITTEN_FORMAT) if ctx is not None else None


def _output_format(output: str | None, fmt: str | None, formats: tuple[str, ...] | list[str], *,
                   explicit: bool, default: str | None) -> str | None:
    if explicit and fmt is None:
        explicit = False
    if output is None or output == "-":
        return fmt if explicit else (fmt or default)
    suffix = _suffix(output)
    known = _FORMAT_OF.get(suffix)
    if explicit:
        if suffix and known is not None and known != fmt:
            want = FORMAT_EXTENSIONS.get(fmt, ("",))[0]
            hint = f"name it *{want}" if want else "give another name"
            if known in formats:
                hint += f" or give --format {known}"
            raise click.UsageError(f"-o {output}: a {suffix} file does not hold --format {fmt}; {hint} "
                                   "[output_extension]")
        refuse_binary_name("-o", output, fmt)
        return fmt
    if not suffix or (known is None and (fmt or default) == "table"):
        refuse_binary_name("-o", output, fmt or default)
        return fmt or default          # a text table may go to any name (.log, .out, ...), no .docx
    if known in formats:
        return known
    exts = ", ".join(FORMAT_EXTENSIONS[f][0] for f in formats if f in FORMAT_EXTENSIONS)
    raise click.UsageError(f"-o {output}: this command does not write {suffix} files; name the file with one of "
                           f"{exts} [output_extension]")


def fmt_given(ctx: click.Context, name: str = "fmt") -> bool:
    """Whether the user named the option `name` (not its default)."""
    source = ctx.get_parameter_source(name)
    return source is not None and source is not click.core.ParameterSource.DEFAULT


def write_output(output: str | Path, data: OutputData, *, announce: bool = False,
                 written: Callable[[], None] | None = None) -> None:
    """Write `data` (text, bytes, bytes pieces in order, or a function `make(write)` that
    hands its pieces to `write` as it makes them) to `output` atomically; `written` is
    called once the file is in place, then `announce` prints `wrote FILE` on stderr. A file that cannot be written is an `output_unwritable` input
    error (`unwritable`). With a function, each batch is written as it is made
    (`slaschema.fileio.atomic_writer`); an error it raises itself leaves nothing written and
    is raised as it is."""
    from slaschema.fileio import atomic_writer

    make = data if callable(data) else None
    own: list[OSError] = []           # the errors of the file, not of making the data
    making = False

    def write(pieces) -> None:
        try:
            w.write(pieces)
        except OSError as exc:
            own.append(exc)
            raise

    try:
        with atomic_writer(output) as w:
            making = True
            if make is None:
                write(data)
            else:
                make(write)
            making = False
    except OSError as exc:
        if making and not any(exc is e for e in own):
            raise
        raise unwritable(output, exc) from None
    if written is not None:
        written()
    if announce:
        click.echo(f"wrote {shown_name(output)}", err=True)


def check_writable(output: str | Path | None) -> None:
    """Refuse, as the option is read, an `output` that `write_output` could not write at the
    end (a folder, a name under a file, a folder that takes no new file such as /proc): the
    same `output_unwritable` problem, before any input is read or computed. A file is made
    and removed in the nearest folder that exists to find out; a FIFO or character device is
    left to the write (`fileio.write_atomic` writes into it)."""
    import errno
    import os
    import stat

    from slaschema.fileio import temp_for

    if output is None or str(output) == "-":
        return
    if not str(output):
        from slaschema.errors import InputError, Problem

        err = InputError([Problem("output_unwritable", "names no file (the name is empty)", file="-o/--output",
                                  fix="name the file to write, e.g. -o credits.json, or leave -o out for standard "
                                      "output")])
        err.add_note("nothing written")
        raise err
    path = Path(output)
    try:
        mode = os.stat(path).st_mode
    except OSError:
        mode = None
    if mode is not None and (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)):
        return
    if mode is not None and not stat.S_ISREG(mode):
        raise unwritable(output, OSError(errno.EISDIR if stat.S_ISDIR(mode) else errno.EINVAL,
                                         "is a folder" if stat.S_ISDIR(mode) else "not a regular file"))
    folder = path.parent
    while not os.path.lexists(folder) and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise unwritable(output, OSError(errno.ENOTDIR, os.strerror(errno.ENOTDIR)))
    try:
        fd, probe = temp_for(folder / path.name, suffix=".probe")
    except OSError as exc:
        raise unwritable(output, exc) from None
    os.close(fd)
    os.unlink(probe)


def unwritable_fix(exc: OSError) -> str:
    """What to do about an output (a file, or standard output) that `exc` kept from being written."""
    import errno

    if exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
        return "free space on that disk (or raise the quota), or name a file on another disk"
    if exc.errno == errno.EFBIG:
        return "name a file on a disk or under a limit (ulimit -f) that takes a file this large"
    if exc.errno == errno.ENAMETOOLONG:
        return "give the file a shorter name: at most 255 bytes for the name, 4,096 for the whole path"
    if exc.errno == errno.ENXIO:           # (a FIFO opened for writing that nothing reads)
        return "nothing reads that FIFO: start its reader first, or name a regular file"
    return "name a file in a folder that exists and can be written"


def unwritable(output: str | Path, exc: OSError):
    """The `InputError` of an output file that cannot be written (nothing was written)."""
    from slaschema.errors import InputError, Problem

    err = InputError([Problem("output_unwritable", f"cannot be written ({exc.strerror or type(exc).__name__})",
                              file=str(output), fix=unwritable_fix(exc))])
    err.add_note("nothing written")
    return err


def emit_output(text: OutputData, output: str | None, written: Callable[[], None] | None = None) -> None:
    """`text` (see `write_output`) to stdout, or atomically to `output` with `wrote FILE` on
    stderr; `written` is called once the data is out (before that line: a progress line's
    last stage)."""
    if output and output != "-":
        write_output(output, text, announce=True, written=written)
        return
    if callable(text) or isinstance(text, list):
        def write(pieces) -> None:          # one batch at a time (click writes bytes to the binary stdout)
            if isinstance(pieces, (str, bytes, bytearray, memoryview)):
                pieces = [pieces]
            click.echo(b"".join(p.encode("utf-8") if isinstance(p, str) else p for p in pieces), nl=False)

        if callable(text):
            text(write)
        else:
            write(text)
    else:
        click.echo(text, nl=False)
    if written is not None:
        written()


CONTRACT_HELP = "The contract (YAML) as the first argument."


def contract_argument(*, required: bool = True, alias: str | None = None):
    """The contract as the first positional argument, `CONTRACT`.

    `alias`: an older option name (`--contract`) kept working as a deprecated alias: it prints one
    notice line on stderr; the command receives `contract` and `contract_option` and calls
    `resolve_contract` (naming both is a usage error).
    """
    def decorate(f):
        f = click.argument("contract", required=required and alias is None, type=click.Path(dir_okay=False),
                           metavar="CONTRACT" if required and alias is None else "[CONTRACT]")(f)
        if alias is None:
            return f
        return deprecated_contract_option(alias)(f)

    return decorate


def deprecated_contract_option(alias: str = "--contract"):
    """The hidden `--contract FILE` alias of a command whose contract is (optionally) the first
    positional argument: the command receives `contract_option`, prints one deprecation notice
    line on stderr when it is used, and calls `resolve_contract`."""
    return click.option(alias, "contract_option", type=click.Path(dir_okay=False), hidden=True,
                        callback=_deprecated_contract(alias))


def _deprecated_contract(alias: str):
    return _deprecation_notice(alias, "give the contract as the first argument", "CONTRACT ...")


def _deprecation_notice(alias: str, advice: str, usage: str):
    """The callback of a deprecated option `alias`: when it is given, one line on stderr saying
    so, what to do instead, and the command's usage that way (`slakit credits CONTRACT ...`)."""
    def callback(ctx: click.Context, param: click.Parameter, value):
        if value is not None:
            click.echo(f"slakit: {alias} is deprecated; {advice} "
                       f"(slakit {ctx.command_path.split(' ', 1)[-1]} {usage})", err=True)
        return value

    return callback


def deprecated_alias(alias: str, current: str, dest: str, metavar: str | None = None):
    """The hidden older name `alias` (`--tz`) of the option `current` (`--assume-tz`), kept
    working: the command receives its value as `dest`, one deprecation notice line is printed on
    stderr when it is used, and the command calls `resolve_alias` (the command table lists it as
    "(deprecated: `--tz`)")."""
    return click.option(alias, dest, default=None, hidden=True, metavar=metavar,
                        callback=_deprecation_notice(alias, f"use {current}", f"... {current} ..."))


def resolve_alias(value, alias_value, current: str, alias: str):
    """The value of option `current`, or of its deprecated `alias` (a usage error
    `[option_twice]` when both are given)."""
    if value is not None and alias_value is not None:
        raise click.UsageError(f"give {current} once, not also as {alias} (its deprecated name) [option_twice]")
    return value if value is not None else alias_value


def resolve_contract(contract: str | None, alias_value: str | None, alias: str = "--contract",
                     required: bool = False) -> str | None:
    """The contract from the argument or the deprecated alias (usage error when both or, if
    `required`, neither is given)."""
    if contract is not None and alias_value is not None:
        raise click.UsageError(f"give the contract once: as the first argument, not also as {alias} "
                               "[contract_twice]")
    value = contract if contract is not None else alias_value
    if value is None and required:
        raise click.UsageError("name the contract as the first argument [contract_missing]")
    return value


def progress_wanted(no_progress: bool = False, *, piped: bool = False) -> bool:
    """Progress on stderr unless `--no-progress` or SLAKIT_NO_PROGRESS=1; only when stderr is a
    terminal, unless `piped` (a command whose progress lines are worth keeping in a log)."""
    import os

    if no_progress or os.environ.get("SLAKIT_NO_PROGRESS", "") not in ("", "0"):
        return False
    return piped or bool(getattr(sys.stderr, "isatty", lambda: False)())


def no_progress_option(f):
    """`--no-progress`: no progress lines on stderr (also SLAKIT_NO_PROGRESS=1)."""
    return click.option("--no-progress", "no_progress", is_flag=True,
                        help="No progress lines on stderr (also SLAKIT_NO_PROGRESS=1).")(f)


class Progress:
    """Progress of `total` steps with an ETA, on stderr only.

    On a terminal one line is rewritten in place (at most a few times a second); elsewhere
    (piped, a log file) a line is printed per finished step when `every_step` or else about
    every 10 % and at the end, so logs stay short. Disabled, it does nothing.
    """

    def __init__(self, label: str, total: int, *, enabled: bool = True, every_step: bool = False,
                 stream=None, clock=time.monotonic) -> None:
        self.label = label
        self.total = max(int(total), 0)
        self.enabled = enabled and self.total > 0
        self.stream = stream if stream is not None else sys.stderr
        self.every_step = every_step
        self.clock = clock
        self.t0 = clock()
        self.done = 0
        self._last_draw = -1.0
        self._last_tenth = -1
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def eta_seconds(self) -> float | None:
        if self.done <= 0:
            return None
        elapsed = self.clock() - self.t0
        return elapsed / self.done * (self.total - self.done)

    def line(self, note: str = "") -> str:
        elapsed = self.clock() - self.t0
        eta = self.eta_seconds()
        pct = 100 * self.done // self.total if self.total else 100
        text = f"{self.label}: {self.done}/{self.total} ({pct}%), {_clock(elapsed)} elapsed"
        if self.done < self.total and eta is not None:
            text += f", ETA {_clock(eta)}"
        return text + (f" - {note}" if note else "")

    def step(self, n: int = 1, note: str = "") -> None:
        if not self.enabled:
            return
        self.done = min(self.done + n, self.total)
        finished = self.done >= self.total
        if self.tty:
            now = self.clock()
            if finished or now - self._last_draw >= 0.25:
                self._last_draw = now
                self.stream.write("\r\x1b[2K" + self.line(note) + ("\n" if finished else ""))
                self.stream.flush()
            return
        tenth = 10 * self.done // self.total
        if self.every_step or finished or tenth > self._last_tenth:
            self._last_tenth = tenth
            self.stream.write(self.line(note) + "\n")
            self.stream.flush()

    def close(self) -> None:
        """End a terminal line left open (an interrupted run)."""
        if self.enabled and self.tty and 0 < self.done < self.total:
            self.stream.write("\n")
            self.stream.flush()


def _clock(seconds: float) -> str:
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    m, s = divmod(s, 60)
    if m < 60:
        return f"{m}m{s:02d}s"
    h, m = divmod(m, 60)
    return f"{h}h{m:02d}m"


class DurationType(click.ParamType):
    """A duration with a unit, as in contracts: 90s, 5m, 1h, PT5M."""

    name = "duration"

    def convert(self, value, param, ctx):
        if isinstance(value, timedelta):
            return value
        from pydantic_core import PydanticCustomError

        from slaschema.types import parse_duration

        try:
            return parse_duration(value)
        except PydanticCustomError as exc:
            self.fail(f"{value!r}: {exc.message()}", param, ctx)


DURATION = DurationType()
