"""The `slakit` program's first lines: the console script and `python -m slakit` start here.

Importing `slakit.cli` (click and every area's commands) takes a fifth of a second; a Ctrl-C
in that time would otherwise end in a traceback. It ends as a Ctrl-C during a command does:
`Aborted!` on stderr and exit 1.

A command that reads an incident log (`credits`, `explain`) has it read in the background from
here on (`calculators.log_prefetch`), before click and the command's modules are imported: the
file's name is found in the command line by `early_log`, which knows which of the commands'
options take no value (`EARLY_LOG`, held to the commands' own definitions by a test). The read
then starts 50-70 ms sooner, while one core would otherwise wait on the imports alone. A name
it gets wrong costs no more than that reading: the command starts its own reading of the log
it was given (or none), and a reading no command takes is cancelled when the command ends.
"""

from __future__ import annotations

import os
import sys
from typing import NoReturn


def settle_environment() -> None:
    """What every slakit process sets before its imports: pydantic looks its plugins up, at
    the first model class, by reading the entry points of every installed distribution
    (25-40 ms at each start, for the contract's models, which no plugin is meant to observe):
    `PYDANTIC_DISABLE_PLUGINS=__all__` unless the variable is set (set it empty to have the
    installed plugins loaded). Child processes inherit it; none of those slakit runs uses
    pydantic's plugins."""
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")


# the commands whose second argument is an incident log, with their options that take no value
# (each other option takes one: in the next argument, or after `=`; -oFILE has it attached)
EARLY_LOG = {"credits": frozenset({"--skip-bad-rows", "--no-progress"}),
             "explain": frozenset({"--skip-bad-rows", "--no-progress"})}
# the program's own options before the command's name
GLOBAL_FLAGS = frozenset({"--raw-csv"})
GLOBAL_VALUES = frozenset({"--max-nodes", "--max-file-size"})
HELP = frozenset({"-h", "--help"})


def early_log(argv: list[str]) -> str | None:
    """The incident log `argv` (the program's arguments) names, when they run a command of
    `EARLY_LOG` with both its arguments given; None otherwise (help asked for, another command,
    an option this does not know before the command's name)."""
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        a = argv[i]
        if a in GLOBAL_FLAGS or ("=" in a and a.split("=", 1)[0] in GLOBAL_VALUES):
            i += 1
        elif a in GLOBAL_VALUES:
            i += 2
        else:                            # --help, --version, or not an option of the program
            return None
    if i >= len(argv) or argv[i] not in EARLY_LOG:
        return None
    flags = EARLY_LOG[argv[i]]
    positional: list[str] = []
    rest = iter(argv[i + 1:])
    for a in rest:
        if a == "--":
            positional.extend(rest)
            break
        if a in HELP or (a.startswith("-h") and not a.startswith("--")):     # (-ho: help, then -o)
            return None
        if a.startswith("-") and a != "-":
            if a not in flags and "=" not in a and (a.startswith("--") or len(a) == 2):
                next(rest, None)         # the option's value
            continue
        positional.append(a)
    return positional[1] if len(positional) >= 2 and positional[1] not in ("", "-") else None


def _start_reading(argv: list[str]) -> None:
    """Begin the background reading of the log `argv` names (`early_log`), with the memory
    settings applied first (before the reading's threads and numpy: `calculators.memory`)."""
    log = early_log(argv)
    if log is None:
        return
    try:
        from calculators import log_prefetch
        from calculators.memory import tune_memory

        tune_memory()
        log_prefetch.start(log)
    except Exception:  # noqa: BLE001 - a broken install: the command reports it when it loads
        return


def run() -> NoReturn:
    settle_environment()
    try:
        _start_reading(sys.argv[1:])
        from slakit.cli import run as program
    except KeyboardInterrupt:
        sys.stderr.write("\nAborted!\n")
        sys.stderr.flush()
        raise SystemExit(1) from None
    program()
