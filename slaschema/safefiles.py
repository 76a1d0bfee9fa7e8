"""Reading files that an input names: confined, bounded, and never echoed.

A contract can name other files (`topology.inventory`, a check's `params.result`, a
`minimums:` table, history files). Such a path is resolved against the contract's folder and
must stay inside it, symlinks included; a path given on the command line is the user's own
choice and is read where it points. Either way `/proc`, `/sys` and `/dev` are refused, only
regular files are opened (a FIFO or a device would hang or never end), the size is capped,
and a problem names the file and the rule, never the file's contents.

The cap is `DEFAULT_MAX_FILE_BYTES`; `slakit --max-file-size BYTES` or the environment
variable SLAKIT_MAX_FILE_BYTES raise it for one run.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from slaschema.errors import InputError


def _problem(code: str, message: str, **where: Any) -> InputError:
    """`InputError([Problem(code, message, **where)])`. (slaschema.errors is imported only
    here, when a problem is raised: `check_cli_file` runs before the background reading of an
    incident log begins, calculators.log_prefetch, and the errors' module would add 8 ms to that.)"""
    from slaschema.errors import InputError, Problem

    return InputError([Problem(code, message, **where)])


DEFAULT_MAX_FILE_BYTES = 64 * 1024 * 1024
FORBIDDEN_ROOTS = ("/proc", "/sys", "/dev")
_max_file_bytes: int | None = None


def max_file_bytes() -> int:
    if _max_file_bytes is not None:
        return _max_file_bytes
    env = os.environ.get("SLAKIT_MAX_FILE_BYTES", "")
    return int(env) if env.isdigit() and int(env) > 0 else DEFAULT_MAX_FILE_BYTES


def set_max_file_bytes(limit: int | None) -> None:
    global _max_file_bytes
    if limit is not None and limit < 1:
        raise ValueError("the file size limit must be at least 1 byte")
    _max_file_bytes = limit


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def resolve_named(name: str, *, base_dir: Path | str | None, from_cli: bool = False,
                  what: str = "file", field: str | None = None, source: str | None = None,
                  expand_user: bool = True) -> Path:
    """The real path a named file stands for, or InputError when the rules refuse it.

    `base_dir`: the folder of the contract that names the file (relative names are resolved
    there, and the result must stay inside it unless `from_cli`). `source`: the file that
    names it (for the problem's location). A name from the command line starting with `~` is
    the home folder's (`expand_user`; `~user` of an unknown user stays as written, as a shell
    leaves it); a caller that reads the name as written checks it as written."""
    def refuse(code: str, message: str, fix: str) -> InputError:
        return _problem(code, message, file=source, path=field, value=_shown(name), fix=fix)

    if not isinstance(name, str) or not name.strip() or "\x00" in name:
        raise refuse("path_invalid", f"{what}: not a usable file name", "name a file")
    base = Path(base_dir) if base_dir is not None else Path(".")
    p = Path(name)
    if from_cli and expand_user:
        try:
            p = p.expanduser()
        except RuntimeError:                     # no home folder for that user: the name as written
            pass
    if not p.is_absolute():
        p = (Path.cwd() if from_cli else base) / p
    real = os.path.realpath(p)
    for root in FORBIDDEN_ROOTS:
        if _inside(real, root):
            raise refuse("path_forbidden", f"{what}: files under {root} are not read", "name a regular file")
    if not from_cli:
        base_real = os.path.realpath(base)
        if not _inside(real, base_real):
            raise refuse("path_outside_contract",
                         f"{what}: a path named in a contract must stay inside the contract's folder "
                         "(no absolute paths, `..` or symlinks leading out)",
                         "put the file next to the contract, or give it on the command line")
    return Path(real)


def check_cli_file(path: Path | str, what: str = "file") -> None:
    """For readers of a file named on the command line that do their own reading: InputError
    unless it is a regular file outside /proc, /sys and /dev (no FIFO or device to hang on)."""
    # (the reader opens the name as written: a `~` in it is a folder of that name, not the home)
    real = resolve_named(str(path), base_dir=None, from_cli=True, what=what, source=str(path), expand_user=False)
    try:
        st = os.stat(real)
    except OSError:
        return                                   # the caller reports a missing file its own way
    if not stat.S_ISREG(st.st_mode) and not stat.S_ISDIR(st.st_mode):
        raise _problem("not_a_regular_file", f"{what}: not a regular file (FIFO, device or socket)",
                       file=str(path), fix="name a regular file")


def read_named(name: str, *, base_dir: Path | str | None, from_cli: bool = False, what: str = "file",
               field: str | None = None, source: str | None = None, max_bytes: int | None = None) -> bytes:
    """The bytes of a named file, after `resolve_named`'s rules, a regular-file check and the
    size cap. Problems carry the name given, never the contents."""
    path = resolve_named(name, base_dir=base_dir, from_cli=from_cli, what=what, field=field, source=source)
    return read_regular(path, shown=name, what=what, field=field, source=source, max_bytes=max_bytes)


def read_regular(path: Path | str, *, shown: str | None = None, what: str = "file", field: str | None = None,
                 source: str | None = None, max_bytes: int | None = None) -> bytes:
    """Read a regular file (no FIFO, device, socket or folder) of at most `max_bytes`."""
    limit = max_file_bytes() if max_bytes is None else max_bytes
    shown = str(path) if shown is None else shown

    def refuse(code: str, message: str, fix: str, value: object = None) -> InputError:
        return _problem(code, message, file=source or shown, path=field,
                        value=value if value is not None else (_shown(shown) if source else None), fix=fix)

    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise refuse("file_not_found", f"{what}: no such file", "check the path") from None
    except OSError as exc:
        raise refuse("file_unreadable", f"{what}: cannot be read ({exc.strerror})", "check the path and its permissions") from None
    if stat.S_ISDIR(st.st_mode):
        raise refuse("not_a_file", f"{what}: is a folder", "name a file")
    if not stat.S_ISREG(st.st_mode):
        raise refuse("not_a_regular_file", f"{what}: not a regular file (FIFO, device or socket)", "name a regular file")
    if st.st_size > limit:
        raise refuse("file_too_large", f"{what}: {st.st_size:,} bytes; the limit is {limit:,}",
                     "raise it with `slakit --max-file-size BYTES` if the file is right", st.st_size)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise refuse("file_unreadable", f"{what}: cannot be read ({exc.strerror})", "check the path and its permissions") from None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):       # replaced between stat and open
            raise refuse("not_a_regular_file", f"{what}: not a regular file", "name a regular file")
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise refuse("file_too_large", f"{what}: more than {limit:,} bytes",
                     "raise it with `slakit --max-file-size BYTES` if the file is right")
    return data


