"""The one place security checks touch the machine: files under a root, and commands.

`Host(root=Path("/"))` reads the real machine; `Host(root=tmp_path, run=fake)` reads a fake
tree and answers commands from a table, so every collector runs the same code on both.
Commands are argv lists, never shell strings; each has a timeout.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

DEFAULT_TIMEOUT_S = 20.0


@dataclass(frozen=True)
class CommandResult:
    argv: tuple[str, ...]
    returncode: int | None       # None when the command could not be started or timed out
    stdout: str = ""
    stderr: str = ""
    missing: bool = False        # the program is not installed
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def why(self) -> str:
        if self.missing:
            return f"{self.argv[0]} not found"
        if self.timed_out:
            return f"{' '.join(self.argv)} timed out"
        tail = (self.stderr or self.stdout).strip().splitlines()
        return f"{' '.join(self.argv)} exited {self.returncode}" + (f": {tail[-1][:200]}" if tail else "")


Runner = Callable[[Sequence[str]], CommandResult]


def subprocess_runner(timeout: float = DEFAULT_TIMEOUT_S, extra_path: Sequence[str] = ()) -> Runner:
    """Runs real programs; a program not on PATH (plus sbin dirs) is reported missing."""
    search = os.pathsep.join([os.environ.get("PATH", ""), "/usr/local/sbin", "/usr/sbin", "/sbin", *extra_path])

    def run(argv: Sequence[str]) -> CommandResult:
        argv = tuple(argv)
        exe = shutil.which(argv[0], path=search)
        if exe is None:
            return CommandResult(argv, None, missing=True)
        try:
            proc = subprocess.run([exe, *argv[1:]], capture_output=True, text=True, timeout=timeout,
                                  stdin=subprocess.DEVNULL, errors="replace")
        except subprocess.TimeoutExpired:
            return CommandResult(argv, None, timed_out=True)
        except OSError as exc:
            return CommandResult(argv, None, stderr=str(exc))
        return CommandResult(argv, proc.returncode, proc.stdout, proc.stderr)

    return run


def no_commands(argv: Sequence[str]) -> CommandResult:
    """Runner for a fake tree without a command table: every program is absent."""
    return CommandResult(tuple(argv), None, missing=True)


def table_runner(outputs: dict[str, str | CommandResult]) -> Runner:
    """Runner answering from {program name or 'prog arg ...': stdout or CommandResult}."""

    def run(argv: Sequence[str]) -> CommandResult:
        argv = tuple(argv)
        for key in (" ".join(argv), argv[0]):
            if key in outputs:
                out = outputs[key]
                return out if isinstance(out, CommandResult) else CommandResult(argv, 0, out)
        return CommandResult(argv, None, missing=True)

    return run


@dataclass(frozen=True)
class FileStat:
    path: str
    mode: int                    # st_mode
    uid: int
    gid: int
    is_dir: bool
    is_char_device: bool


class Host:
    """Files under `root` and a command runner; commands run only against the real root."""

    def __init__(self, root: Path | str = Path("/"), run: Runner | None = None) -> None:
        self.root = Path(root)
        if run is None:
            run = subprocess_runner() if self.root == Path("/") else no_commands
        self._run = run

    @property
    def is_real_root(self) -> bool:
        return self.root == Path("/")

    def path(self, p: str) -> Path:
        return self.root / p.lstrip("/")

    def read_text(self, p: str) -> str | None:
        try:
            return self.path(p).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None

    def exists(self, p: str) -> bool:
        return os.path.lexists(self.path(p))

    def glob(self, pattern: str) -> list[str]:
        """Absolute (root-relative) paths matching `pattern`, sorted."""
        base = self.root
        rel = pattern.lstrip("/")
        out = []
        for hit in sorted(base.glob(rel)):
            out.append("/" + str(hit.relative_to(base)))
        return out

    def listdir(self, p: str) -> list[str] | None:
        try:
            return sorted(os.listdir(self.path(p)))
        except OSError:
            return None

    def stat(self, p: str) -> FileStat | None:
        import stat as st

        try:
            s = os.stat(self.path(p))
        except OSError:
            return None
        return FileStat(p, s.st_mode, s.st_uid, s.st_gid, st.S_ISDIR(s.st_mode), st.S_ISCHR(s.st_mode))

    def readlink(self, p: str) -> str | None:
        try:
            return os.readlink(self.path(p))
        except OSError:
            return None

    def run(self, argv: Sequence[str]) -> CommandResult:
        return self._run(argv)
