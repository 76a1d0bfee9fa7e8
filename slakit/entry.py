"""The `slakit` program's first lines: the console script and `python -m slakit` start here.

Importing `slakit.cli` (click and every area's commands) takes a fifth of a second; a Ctrl-C
in that time would otherwise end in a traceback. It ends as a Ctrl-C during a command does:
`Aborted!` on stderr and exit 1.
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


def run() -> NoReturn:
    settle_environment()
    try:
        from slakit.cli import run as program
    except KeyboardInterrupt:
        sys.stderr.write("\nAborted!\n")
        sys.stderr.flush()
        raise SystemExit(1) from None
    program()