def decode_utf8(data: bytes, *, shown: str, what: str = "file", field: str | None = None) -> str:
    """UTF-8 text (a BOM is dropped), or `not_utf8` naming the byte offset (not the bytes), or
    the encoding where it is UTF-16 or UTF-32 (`wide_encoding`)."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        wide = wide_encoding(data)
        said = f"{wide[0]} text, not UTF-8" if wide else f"not UTF-8 text ({exc.reason} at byte {exc.start})"
        raise _problem("not_utf8", f"{what}: {said}", file=shown, path=field,
                       fix="save the file as UTF-8" + (f" (iconv -f {wide[1]} -t UTF-8)" if wide else "")) from None


_WIDE_BOMS = ((b"\xff\xfe\x00\x00", "UTF-32LE", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32BE", "UTF-32"),
              (b"\xff\xfe", "UTF-16LE", "UTF-16"), (b"\xfe\xff", "UTF-16BE", "UTF-16"))


def wide_encoding(data: bytes) -> tuple[str, str] | None:
    """(what to call it, the name iconv takes) of a log written in UTF-16 or UTF-32, known by
    its byte-order mark or, without one, by its first line (at least two bytes in five NUL,
    where ASCII text in UTF-16 has one in two); None for anything else. Read as UTF-8 such a
    file is one column of NULs and letters (an incident log's every column reported missing),
    or bytes that are not UTF-8 at offset 0, neither of which says what is wrong."""
    for bom, name, iconv in _WIDE_BOMS:
        if data.startswith(bom):
            return f"{name} (with a byte-order mark)", iconv
    first = data[:4096].split(b"\n", 1)[0]
    if len(first) < 8 or first.count(0) * 5 < len(first) * 2:
        return None
    if first[1:4] == b"\0\0\0":
        name = "UTF-32LE"
    elif first[:3] == b"\0\0\0":
        name = "UTF-32BE"
    else:
        name = "UTF-16LE" if first[1] == 0 else "UTF-16BE"
    return name, name




def _shown(name: str) -> str:
    from slaschema.textsafe import cut

    return cut("".join(ch if ch.isprintable() else "?" for ch in str(name)), 120)
