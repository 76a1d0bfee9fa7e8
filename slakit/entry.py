"""The `slakit` program's first lines: the console script and `python -m slakit` start here.

Importing `slakit.cli` (click and every area's commands) takes a fifth of a second; a Ctrl-C
in that time would otherwise end in a traceback. It ends as a Ctrl-C during a command does:
`Aborted!` on stderr and exit 1.
"""

from __future__ import annotations

import sys
from typing import NoReturn


def run() -> NoReturn:
    try:
        from slakit.cli import run as program
    except KeyboardInterrupt:
        sys.stderr.write("\nAborted!\n")
        sys.stderr.flush()
        raise SystemExit(1) from None
    program()
