"""The one `slakit` command. Each area registers its own subcommands.

A command's area module is imported only when that command is run (`COMMAND_MODULES`,
`GuardedGroup.get_command`); area modules only import click at import time, and heavy
libraries (pandas, reportlab) are imported inside the commands, so `slakit validate` starts fast.
Exit codes: 0 success, 1 input judged bad (invalid contract, failed check), 2 usage error.
"""

from __future__ import annotations

import importlib
from typing import Any, NoReturn

import click

from slakit import __version__

# Modules that define `register(group: click.Group) -> None`, and the top-level commands each
# adds (tests/test_cli_lazy.py checks the names against what the modules register). A
# command's modules are imported when the command is asked for, not before: `slakit credits`
# imports none of the other areas' command modules, so it starts (and begins reading its log)
# sooner; `slakit --help` and the command table load them all.
COMMAND_MODULES = {
    "calculators.cli": ("credits", "explain"),
    "acceptance.security.cli": ("security",),
    "slaschema.cli": ("validate", "show", "schema", "templates", "init"),
    "acceptance.slurm_cli": ("accept",),
    "calculators.watch_cli": ("watch",),
    "acceptance.cli": ("accept",),
    "acceptance.cli_isolate": ("accept",),
    "slaschema.lint.cli": ("lint",),
    "calculators.simulate.cli": ("simulate",),
    "calculators.compare_cli": ("compare",),
    "calculators.reconcile_cli": ("reconcile",),
    "acceptance.parsers.cli": ("parse",),
    "calculators.importers.cli": ("import",),
    "calculators.reports.cli": ("draft", "review"),
    "calculators.claim_cli": ("claim",),
    "calculators.goodput.cli": ("goodput",),
    "slakit.completion": ("completion",),
}


class GuardedGroup(click.Group):
    """The top-level group: an exception no command turned into a coded problem ends as one
    line `... [unexpected_error]` and exit 1, never a traceback (SLAKIT_DEBUG=1 shows it).

    Its commands are loaded lazily (`COMMAND_MODULES`): `get_command` imports the modules of
    the command asked for and registers them; `list_commands` names every command without
    importing any. Code walking the commands uses those two (click's own interface), or
    `load_all()` first."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._loaded: set[str] = set()

    def _load(self, modules) -> None:
        new = [name for name in modules if name not in self._loaded]
        for name in new:
            try:
                importlib.import_module(name).register(self)
            except Exception as exc:  # noqa: BLE001 - a broken install: one coded line, not a traceback
                _unloadable(name, exc)
            self._loaded.add(name)
        if new:                 # the commands just registered get the input-error reporter
            _report_input_errors(self)

    def load_all(self) -> click.Group:
        """Every command registered (for walking `self.commands`); returns the group."""
        self._load(COMMAND_MODULES)
        return self

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *(n for names in COMMAND_MODULES.values() for n in names)})

    def get_command(self, ctx: click.Context, cmd_name: str):
        wanted = [m for m, names in COMMAND_MODULES.items() if cmd_name in names]
        if wanted:
            self._load(wanted)
        return super().get_command(ctx, cmd_name)

    def resolve_command(self, ctx: click.Context, args: list[str]):
        """As click's, but a name that is no command is a usage error that names the commands
        it is close to (`slakit credit`: did you mean 'credits'?), with its code."""
        name = args[0] if args else ""
        if args and not name.startswith("-") and not ctx.resilient_parsing and self.get_command(ctx, name) is None:
            import difflib

            from slaschema.textsafe import terminal_text

            close = difflib.get_close_matches(name, self.list_commands(ctx), n=3, cutoff=0.6)
            hint = f"did you mean {' or '.join(repr(c) for c in close)}? " if close else ""
            ctx.fail(f"No such command {terminal_text(name)!r}; {hint}`slakit --help` lists the commands "
                     "[unknown_command]")
        return super().resolve_command(ctx, args)

    def invoke(self, ctx: click.Context):
        import os
        import sys

        from slaschema.errors import InputError

        old_term = _sigterm_as_interrupt()
        try:
            return super().invoke(ctx)
        except click.exceptions.BadParameter as exc:
            _path_code(exc)
            raise
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort, SystemExit,
                KeyboardInterrupt):
            raise
        except InputError as exc:
            from slaschema.cli import exit_on_input_error

            exit_on_input_error(exc)
        except OSError as exc:
            if _output_failed(exc):
                raise           # a closed pipe: click ends quietly, exit 1; a full disk: `run`
            _unexpected(exc)
        except Exception as exc:  # noqa: BLE001 - the last guard; the type and a cut message are shown
            engine = sys.modules.get("calculators.engine")
            if engine is not None and isinstance(exc, engine.EngineError):
                text = str(exc)      # a message with its own code ([period_out_of_range]) keeps it
                click.echo(f"error: {text}" + ("" if text.endswith("]") else " [log_out_of_range]"), err=True)
                sys.exit(1)
            _unexpected(exc)
        finally:
            # a log read in the background that the command did not take (it stopped early: a
            # bad contract, option or output) is not read on (calculators.log_prefetch)
            prefetch = sys.modules.get("calculators.log_prefetch")
            if prefetch is not None:
                prefetch.cancel()
            _restore_sigterm(old_term)


def _unloadable(module: str, exc: Exception) -> NoReturn:
    """A command's module that cannot be imported (a file missing or broken, a library
    absent): one line `error: ... [command_unavailable]` naming the command, exit 1
    (SLAKIT_DEBUG=1: the traceback). It happens wherever the command is looked up: running it,
    its `--help`, `slakit --help` (which loads them all) and shell completion."""
    import os
    import sys

    if os.environ.get("SLAKIT_DEBUG"):
        raise exc
    names = ", ".join(f"'{n}'" for n in COMMAND_MODULES.get(module, ()))
    click.echo(f"error: the slakit command {names} could not be loaded: module {module} failed to import "
               f"({_exception_text(exc)}); the installation is incomplete or broken: reinstall slakit "
               "with its dependencies (scripts/setup) [command_unavailable]", err=True)
    sys.exit(1)


def _unexpected(exc: Exception) -> NoReturn:
    """One line `error: ... [unexpected_error]`, exit 1 (SLAKIT_DEBUG=1: the traceback)."""
    import os
    import sys

    if os.environ.get("SLAKIT_DEBUG"):
        raise exc
    click.echo(f"error: the input could not be processed ({_exception_text(exc)}); "
               "check the files and values given [unexpected_error]", err=True)
    sys.exit(1)


def _exception_text(exc: Exception) -> str:
    """`Type: message` of an exception for a one-line error: no escapes, at most 200 characters
    of the message."""
    from slaschema.textsafe import cut, terminal_text

    return f"{type(exc).__name__}: {cut(terminal_text(str(exc)), 200)}"


def _output_failed(exc: BaseException) -> bool:
    """Whether `exc` is standard output that could not be written: a pipe whose reader has
    gone (`| head`), or a full disk or file-size limit (`> /dev/full`). Known by a frame of
    the failing write holding the stream itself (click.echo's `file`, json.dump's `fp`) or
    a rich console writing to it."""
    import errno
    import sys

    if not isinstance(exc, OSError) or getattr(exc, "filename", None) is not None:
        return False
    if exc.errno not in (errno.EPIPE, errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC), errno.EFBIG):
        return False
    streams = [s for s in (sys.stdout, sys.__stdout__) if s is not None]
    streams += [getattr(s, "buffer", None) for s in list(streams)]
    ids = {id(s) for s in streams if s is not None}
    tb = exc.__traceback__
    while tb is not None:
        for v in tb.tb_frame.f_locals.values():
            if id(v) in ids or (type(v).__module__.startswith("rich.") and id(getattr(v, "file", None)) in ids):
                return True
        tb = tb.tb_next
    return False


def _report_output_failed(exc: OSError) -> None:
    """The one line of a standard output that could not be written (not a closed pipe)."""
    import sys

    from slaschema.cliconv import unwritable_fix

    try:
        sys.stderr.write(f"error: standard output could not be written ({exc.strerror or type(exc).__name__}); "
                         f"{unwritable_fix(exc)} (-o FILE) [output_unwritable]\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _raise_interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def _sigterm_as_interrupt():
    """SIGTERM (a scheduler's kill, `timeout`, systemd stop) ends a command like Ctrl-C: the
    `with` blocks unwind, so an `-o FILE` being written leaves no temporary file, and the
    command ends with `Aborted!` and exit 1. Only where SIGTERM still has its default action
    (a process that set its own handler keeps it); returns the handler to restore."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None
    try:
        if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
            return None
        return signal.signal(signal.SIGTERM, _raise_interrupt)
    except (ValueError, OSError):
        return None


def _restore_sigterm(old) -> None:
    if old is not None:
        import signal

        signal.signal(signal.SIGTERM, old)


@click.group(cls=GuardedGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "--version", "-V", prog_name="slakit")
@click.option("--max-nodes", type=click.IntRange(min=1), default=None, metavar="N",
              help="Node budget: the most nodes one topology, incident-log row or hostlist may name "
              "(default 1,000,000; also SLAKIT_MAX_NODES).")
@click.option("--max-file-size", type=click.IntRange(min=1), default=None, metavar="BYTES",
              help="Largest file a contract may name (inventory, drill result, minimums, history; "
              "default 64 MiB; also SLAKIT_MAX_FILE_BYTES).")
@click.option("--raw-csv", is_flag=True, default=False,
              help="Write CSV cells as they are (by default a cell starting with = + - @ TAB or CR gets a "
              "leading ' so spreadsheets do not run it as a formula; also SLAKIT_RAW_CSV=1).")
def main(max_nodes: int | None, max_file_size: int | None, raw_csv: bool) -> None:
    """Contract and SLA compliance toolkit for GPU clusters.

    Contracts as YAML, acceptance testing at handover, and SLA reviews from incident logs.
    """
    from calculators.memory import tune_memory
    from slaschema import hostlist, safefiles, textsafe

    _check_limit_env("SLAKIT_MAX_NODES", "--max-nodes", max_nodes)
    _check_limit_env("SLAKIT_MAX_FILE_BYTES", "--max-file-size", max_file_size)
    hostlist.set_max_nodes(max_nodes)
    safefiles.set_max_file_bytes(max_file_size)
    textsafe.set_raw_csv(True if raw_csv else None)

    tune_memory()        # big incident logs: reuse freed memory, no huge pages (calculators/memory.py)


def _check_limit_env(name: str, option: str, given: int | None) -> None:
    """A limit's environment variable (SLAKIT_MAX_NODES, SLAKIT_MAX_FILE_BYTES) that is set but
    no whole number of at least 1 (`2,000,000`, `2e6`, `64MiB`) is a usage error naming it: it
    is not dropped for the default, which the user believed raised. The option, when given,
    is what counts."""
    import os

    value = os.environ.get(name)
    if given is not None or value is None or value == "":
        return
    if not (value.isascii() and value.isdigit() and int(value) > 0):
        raise click.UsageError(f"{name}={value!r} is not a whole number of at least 1; write digits only "
                               f"(e.g. {name}=2000000), unset it, or give {option} [env_invalid]")


def _report_input_errors(group: click.Group) -> None:
    """Every subcommand prints the problems of an `InputError` and exits 1 (one place:
    `slaschema.cli.report_input_errors`)."""
    from slaschema.cli import report_input_errors

    for cmd in group.commands.values():
        if cmd.callback is not None and not getattr(cmd.callback, "reports_input_errors", False):
            cmd.callback = report_input_errors(cmd.callback)
        if isinstance(cmd, click.Group):
            _report_input_errors(cmd)


# the codes of click's checks of a path argument or option (`click.Path`), by the end of its
# message: a folder named where a file is asked for, and the like, are usage errors (exit 2)
# with a code, as slakit's own are (click's English messages; a translated one keeps none)
_PATH_CODES = (("does not exist.", "file_not_found"), ("is a directory.", "not_a_file"),
               ("is a file.", "not_a_folder"), ("is not readable.", "not_readable"),
               ("is not writable.", "not_writable"))


def _path_code(exc: click.exceptions.BadParameter) -> None:
    """Add the code of click's path check that failed to `exc`'s message (in place)."""
    if not isinstance(getattr(exc.param, "type", None), click.Path) or exc.message.rstrip().endswith("]"):
        return
    for end, code in _PATH_CODES:
        if exc.message.endswith(end):
            exc.message = f"{exc.message} [{code}]"
            return


def run() -> NoReturn:
    """The `slakit` program (the console script and `python -m slakit`): `main`, then
    `quick_exit` with its status."""
    import errno

    try:
        main.main(prog_name="slakit")
    except SystemExit as e:
        quick_exit(e.code)
    except OSError as e:        # --help or --version, or a command's output, into a full disk
        if not _output_failed(e):
            raise
        if e.errno != errno.EPIPE:
            _report_output_failed(e)
        quick_exit(1)
    quick_exit(0)       # (click's standalone mode always ends in SystemExit)


def quick_exit(code: Any = 0) -> NoReturn:
    """End the process with `code` as the interpreter's own exit would, without its tear-down.

    What an exit does that anyone can see is done, in the interpreter's order: the threads
    that are not daemons are joined (and thread pools finish their work), the `atexit`
    functions run, standard output and error are flushed; a code that is not an int is
    printed to standard error and the status is 1, and a standard output that cannot be
    flushed makes the status 120, as Python's (a full disk with one line saying so, a closed
    pipe quietly). What is left out is freeing
    every module and object one by one, which after a large incident log took 0.13-0.15 s
    of a 3 s `credits` run (and as long after `slakit --help`: it is the modules, not the
    data); the operating system takes the memory back at once."""
    import atexit
    import errno
    import os
    import sys
    import threading

    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:
        try:
            sys.stderr.write(f"{code}\n")
        except (OSError, ValueError, AttributeError):
            pass
        status = 1
    shutdown = getattr(threading, "_shutdown", None)
    if shutdown is not None:
        shutdown()
    prefetch = sys.modules.get("calculators.log_prefetch")
    if prefetch is not None:        # a log read in the background is not waited for: nothing follows
        prefetch.exit_without_teardown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError) as exc:
            if stream is sys.stdout and status == 0:
                status = 120
                if isinstance(exc, OSError) and exc.errno != errno.EPIPE:
                    _report_output_failed(exc)      # (the interpreter says so too; a closed pipe: quietly)
    os._exit(status & 0xFF)         # the status the OS keeps of any int
